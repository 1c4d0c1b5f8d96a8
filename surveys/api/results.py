"""The organizer API's results: estimates, exports and the transparency statement
(registered on :data:`surveys.api.routes.router`)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Status
from ninja.errors import HttpError

from surveys.access import get_survey_for, get_survey_for_results
from surveys.api import schemas
from surveys.api.auth import read_token
from surveys.api.downloads import EXPORT_NEEDS, EXPORTS
from surveys.api.routes import ERRORS, id_path, router, token_owner
from surveys.models import Survey
from surveys.results.estimates import SurveyState
from surveys.results.exports import estimate_rows
from surveys.teams import audit
from surveys.transparency import survey_record
from surveys.webhooks import finite

# -- results ----------------------------------------------------------------------------------


@router.get(
    "/surveys/{survey_id}/estimates", response={200: schemas.EstimatesOut, **ERRORS}, auth=read_token, tags=["results"]
)
def estimates(request: HttpRequest, survey_id: int = id_path()) -> Any:
    """The results page's estimates with their 95 % bands and its verdict ``enough``, one row per
    question version and option (or summary); where ``enough`` is false the page withholds them."""
    survey = get_survey_for_results(token_owner(request), survey_id)
    state = SurveyState.read(survey)
    return {
        "survey_id": survey.pk,
        "round": survey.round_number,
        "level": 0.95,
        "reports": state.reports,
        "signature": state.signature,
        "estimates": [finite(row) for row in estimate_rows(survey)],
    }


@router.get(
    "/surveys/{survey_id}/exports/{name}",
    response={200: Any, 202: schemas.Pending, **ERRORS},
    auth=read_token,
    tags=["results"],
    openapi_extra={"responses": {"200": {"description": "The file", "content": {"application/octet-stream": {}}}}},
)
def export(request: HttpRequest, name: str, survey_id: int = id_path()) -> Any:
    """A download of the results page's exports: ``estimates.csv``, ``estimates.json``, ``reports.csv``,
    ``reports.json`` and the statistics packages' files (``reports.sav``, ``reports.dta``, ``analysis.R``).
    A workspace's viewers may download the estimates only, as on the results page.

    The raw reports are written to a file by a job: until the file holds every report stored so far
    the answer is 202 with ``retry_after`` seconds, and the same request later gets the file."""
    survey = get_survey_for(token_owner(request), survey_id, EXPORT_NEEDS.get(name, "view"))
    writer = EXPORTS.get(name)
    if writer is None:
        raise HttpError(404, "No such export.")
    response = writer(request, survey_id=survey_id)
    if response.status_code == 302:  # raw reports: a job is writing the file (surveys/jobs/)
        pending = {"detail": "A job is writing this export; ask again shortly.", "retry_after": 5}
        return Status(202, pending)
    if response.status_code == 200:  # served (a refusal, 404, logs nothing)
        audit.exported(survey, name)
    return response


@router.get(
    "/surveys/{survey_id}/transparency",
    response={200: schemas.TransparencyOut, **ERRORS},
    auth=read_token,
    tags=["results"],
)
def transparency(request: HttpRequest, survey_id: int = id_path()) -> Any:
    """The transparency statement: every question's client spec in force, its digest, and every version.
    Whoever may read the survey's results may read it (viewers too), as its page: public once the
    survey has opened; a draft's is not (``public`` false) and holds nothing in force yet."""
    survey = get_survey_for_results(token_owner(request), survey_id)
    record = survey_record(survey)
    versions = [
        {
            "question_id": q.question.pk,
            "version": v.version,
            "mechanism": v.mechanism,
            "k": v.k,
            "epsilon": v.epsilon,
            "params": v.params,
            "in_force": v.in_force,
            "retired": v.retired,
            "created_hour": v.created_hour.isoformat(),
        }
        for q in record.questions
        for v in q.versions
    ]
    return {
        "survey_id": survey.pk,
        "status": survey.status,
        "public": survey.status != Survey.Status.DRAFT,
        "digest": record.digest,
        "entries": record.entries,
        "versions": versions,
    }
