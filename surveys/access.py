"""The only way views load a protected survey, question, matrix or workspace for a user.

Each loader takes the *need* the view has (:data:`Need`): ``view`` (results, estimates), ``export``
(record-level downloads: raw reports, synthetic records), ``edit`` (the builder, opening, closing,
invitations, rounds) or ``manage`` (deleting a survey; a workspace's members and audit log).

- A personal survey (no workspace) grants every need to its owner, as before workspaces.
- A survey in a workspace grants what its member's role grants (:data:`GRANTS`): owners everything,
  editors all but ``manage``, viewers only ``view``. Membership is read on every request, so a
  removed member loses access at once.
- Staff may ``view`` and ``export`` every survey (Django admin shows them all anyway), never edit.

Someone who may not do what a view needs gets 404, exactly as if the survey did not exist, so
survey ids reveal nothing.

A results page's 304 and poll load their survey with :func:`get_survey_to_read`: the same rule,
with the survey's row and the reader's membership role taken from the cache
(``murmur:access:<survey>:<user>``) while nothing they depend on has changed. Each entry carries
two tokens it was read under: the survey's (replaced whenever its row is saved, deleted or
updated in bulk: :func:`access_changed`) and every membership's (replaced whenever a membership
is saved or deleted, or surveys move between workspaces). A token is replaced when the change is
made and again once its transaction commits, so an entry read from the database before the commit
is never served after it: a removed member is refused at their next request, as before.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, transaction
from django.db.models import Q, QuerySet
from django.db.models.signals import post_delete, post_save
from django.http import Http404
from django.shortcuts import get_object_or_404

from surveys.models import Matrix, Question, Series, Survey
from surveys.teams.models import Membership, Role, Workspace

Need = Literal["view", "export", "edit", "manage"]
User = AbstractBaseUser | AnonymousUser

NEEDS: tuple[Need, ...] = ("view", "export", "edit", "manage")
GRANTS: dict[str, frozenset[str]] = {
    Role.OWNER: frozenset(NEEDS),
    Role.EDITOR: frozenset({"view", "export", "edit"}),
    Role.VIEWER: frozenset({"view"}),
}
STAFF_GRANTS = frozenset({"view", "export"})


def roles_granting(need: Need) -> list[str]:
    """The workspace roles whose members may do ``need``."""
    if need not in NEEDS:
        raise ValueError(f"unknown need {need!r}")
    return [role for role, grants in GRANTS.items() if need in grants]


def surveys_for(user: User, need: Need) -> QuerySet[Survey]:
    """Every survey ``user`` may do ``need`` on (none for anonymous visitors)."""
    if getattr(user, "is_staff", False) and need in STAFF_GRANTS and user.is_authenticated:
        return Survey.objects.all()
    return surveys_of(user, need)


def surveys_of(user: User, need: Need) -> QuerySet[Survey]:
    """The surveys ``user`` may do ``need`` on as their owner or as a member of their workspace:
    :func:`surveys_for` without staff's grant over every survey, for lists of one's own work (staff
    may open any survey by id; their lists do not hold the whole site)."""
    roles = roles_granting(need)
    if not user.is_authenticated:
        return Survey.objects.none()
    workspaces = Membership.objects.filter(user_id=user.pk, role__in=roles).values("workspace")
    return Survey.objects.filter(Q(workspace__isnull=True, owner=user) | Q(workspace__in=workspaces))


def get_survey_for(user: User, survey_id: int, role: Need = "edit") -> Survey:
    """The survey with this id if ``user`` may do ``role`` on it; else 404."""
    if not user.is_authenticated:
        raise Http404
    return get_object_or_404(surveys_for(user, role), pk=survey_id)


def get_question_for(user: User, survey_id: int, question_id: int, role: Need = "edit") -> Question:
    """A question of a survey on which ``user`` may do ``role``; else 404."""
    survey = get_survey_for(user, survey_id, role)
    return get_object_or_404(Question, pk=question_id, survey=survey)


def get_matrix_for(user: User, survey_id: int, matrix_id: int, role: Need = "edit") -> Matrix:
    """A matrix block of a survey on which ``user`` may do ``role``; else 404."""
    survey = get_survey_for(user, survey_id, role)
    return get_object_or_404(Matrix, pk=matrix_id, survey=survey)


def needs_granted(user: User, survey: Survey) -> frozenset[str]:
    """What ``user`` may do on ``survey`` (for templates choosing which links to show)."""
    return needs_granted_each(user, [survey])[survey.pk]


def needs_granted_each(user: User, surveys: Iterable[Survey]) -> dict[int, frozenset[str]]:
    """What ``user`` may do on each of ``surveys``, by survey id, in one query (for lists)."""
    surveys = list(surveys)
    if not user.is_authenticated:
        return {survey.pk: frozenset() for survey in surveys}
    spaces = {survey.workspace_id for survey in surveys if survey.workspace_id is not None}
    roles: dict[int | None, str] = dict(
        Membership.objects.filter(workspace_id__in=spaces, user_id=user.pk).values_list("workspace_id", "role")
    )
    return {survey.pk: _granted(user, survey, roles.get(survey.workspace_id)) for survey in surveys}


def _granted(user: User, survey: Survey, role: str | None) -> frozenset[str]:
    """The rule itself: the owner of a personal survey, a workspace member's role, staff."""
    if survey.workspace_id is None:
        granted: frozenset[str] = frozenset(NEEDS) if survey.owner_id == user.pk else frozenset()
    else:
        granted = GRANTS.get(role or "", frozenset())
    return granted | (STAFF_GRANTS if getattr(user, "is_staff", False) else frozenset())


