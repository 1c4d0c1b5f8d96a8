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
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404

from surveys.models import Matrix, Question, Survey
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
    roles = dict(
        Membership.objects.filter(workspace_id__in=spaces, user_id=user.pk).values_list("workspace_id", "role")
    )
    staff = STAFF_GRANTS if getattr(user, "is_staff", False) else frozenset()
    granted: dict[int, frozenset[str]] = {}
    for survey in surveys:
        if survey.workspace_id is None:
            own: frozenset[str] = frozenset(NEEDS) if survey.owner_id == user.pk else frozenset()
        else:
            own = GRANTS.get(roles.get(survey.workspace_id, ""), frozenset())
        granted[survey.pk] = own | staff
    return granted


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
