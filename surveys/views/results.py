"""Results readers' views: the dashboard, per-question results, exports, public results.

Owners see their surveys' results and staff see all (:func:`surveys.access.get_survey_for_results`);
everyone else gets 404. Reading results costs O(number of options) per question: estimates come
from the running tallies; only the raw-report export reads every report, streaming.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from surveys import charts
from surveys import results as stored
from surveys.access import get_survey_by_share_slug, get_survey_for_results
from surveys.models import Question, Report, Survey
from surveys.results import ESTIMATE_KINDS, QuestionResult, question_result, tally_signature

DASHBOARD = "surveys/results.html"


def estimate_kind(request: HttpRequest) -> str:
    kind = request.GET.get("estimate", "consistent")
    return kind if kind in ESTIMATE_KINDS else "consistent"


def result_view(result: QuestionResult, kind: str) -> dict[str, Any]:
    """What the shared result card shows for one question."""
    view: dict[str, Any] = {"result": result, "question": result.question, "rows": [], "chart": ""}
    estimate = result.estimate(kind)  # type: ignore[arg-type]
    if estimate is None or not result.enough:
        return view
    low, high = estimate.confidence_interval(0.95)
    view["chart"] = charts.estimate_bars(result.question.options, estimate.proportions, low, high)
    view["rows"] = [
        {
            "label": label,
            "estimate": estimate.proportions[i],
            "standard_error": estimate.standard_errors[i],
            "low": low[i],
            "high": high[i],
            "raw": int(result.raw_counts[i]),
        }
        for i, label in enumerate(result.question.options)
    ]
    return view


def over_time(survey: Survey) -> tuple[int, str]:
    hourly = list(survey.hourly_responses.values_list("hour", "count"))
    total = sum(count for _, count in hourly)
    chart = charts.responses_over_time([h for h, _ in hourly], [c for _, c in hourly]) if hourly else ""
    return total, chart


def dashboard_context(survey: Survey, kind: str) -> dict[str, Any]:
    # The signature is read before the data it stands for: a submission that commits in between
    # makes the page newer than its signature, so the next poll re-renders instead of answering
    # 204 forever over a stale page.
    signature = tally_signature(survey)
    responses, responses_chart = over_time(survey)
    return {
        "survey": survey,
        "kind": kind,
        "cards": [result_view(r, kind) for r in stored.survey_results(survey)],
        "responses": responses,
        "responses_chart": responses_chart,
        "signature": signature,
        "live": survey.status == Survey.Status.OPEN,
        "poll_seconds": settings.RESULTS_POLL_SECONDS,
    }


@login_required
@require_GET
def survey_results(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = get_survey_for_results(request.user, survey_id)
    kind = estimate_kind(request)
    if request.htmx and request.GET.get("since") == tally_signature(survey):
        return HttpResponse(status=204)  # nothing new: htmx keeps the page as it is
    context = dashboard_context(survey, kind)
    if request.htmx:
        return render(request, f"{DASHBOARD}#results-body", context)
    return render(request, DASHBOARD, context)


@login_required
@require_GET
def question_results(request: HttpRequest, survey_id: int, question_id: int) -> HttpResponse:
    survey = get_survey_for_results(request.user, survey_id)
    question = get_object_or_404(Question, pk=question_id, survey=survey)
    kind = estimate_kind(request)
    signature = tally_signature(survey)  # before the data: see dashboard_context
    if request.htmx and request.GET.get("since") == signature:
        return HttpResponse(status=204)
    result = question_result(question)
    card = result_view(result, kind) if result is not None else {"question": question, "result": None}
    context = {"survey": survey, "kind": kind, "card": card, "signature": signature}
    context["live"] = survey.status == Survey.Status.OPEN
    context["poll_seconds"] = settings.RESULTS_POLL_SECONDS
    if request.htmx:
        return render(request, "surveys/question_results.html#question-body", context)
    return render(request, "surveys/question_results.html", context)


@require_GET
def public_results(request: HttpRequest, slug: str) -> HttpResponse:
    survey = get_survey_by_share_slug(slug)
    if not survey.public_results:
        raise Http404
    context = dashboard_context(survey, "consistent")
    context["public"] = True
    return render(request, "surveys/public_results.html", context)


# -- exports ----------------------------------------------------------------------------------

ESTIMATE_COLUMNS = [
    "question_id",
    "question",
    "version",
    "mechanism",
    "k",
    "epsilon",
    "params",
    "n",
    "option_index",
    "option",
    "raw_count",
    "unbiased",
    "standard_error",
    "unbiased_low",
    "unbiased_high",
    "consistent",
    "consistent_low",
    "consistent_high",
    "consistent_method",
]


def estimate_rows(survey: Survey) -> Iterator[dict[str, Any]]:
    for result in stored.survey_results(survey):
        r = result.randomization
        unbiased, consistent = result.unbiased, result.consistent
        if unbiased is None or consistent is None:
            continue
        u_low, u_high = unbiased.confidence_interval(0.95)
        c_low, c_high = consistent.confidence_interval(0.95)
        for i, label in enumerate(result.question.options):
            yield {
                "question_id": result.question.pk,
                "question": result.question.text,
                "version": r.version,
                "mechanism": r.mechanism,
                "k": r.k,
                "epsilon": r.epsilon,
                "params": r.params,
                "n": result.n,
                "option_index": i,
                "option": label,
                "raw_count": int(result.raw_counts[i]),
                "unbiased": float(unbiased.proportions[i]),
                "standard_error": float(unbiased.standard_errors[i]),
                "unbiased_low": float(u_low[i]),
                "unbiased_high": float(u_high[i]),
                "consistent": float(consistent.proportions[i]),
                "consistent_low": float(c_low[i]),
                "consistent_high": float(c_high[i]),
                "consistent_method": consistent.method,
            }


@login_required
@require_GET
def export_estimates(request: HttpRequest, survey_id: int, fmt: str) -> HttpResponse:
    survey = get_survey_for_results(request.user, survey_id)
    rows = list(estimate_rows(survey))
    if fmt == "json":
        response: HttpResponse = JsonResponse({"survey": survey.title, "level": 0.95, "estimates": rows})
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=ESTIMATE_COLUMNS)
        writer.writeheader()
        writer.writerows({**row, "params": json.dumps(row["params"])} for row in rows)
        response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="survey-{survey.pk}-estimates.{fmt}"'
    return response


def randomization_records(survey: Survey) -> list[dict[str, Any]]:
    records = []
    for question in survey.questions.all():
        for r in question.randomizations.all():
            records.append(
                {
                    "question_id": question.pk,
                    "question": question.text,
                    "options": question.options,
                    "version": r.version,
                    "mechanism": r.mechanism,
                    "k": r.k,
                    "epsilon": r.epsilon,
                    "params": r.params,
                    "client_spec": r.build_mechanism().client_spec(),
                }
            )
    return records


def report_records(survey: Survey) -> Iterator[dict[str, Any]]:
    """Every stored report, decoded to its JSON form, in submission order (streamed)."""
    mechanisms: dict[int, Any] = {}
    reports = (
        Report.objects.filter(submission__survey=survey)
        .order_by("submission_id", "question_id")
        .values_list("submission_id", "submission__received_hour", "question_id", "randomization_id", "packed")
    )
    versions = {r.pk: r for q in survey.questions.all() for r in q.randomizations.all()}
    for submission_id, hour, question_id, randomization_id, packed in reports.iterator(chunk_size=5000):
        randomization = versions[randomization_id]
        if randomization_id not in mechanisms:
            mechanisms[randomization_id] = randomization.build_mechanism()
        yield {
            "submission": submission_id,
            "received_hour": hour.isoformat(),
            "question_id": question_id,
            "version": randomization.version,
            "report": mechanisms[randomization_id].unpack_report(bytes(packed)),
        }


@login_required
@require_GET
def export_reports(request: HttpRequest, survey_id: int, fmt: str) -> StreamingHttpResponse:
    survey = get_survey_for_results(request.user, survey_id)
    if fmt == "json":
        stream = _json_report_stream(survey)
        content_type = "application/json"
    else:
        stream = _csv_report_stream(survey)
        content_type = "text/csv; charset=utf-8"
    response = StreamingHttpResponse(stream, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="survey-{survey.pk}-reports.{fmt}"'
    return response


def _json_report_stream(survey: Survey) -> Iterator[str]:
    head = {"survey": survey.title, "randomizations": randomization_records(survey)}
    yield json.dumps(head)[:-1] + ', "reports": ['
    for i, record in enumerate(report_records(survey)):
        yield ("," if i else "") + json.dumps(record, separators=(",", ":"))
    yield "]}"


def _csv_report_stream(survey: Survey) -> Iterator[str]:
    versions = {(r["question_id"], r["version"]): r for r in randomization_records(survey)}
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(
        ["submission", "received_hour", "question_id", "version", "mechanism", "k", "epsilon", "params", "report"]
    )
    for record in report_records(survey):
        r = versions[(record["question_id"], record["version"])]
        writer.writerow(
            [
                record["submission"],
                record["received_hour"],
                record["question_id"],
                record["version"],
                r["mechanism"],
                r["k"],
                r["epsilon"],
                json.dumps(r["params"]),
                json.dumps(record["report"], separators=(",", ":")),
            ]
        )
        if buffer.tell() > 64_000:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()
