"""The organizer API's operations: surveys, questions, lifecycle, rounds, invitations, results.

Every operation loads its survey through :mod:`surveys.access` for the token's owner with the need
its page has (someone else's survey is a 404); the list holds every survey the owner may read
(``view``), each with what the token may do on it, and so does reading one survey by id. Reading its
questions, rounds, invitations and webhooks and changing any of them need ``edit`` (the builder's
pages), deleting it ``manage``, its estimates and transparency statement ``view`` and its raw-report
exports ``export``
(:mod:`surveys.api.results`); tests/surveys/test_api_role_walk.py walks them by role. Changes go
through the same forms and named actions (:mod:`surveys.forms`, :mod:`surveys.actions`), so the API accepts and refuses
exactly what the builder does. Nothing here knows a question kind or a mechanism by name.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.models import User
from django.forms.models import model_to_dict
from django.http import HttpRequest
from django.urls import reverse
from ninja import Path, Router, Status
from ninja.errors import HttpError

from surveys import actions
from surveys.access import (
    NEEDS,
    get_question_for_owner,
    get_survey_for,
    get_survey_for_owner,
    needs_granted,
    needs_granted_each,
    surveys_of,
)
from surveys.api import downloads, schemas
from surveys.api.auth import read_token, write_token
from surveys.forms.matrix import MatrixForm
from surveys.forms.pair import PairForm
from surveys.forms.question import QuestionForm, initial_from_question
from surveys.forms.survey import SurveyForm
from surveys.integrations import ApiToken
from surveys.kinds import options_as_written
from surveys.models import Question, Survey
from surveys.series import rounds

router = Router()

#: Path ids: a database integer (larger ones could not name a row, and SQLite cannot even compare them).
MAX_ID = 2**63 - 1
#: The refusals every operation may answer, all with the same body.
ERRORS: dict[Any, Any] = {frozenset({400, 401, 403, 404, 409, 422, 429}): schemas.Error}


class FormRefused(HttpError):
    """422: the builder's form refused the input; ``fields`` says why, per field."""

    def __init__(self, form: forms.BaseForm, names: dict[str, str] | None = None) -> None:
        names = names or {}
        self.fields = {names.get(f, f): [str(m) for m in errors] for f, errors in form.errors.items()}
        super().__init__(422, "The request was refused; see fields.")


class Conflict(HttpError):
    def __init__(self, message: str) -> None:
        super().__init__(409, message)


def token_owner(request: HttpRequest) -> User:
    token: ApiToken = request.auth  # type: ignore[attr-defined]
    return token.owner


def id_path() -> Any:
    return Path(..., ge=1, le=MAX_ID)


# -- surveys ----------------------------------------------------------------------------------

SURVEY_FIELDS = list(SurveyForm.Meta.fields)


def survey_out(request: HttpRequest, survey: Survey, granted: frozenset[str] | None = None) -> dict[str, Any]:
    """The survey as the API shows it to the token's owner, who may do ``granted`` on it (looked up
    when not given): ``access`` says what, ``exports`` links only the downloads it allows."""
    if granted is None:
        granted = needs_granted(token_owner(request), survey)
    return {
        **model_to_dict(survey, fields=SURVEY_FIELDS),
        "id": survey.pk,
        "status": survey.status,
        "total_epsilon": survey.total_epsilon,
        "created_at": survey.created_at,
        "opened_at": survey.opened_at,
        "round_number": survey.round_number,
        "recurrence": survey.series.recurrence if survey.series is not None else None,
        "share_url": request.build_absolute_uri(survey.get_share_url()),
        "transparency_url": request.build_absolute_uri(reverse("transparency", args=[survey.slug])),
        "results_url": request.build_absolute_uri(survey.get_results_url()),
        "responses": survey.response_count(),
        "access": [need for need in NEEDS if need in granted],
        "exports": downloads.links(request, survey, granted),
    }


