"""The audit log: who changed what, written once per request.

:class:`AuditMiddleware` remembers the signed-in organizer for the duration of a request; model
signals note what the request really changed (a survey created, opened, closed, edited or deleted;
a question or matrix added, edited or deleted), so a refused or invalid form logs nothing. Downloads
change nothing and are noted from the URL they were served at (``EXPORT_URLS``). Member changes are
logged by the workspace views with :func:`record`. The entries are written after the response, only
when it succeeded (status below 400), one per survey and action.

Requests of the organizer API (:mod:`surveys.api`) are logged the same way: the token's check
(:func:`acting_with_token`) names the token's owner as the actor and keeps the token's name (never
its secret) on each entry, so the log tells a script's changes from its owner's clicks. The API's
downloads are noted by its export route (:func:`exported`) once a file is served.

Respondents' pages never log (``RESPONDENT_URLS``), and nothing about respondents is ever logged.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from django.db.models.signals import post_delete, post_init, post_save
from django.http import HttpRequest, HttpResponse

from surveys.models import Matrix, Question, Survey
from surveys.teams.models import AuditEntry, Workspace

Action = AuditEntry.Action

#: URL names whose successful GET is a download worth logging.
EXPORT_URLS = {
    "export_estimates", "export_reports", "export_synthetic", "export_crosstab", "export_analysis",
    "export_sav", "export_dta", "export_r", "export_workbook",
}  # fmt: skip
#: URL names that respondents use: a signed-in organizer answering a survey logs nothing.
RESPONDENT_URLS = {"respond", "submit", "transparency", "public_results", "public_crosstab", "ledger"}


@dataclass
class _Request:
    actor: Any = None
    #: The name of the API token the request was made with ("" for the pages).
    api_token: str = ""
    #: (survey id, action) -> (workspace id, survey title, details)
    changes: dict[tuple[int, str], tuple[int | None, str, list[str]]] = field(default_factory=dict)


_current: ContextVar[_Request | None] = ContextVar("audit_request", default=None)


def record(
    actor: Any, workspace: Workspace | None, action: str, detail: str = "", survey: Survey | None = None, role: str = ""
) -> None:
    """Log one entry now (member changes, moves)."""
    AuditEntry.objects.create(
        role=role,
        workspace=workspace,
        survey=survey,
        survey_title=survey.title if survey else "",
        actor=actor,
        actor_name=actor.get_username(),
        action=action,
        detail=detail[:300],
    )


def _note(
    survey_id: int, workspace_id: int | None, title: str, action: str, detail: str = "", current: _Request | None = None
) -> None:
    current = current or _current.get()
    if current is None or current.actor is None:
        return
    _, _, details = current.changes.setdefault((survey_id, action), (workspace_id, title, []))
    if detail and detail not in details:
        details.append(detail)


def _entries(current: _Request) -> list[AuditEntry]:
    deleted = {survey_id for survey_id, action in current.changes if action == Action.DELETED}
    transitions = {
        survey_id
        for survey_id, action in current.changes
        if action in (Action.CREATED, Action.OPENED, Action.CLOSED, Action.DELETED)
    }
    entries = []
    for (survey_id, action), (workspace_id, title, details) in current.changes.items():
        if survey_id in deleted and action != Action.DELETED:
            continue  # the deletion's cascade, not edits
        if survey_id in transitions and action == Action.EDITED:
            continue  # opening or creating saves questions too
        entries.append(
            AuditEntry(
                workspace_id=workspace_id,
                survey_id=None if survey_id in deleted else survey_id,
                survey_title=title,
                actor=current.actor,
                actor_name=current.actor.get_username(),
                action=action,
                detail="; ".join(details)[:300],
                api_token=current.api_token,
            )
        )
    return entries


def acting_with_token(user: Any, token_name: str) -> None:
    """This request was authenticated by ``user``'s API token named ``token_name``: log its changes as theirs."""
    current = _current.get()
    if current is not None:
        current.actor = user
        current.api_token = token_name


def exported(survey: Survey, file_name: str) -> None:
    """Note a download served outside the pages' export URLs (the organizer API's)."""
    _note(survey.pk, survey.workspace_id, survey.title, Action.EXPORTED, file_name)


def edited(survey: Survey, detail: str) -> None:
    """Note an edit the model signals do not see (a survey's languages and translations, by the API)."""
    _note(survey.pk, survey.workspace_id, survey.title, Action.EDITED, detail)


class AuditMiddleware:
    """Collects a signed-in organizer's changes during a request and logs them if it succeeded."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        current = _Request()
        token = _current.set(current)
        try:
            response = self.get_response(request)
        finally:
            _current.reset(token)
        if current.actor is None or response.status_code >= 400:
            return response
        match = request.resolver_match
        if match is not None and match.url_name in EXPORT_URLS and "survey_id" in match.kwargs:
            survey = Survey.objects.filter(pk=match.kwargs["survey_id"]).values("workspace_id", "title").first()
            if survey is not None:
                detail = request.path.rsplit("/", 1)[-1]
                _note(
                    match.kwargs["survey_id"], survey["workspace_id"], survey["title"], Action.EXPORTED, detail, current
                )
        AuditEntry.objects.bulk_create(_entries(current))
        return response

    def process_view(self, request: HttpRequest, view: Any, args: Any, kwargs: Any) -> None:
        current = _current.get()
        match = request.resolver_match
        if current is None or (match is not None and match.url_name in RESPONDENT_URLS):
            return
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            current.actor = user


# -- what changed -------------------------------------------------------------------------------


def _remember_status(sender: Any, instance: Survey, **_: Any) -> None:
    instance._audit_status = instance.status  # type: ignore[attr-defined]


def _survey_saved(sender: Any, instance: Survey, created: bool, **_: Any) -> None:
    before = getattr(instance, "_audit_status", None)
    if created:
        action = Action.CREATED
    elif before != instance.status and instance.status == Survey.Status.OPEN:
        action = Action.OPENED
    elif before != instance.status and instance.status == Survey.Status.CLOSED:
        action = Action.CLOSED
    else:
        action = Action.EDITED
    _note(instance.pk, instance.workspace_id, instance.title, action)
    instance._audit_status = instance.status  # type: ignore[attr-defined]


def _survey_deleted(sender: Any, instance: Survey, **_: Any) -> None:
    _note(instance.pk, instance.workspace_id, instance.title, Action.DELETED)


def _part_changed(sender: Any, instance: Question | Matrix, **_: Any) -> None:
    current = _current.get()
    if current is None or current.actor is None:
        return
    survey = Survey.objects.filter(pk=instance.survey_id).values("workspace_id", "title").first()
    if survey is None:
        return
    text = instance.text if isinstance(instance, Question) else instance.title
    _note(instance.survey_id, survey["workspace_id"], survey["title"], Action.EDITED, text[:80])


def connect() -> None:
    post_init.connect(_remember_status, sender=Survey, dispatch_uid="audit_status")
    post_save.connect(_survey_saved, sender=Survey, dispatch_uid="audit_survey_saved")
    post_delete.connect(_survey_deleted, sender=Survey, dispatch_uid="audit_survey_deleted")
    for model in (Question, Matrix):
        post_save.connect(_part_changed, sender=model, dispatch_uid=f"audit_{model.__name__}_saved")
        post_delete.connect(_part_changed, sender=model, dispatch_uid=f"audit_{model.__name__}_deleted")