# -- the results pages' survey, from the cache -----------------------------------------------------

#: How long an access entry is kept (a replaced token retires it sooner).
ACCESS_SECONDS = 600
MEMBERSHIPS_TOKEN = "murmur:access-token:memberships"


def _survey_token_key(survey_id: int) -> str:
    return f"murmur:access-token:survey:{survey_id}"


def get_survey_to_read(user: User, survey_id: int, also: Sequence[str] = ()) -> tuple[Survey, dict[str, Any]]:
    """The survey if ``user`` may see its results, else 404: :func:`get_survey_for_results`'s rule,
    with the survey's row and ``user``'s role in its workspace read from the cache (one read) while
    both tokens stand (see the module's docstring). The survey returned is for reading, never saving.
    Returned with it: the cache's entries under the keys ``also`` (fetched in the same read)."""
    survey, _granted_needs, found = read_access(user, survey_id, also)
    return survey, found


def read_access(user: User, survey_id: int, also: Sequence[str] = ()) -> tuple[Survey, frozenset[str], dict[str, Any]]:
    """:func:`get_survey_to_read`, with what ``user`` may do on the survey (:func:`needs_granted`, from
    the same cached role): a results page's ETag names it, so a changed role never gets a 304."""
    if not user.is_authenticated:
        raise Http404
    token_keys = [MEMBERSHIPS_TOKEN, _survey_token_key(survey_id)]
    entry_key = f"murmur:access:{survey_id}:{user.pk}"
    found = cache.get_many([*token_keys, entry_key, *also])
    tokens = tuple(found.get(key) for key in token_keys)
    entry: tuple[Any, ...] | None = found.get(entry_key)
    if entry is not None and None not in tokens and entry[0] == tokens:
        survey, role = entry[1], entry[2]
    else:
        # From the primary, never a lagging replica: what is kept must be what was committed.
        survey = Survey.objects.using(DEFAULT_DB_ALIAS).filter(pk=survey_id).first()
        role = None
        if survey is not None and survey.workspace_id is not None:
            role = (
                Membership.objects.using(DEFAULT_DB_ALIAS)
                .filter(workspace_id=survey.workspace_id, user_id=user.pk)
                .values_list("role", flat=True)
                .first()
            )
        if None in tokens:  # made now (none replaces one already there); kept from the next request on
            for key, token in zip(token_keys, tokens, strict=True):
                if token is None:
                    cache.add(key, secrets.token_hex(8), None)
        else:
            cache.set(entry_key, (tokens, survey, role), ACCESS_SECONDS)
    granted = frozenset() if survey is None else _granted(user, survey, role)
    if survey is None or "view" not in granted:
        raise Http404
    return survey, granted, {key: found[key] for key in also if key in found}