def form_data(values: dict[str, Any], lists: dict[str, str] | None = None) -> dict[str, Any]:
    """API values as a form's data: None left out, lists one item a line (``lists``: their form names)."""
    data: dict[str, Any] = {}
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, list):
            if any("\n" in item or "\r" in item for item in value):
                raise HttpError(422, f"{name}: an item may not contain a line break.")
            data[(lists or {}).get(name, name)] = "\n".join(value)
        elif hasattr(value, "isoformat"):
            data[name] = value.isoformat()
        else:
            data[name] = value
    return data


@router.get("/surveys", response={200: list[schemas.SurveyOut], **ERRORS}, auth=read_token, tags=["surveys"])
def list_surveys(request: HttpRequest) -> Any:
    """The surveys the token's owner may read: their own and their workspaces' whatever their role,
    newest first; each says what the token may do on it (``access``) and links its downloads."""
    owner = token_owner(request)
    surveys = list(surveys_of(owner, "view").select_related("series"))
    granted = needs_granted_each(owner, surveys)
    return [survey_out(request, survey, granted[survey.pk]) for survey in surveys]


@router.post("/surveys", response={201: schemas.SurveyOut, **ERRORS}, auth=write_token, tags=["surveys"])
def create_survey(request: HttpRequest, body: schemas.SurveyIn) -> Any:
    """A new draft survey; its settings are checked as the builder's settings form checks them."""
    form = SurveyForm(form_data(body.dict()))
    if not form.is_valid():
        raise FormRefused(form)
    survey = form.save(commit=False)
    survey.owner = token_owner(request)
    survey.save()
    return Status(201, survey_out(request, survey))


@router.get("/surveys/{survey_id}", response={200: schemas.SurveyOut, **ERRORS}, auth=read_token, tags=["surveys"])
def get_survey(request: HttpRequest, survey_id: int = id_path()) -> Any:
    """The survey as ``GET /surveys`` lists it, for whoever may read its results (``view``: any member
    of its workspace, staff); changing it still needs ``edit``."""
    return survey_out(request, get_survey_for(token_owner(request), survey_id, "view"))


@router.patch("/surveys/{survey_id}", response={200: schemas.SurveyOut, **ERRORS}, auth=write_token, tags=["surveys"])
def update_survey(request: HttpRequest, body: schemas.SurveyPatch, survey_id: int = id_path()) -> Any:
    """Change the settings given; the others keep their values. null empties a setting that may be empty
    (``epsilon_cap``: no cap; ``closes_at``: open until closed)."""
    survey = get_survey_for_owner(token_owner(request), survey_id)
    current = model_to_dict(survey, fields=SURVEY_FIELDS)
    form = SurveyForm(form_data({**current, **body.dict(exclude_unset=True)}), instance=survey)
    if not form.is_valid():
        raise FormRefused(form)
    form.save()
    return survey_out(request, survey)


@router.delete("/surveys/{survey_id}", response={204: None, **ERRORS}, auth=write_token, tags=["surveys"])
def delete_survey(request: HttpRequest, survey_id: int = id_path()) -> Any:
    """Delete the survey with its questions, reports and invitations, as the builder's Delete does: only
    its owner, or an owner of its workspace, may (``manage``; an editor's token gets 404)."""
    actions.do_delete_survey(get_survey_for(token_owner(request), survey_id, "manage"))
    return Status(204, None)


def _transition(request: HttpRequest, survey_id: int, action: Any) -> Any:
    survey = get_survey_for_owner(token_owner(request), survey_id)
    try:
        action(survey)
    except actions.LifecycleError as error:
        raise Conflict(str(error)) from None
    survey.refresh_from_db()
    return survey_out(request, survey)


@router.post(
    "/surveys/{survey_id}/open", response={200: schemas.SurveyOut, **ERRORS}, auth=write_token, tags=["lifecycle"]
)
def open_survey(request: HttpRequest, survey_id: int = id_path()) -> Any:
    """Open the survey (409 with the builder's reasons when it cannot open); freezes each randomization."""
    return _transition(request, survey_id, actions.do_open_survey)


@router.post(
    "/surveys/{survey_id}/close", response={200: schemas.SurveyOut, **ERRORS}, auth=write_token, tags=["lifecycle"]
)
def close_survey(request: HttpRequest, survey_id: int = id_path()) -> Any:
    return _transition(request, survey_id, actions.do_close_survey)


