"""The organizer's downloads: estimates (CSV, JSON), every stored report (streamed), synthetic records.

Only the raw-report export reads every report, streaming; the rest come from the running tallies.
"""

from __future__ import annotations

import csv
import io
import json

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from surveys.access import get_survey_for, get_survey_for_results
from surveys.models import Question
from surveys.replica import reads_results
from surveys.results.estimates import SurveyState, synthetic
from surveys.results.exports import (
    ESTIMATE_COLUMNS,
    csv_report_stream,
    declared_pairs,
    estimate_rows,
    json_report_stream,
    tally_exports,
)


@login_required
@require_GET
@reads_results
def export_estimates(request: HttpRequest, survey_id: int, fmt: str) -> HttpResponse:
    survey = get_survey_for_results(request.user, survey_id)
    rows = list(estimate_rows(survey))
    if fmt == "json":
        payload = {
            "survey": survey.title,
            "round": survey.round_number,
            "level": 0.95,
            "estimates": rows,
            **tally_exports(survey),
            "declared_pairs": declared_pairs(survey),
        }
        response: HttpResponse = JsonResponse(payload)
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=ESTIMATE_COLUMNS)
        writer.writeheader()
        writer.writerows({**row, "params": json.dumps(row["params"])} for row in rows)
        response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="survey-{survey.pk}-estimates.{fmt}"'
    return response


@login_required
@require_GET
def export_reports(request: HttpRequest, survey_id: int, fmt: str) -> StreamingHttpResponse:
    survey = get_survey_for(request.user, survey_id, "export")
    if fmt == "json":
        stream = json_report_stream(survey)
        content_type = "application/json"
    else:
        stream = csv_report_stream(survey)
        content_type = "text/csv; charset=utf-8"
    response = StreamingHttpResponse(stream, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="survey-{survey.pk}-reports.{fmt}"'
    return response


@login_required
@require_GET
@reads_results
def export_synthetic(request: HttpRequest, survey_id: int, question_id: int, version: int) -> HttpResponse:
    """Modips synthetic records of one numeric question version as CSV (``record, value``).

    Derived from the randomized reports only (post-processing: no further privacy cost); 404 where
    the page shows none (too few reports, one-bit mechanisms, categorical questions).
    """
    survey = get_survey_for(request.user, survey_id, "export")
    question = get_object_or_404(Question, pk=question_id, survey=survey)
    state = SurveyState.read(survey, [question])
    made = next((synthetic(r) for r in state.results(question) if r.randomization.version == version), None)
    if made is None:
        raise Http404
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["record", "value"])
    writer.writerows((i, repr(float(v))) for i, v in enumerate(made.records, start=1))
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    name = f"survey-{survey.pk}-question-{question.pk}-v{version}-synthetic.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