def access_changed(survey_id: int | None = None) -> None:
    """Retire the cached access entries of one survey (its row changed) or, with no id, of every
    survey (a membership changed, or surveys moved between workspaces): now, and again once the
    transaction in progress commits (an entry read from the database in between is retired too)."""
    key = MEMBERSHIPS_TOKEN if survey_id is None else _survey_token_key(survey_id)

    def replace() -> None:
        cache.set(key, secrets.token_hex(8), None)

    replace()
    transaction.on_commit(replace)


def _survey_saved(sender: Any, instance: Survey, **_: Any) -> None:
    access_changed(instance.pk)


def _membership_saved(sender: Any, instance: Membership | Series, **_: Any) -> None:
    access_changed()


def connect() -> None:
    """Every save and delete of a survey or a membership retires the access entries it touches, and
    so does deleting a series (its rounds' ``series`` is set to null in bulk); other updates in bulk
    call :func:`access_changed` themselves."""
    post_delete.connect(_membership_saved, sender=Series, dispatch_uid="access_Series_deleted")
    for model, receiver in ((Survey, _survey_saved), (Membership, _membership_saved)):
        post_save.connect(receiver, sender=model, dispatch_uid=f"access_{model.__name__}_saved")
        post_delete.connect(receiver, sender=model, dispatch_uid=f"access_{model.__name__}_deleted")


# -- the names views used before roles (kept: other modules call them) -------------------------


def get_survey_for_owner(user: User, survey_id: int) -> Survey:
    """The survey if ``user`` may edit it; else 404."""
    return get_survey_for(user, survey_id, "edit")


def get_survey_for_results(user: User, survey_id: int) -> Survey:
    """The survey if ``user`` may see its results (members of any role, staff); else 404."""
    return get_survey_for(user, survey_id, "view")


def get_question_for_owner(user: User, survey_id: int, question_id: int) -> Question:
    """A question of a survey that ``user`` may edit; else 404."""
    return get_question_for(user, survey_id, question_id, "edit")


def get_matrix_for_owner(user: User, survey_id: int, matrix_id: int) -> Matrix:
    """A matrix block of a survey that ``user`` may edit; else 404."""
    return get_matrix_for(user, survey_id, matrix_id, "edit")


# -- workspaces ---------------------------------------------------------------------------------


def get_workspace_for(user: User, workspace_id: int, role: Need = "view") -> tuple[Workspace, Membership]:
    """The workspace and ``user``'s membership if their role grants ``role``; else 404.

    ``view``: any member sees the workspace and its surveys; ``edit``: owners and editors add surveys
    to it; ``manage``: owners invite and remove members and read the audit log.
    """
    if not user.is_authenticated:
        raise Http404
    membership = get_object_or_404(
        Membership.objects.select_related("workspace"),
        workspace_id=workspace_id,
        user_id=user.pk,
        role__in=roles_granting(role),
    )
    return membership.workspace, membership


def get_survey_by_share_slug(slug: str) -> Survey:
    """The survey behind a share link, for respondents; drafts are not shared."""
    return get_object_or_404(Survey.objects.exclude(status=Survey.Status.DRAFT), slug=slug)


def get_survey_for_transparency(user: User, slug: str) -> Survey:
    """The survey behind a share link, for its transparency statement: public once it has opened; a
    draft (nothing in force yet) only for whoever may ``view`` it, else 404 as for no survey."""
    survey = get_object_or_404(Survey, slug=slug)
    if survey.status == Survey.Status.DRAFT and "view" not in needs_granted(user, survey):
        raise Http404
    return survey