# -- questions --------------------------------------------------------------------------------

QUESTION_LISTS = {"options": "options_text", "candidates": "candidates_text"}
FORM_TO_API = {form: api for api, form in QUESTION_LISTS.items()}


def question_out(question: Question) -> dict[str, Any]:
    current = question.current_randomization()
    values = model_to_dict(question, exclude=["survey", "matrix", "pair_first", "pair_second", "series_question"])
    return {
        **values,
        "id": question.pk,
        "matrix_id": question.matrix_id,
        "pair_first_id": question.pair_first_id,
        "pair_second_id": question.pair_second_id,
        "frozen": question.randomization_frozen(),
        "randomization": None
        if current is None
        else {
            "version": current.version,
            "mechanism": current.mechanism,
            "k": current.k,
            "epsilon": current.epsilon,
            "params": current.params,
            "retired": current.retired,
        },
    }


@router.get(
    "/surveys/{survey_id}/questions",
    response={200: list[schemas.QuestionOut], **ERRORS},
    auth=read_token,
    tags=["questions"],
)
def list_questions(request: HttpRequest, survey_id: int = id_path()) -> Any:
    survey = get_survey_for_owner(token_owner(request), survey_id)
    return [question_out(q) for q in survey.questions.all()]


@router.post(
    "/surveys/{survey_id}/questions",
    response={201: schemas.QuestionOut, **ERRORS},
    auth=write_token,
    tags=["questions"],
)
def add_question(request: HttpRequest, body: schemas.QuestionIn, survey_id: int = id_path()) -> Any:
    """Add a question of any kind the builder offers, checked by the builder's form: its options or range,
    its epsilon against the survey's cap, and its mechanism ("auto": the advisor's lowest-error choice)."""
    survey = get_survey_for_owner(token_owner(request), survey_id)
    values = body.dict()
    values["options"] = options_as_written(body.kind, body.options, body.prefer_not_to_say, None)
    form = QuestionForm(form_data(values, QUESTION_LISTS), survey=survey)
    if not form.is_valid():
        raise FormRefused(form, FORM_TO_API)
    return Status(201, question_out(actions.do_add_question(survey, form.cleaned_data)))


@router.get(
    "/surveys/{survey_id}/questions/{question_id}",
    response={200: schemas.QuestionOut, **ERRORS},
    auth=read_token,
    tags=["questions"],
)
def get_question(request: HttpRequest, survey_id: int = id_path(), question_id: int = id_path()) -> Any:
    return question_out(get_question_for_owner(token_owner(request), survey_id, question_id))


@router.patch(
    "/surveys/{survey_id}/questions/{question_id}",
    response={200: schemas.QuestionOut, **ERRORS},
    auth=write_token,
    tags=["questions"],
)
def update_question(
    request: HttpRequest,
    body: schemas.QuestionPatch,
    survey_id: int = id_path(),
    question_id: int = id_path(),
) -> Any:
    """Change the fields given; null empties one (``bins``: estimate the mean). Once reports froze its
    randomization, only the wording may change."""
    question = get_question_for_owner(token_owner(request), survey_id, question_id)
    data = form_data(initial_from_question(question))
    changes = body.dict(exclude_unset=True)
    if changes.get("options"):  # read back with its "Prefer not to say" last: given back so, it is Murmur's
        offers = changes.get("prefer_not_to_say")
        offers = question.prefer_not_to_say if offers is None else offers
        kind = changes.get("kind") or question.kind
        changes["options"] = options_as_written(kind, changes["options"], offers, question)
    for name in (name for name, value in changes.items() if value is None):
        data.pop(QUESTION_LISTS.get(name, name), None)
    data.update(form_data(changes, QUESTION_LISTS))
    form = QuestionForm(data, survey=question.survey, question=question)
    if form.is_valid():
        try:
            actions.do_update_question(question, form.cleaned_data)
        except actions.LifecycleError as error:
            raise Conflict(str(error)) from None
        return question_out(question)
    raise FormRefused(form, FORM_TO_API)


@router.delete(
    "/surveys/{survey_id}/questions/{question_id}", response={204: None, **ERRORS}, auth=write_token, tags=["questions"]
)
def delete_question(request: HttpRequest, survey_id: int = id_path(), question_id: int = id_path()) -> Any:
    """Delete a question without reports (409 once it has some: close the survey instead)."""
    question = get_question_for_owner(token_owner(request), survey_id, question_id)
    try:
        actions.do_delete_question(question)
    except actions.LifecycleError as error:
        raise Conflict(str(error)) from None
    return Status(204, None)


@router.post(
    "/surveys/{survey_id}/matrices",
    response={201: list[schemas.QuestionOut], **ERRORS},
    auth=write_token,
    tags=["questions"],
)
def add_matrix(request: HttpRequest, body: schemas.MatrixIn, survey_id: int = id_path()) -> Any:
    """A matrix block: one question per item on the shared options, each with this epsilon."""
    survey = get_survey_for_owner(token_owner(request), survey_id)
    form = MatrixForm(form_data(body.dict(), {"items": "items_text", "options": "options_text"}), survey=survey)
    if not form.is_valid():
        raise FormRefused(form, {"items_text": "items", "options_text": "options"})
    matrix = actions.do_add_matrix(survey, form.cleaned_data["title"], form.cleaned_data["items"])
    return Status(201, [question_out(q) for q in matrix.items.all()])


@router.post(
    "/surveys/{survey_id}/pairs", response={201: schemas.QuestionOut, **ERRORS}, auth=write_token, tags=["questions"]
)
def declare_pair(request: HttpRequest, body: schemas.PairIn, survey_id: int = id_path()) -> Any:
    """Ask two choice questions jointly: one randomized report over their combinations, one epsilon."""
    survey = get_survey_for_owner(token_owner(request), survey_id)
    form = PairForm(form_data(body.dict()), survey=survey)
    if not form.is_valid():
        raise FormRefused(form)
    data = form.cleaned_data
    return Status(
        201, question_out(actions.do_declare_pair(data["first_question"], data["second_question"], data["pair"]))
    )


# -- rounds -----------------------------------------------------------------------------------


def rounds_out(survey: Survey) -> dict[str, Any]:
    series = survey.series
    return {
        "recurrence": series.recurrence if series is not None else None,
        "next_round_at": series.next_round_at if series is not None else None,
        "rounds": [
            {"id": s.pk, "round_number": s.round_number, "status": s.status, "opened_at": s.opened_at}
            for s in rounds.rounds_of(survey)
        ],
    }


@router.get(
    "/surveys/{survey_id}/rounds", response={200: schemas.RoundsOut, **ERRORS}, auth=read_token, tags=["rounds"]
)
def list_rounds(request: HttpRequest, survey_id: int = id_path()) -> Any:
    """The survey's series, round by round (the survey alone when it does not recur)."""
    return rounds_out(get_survey_for_owner(token_owner(request), survey_id))


@router.put(
    "/surveys/{survey_id}/recurrence", response={200: schemas.RoundsOut, **ERRORS}, auth=write_token, tags=["rounds"]
)
def set_recurrence(request: HttpRequest, body: schemas.RecurrenceIn, survey_id: int = id_path()) -> Any:
    """Make the survey recurring (round 1 of a series), or change when its next rounds open."""
    survey = get_survey_for_owner(token_owner(request), survey_id)
    try:
        rounds.do_make_recurring(survey, body.recurrence)
    except actions.LifecycleError as error:
        raise Conflict(str(error)) from None
    survey.refresh_from_db()
    return rounds_out(survey)


@router.post(
    "/surveys/{survey_id}/rounds", response={201: schemas.SurveyOut, **ERRORS}, auth=write_token, tags=["rounds"]
)
def open_next_round(request: HttpRequest, survey_id: int = id_path()) -> Any:
    """Close the latest round and open the next, a copy with the same frozen randomizations."""
    survey = get_survey_for_owner(token_owner(request), survey_id)
    try:
        new_round = rounds.do_open_next_round(survey)
    except actions.LifecycleError as error:
        raise Conflict(str(error)) from None
    return Status(201, survey_out(request, new_round))
