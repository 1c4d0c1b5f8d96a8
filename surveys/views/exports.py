"""The organizer's downloads: estimates (CSV, JSON), every stored report and the workbook (files a
job writes, :mod:`surveys.results.export_files`), synthetic records.

Only the raw-report export reads every report, in a job; the rest come from the running tallies.
CSV files start with a UTF-8 byte-order mark, so that Excel shows Korean text as written.
"""

from __future__ import annotations

import csv
import io

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods

from surveys.access import get_survey_for, get_survey_for_results
from surveys.http import HtmxHttpRequest
from surveys.jobs import queue
from surveys.jobs.records import Job
from surveys.models import Question, Survey
from surveys.replica import reads_results
from surveys.responding.versions import survey_version
from surveys.results.estimates import SurveyState, synthetic
from surveys.results.export_files import FORMATS, download_name, fresh_export
from surveys.results.exports import (
    CSV_BOM,
    csv_stream,
    declared_pairs,
    estimate_rows,
    estimate_table,
    tally_exports,
)


@login_required
@require_GET
@reads_results
def export_estimates(request: HttpRequest, survey_id: int, fmt: str) -> HttpResponse:
    survey = get_survey_for_results(request.user, survey_id)
    if fmt == "json":
        payload = {
            "survey": survey.title,
            "round": survey.round_number,
            "level": 0.95,
            "estimates": list(estimate_rows(survey)),
            **tally_exports(survey),
            "declared_pairs": declared_pairs(survey),
        }
        response: HttpResponse = JsonResponse(payload)
    else:  # the byte-order mark first: Excel reads the file as UTF-8 (Korean intact) only with it
        text = "".join(csv_stream(estimate_table(survey)))
        response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="survey-{survey.pk}-estimates.{fmt}"'
    return response


@login_required
@require_GET
def export_reports(request: HttpRequest, survey_id: int, fmt: str) -> HttpResponseBase:
    """Every stored report (CSV, JSON) or the workbook (XLSX: estimates and reports), as a file a job wrote.

    The newest export is sent if it holds every report stored so far; otherwise a job is asked to
    write one (one at a time per survey and format) and the organizer is sent to the exports page,
    which shows its progress and offers the file when it is done. The request never reads the reports.
    """
    survey = get_survey_for(request.user, survey_id, "export")
    ready = fresh_export(survey, fmt)
    if ready is None:
        start_export(survey, fmt)
        ready = fresh_export(survey, fmt)  # done already only with the synchronous transport (tests)
    if ready is not None:
        return send_export(ready)
    return redirect("exports", survey.pk)


def start_export(survey: Survey, fmt: str) -> Job:
    """The survey's export job of this format under way, or a new one."""
    return queue.enqueue("export", survey, key=f"export:{survey.pk}:{fmt}", params={"format": fmt})


def send_export(job: Job) -> FileResponse:
    """A finished export's file, streamed from storage."""
    assert job.survey_id is not None
    fmt = job.params["format"]
    response = FileResponse(job.file.open("rb"), as_attachment=True, filename=download_name(job.survey_id, fmt))
    response["Content-Type"] = FORMATS[fmt][1]
    return response


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def exports_page(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    """The exports of a survey: each format's newest file, its age and expiry, and a job's progress.

    POST (``format``) asks for a new export. While a job runs, the list polls (htmx) every two seconds.
    """
    survey = get_survey_for(request.user, survey_id, "export")
    if request.method == "POST":
        fmt = request.POST.get("format", "")
        if fmt not in FORMATS:
            raise Http404
        start_export(survey, fmt)
        messages.success(request, _("Export started. This page shows its progress."))
        return redirect("exports", survey.pk)
    rows = []
    for fmt in FORMATS:
        jobs = Job.objects.filter(survey=survey, task="export", params__format=fmt).order_by("-pk")
        live = jobs.filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).first()
        last = jobs.filter(status=Job.Status.DONE).exclude(file="").first()
        if last is not None and last.expires_at and last.expires_at <= timezone.now():
            last = None
        newest = jobs.first()
        failed = newest if newest is not None and newest.status == Job.Status.FAILED else None
        rows.append({"format": fmt, "label": FORMAT_LABELS[fmt], "live": live, "last": last, "failed": failed})
    context = {
        "survey": survey,
        "rows": rows,
        "working": any(row["live"] for row in rows),
        "version": survey_version(survey),
    }
    if request.htmx:
        return render(request, "surveys/exports.html#export-list", context)
    return render(request, "surveys/exports.html", context)


FORMAT_LABELS = {
    "csv": gettext_lazy("Every report (CSV)"),
    "json": gettext_lazy("Every report (JSON)"),
    "xlsx": gettext_lazy("Workbook: estimates and every report (XLSX)"),
}


@login_required
@require_GET
def export_download(request: HttpRequest, survey_id: int, job_id: int) -> HttpResponseBase:
    """One finished export's file, until it expires (then 404)."""
    survey = get_survey_for(request.user, survey_id, "export")
    job = get_object_or_404(Job, pk=job_id, survey=survey, task="export", status=Job.Status.DONE)
    if not job.file or (job.expires_at is not None and job.expires_at <= timezone.now()):
        raise Http404
    return send_export(job)


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
    response = HttpResponse(CSV_BOM + buffer.getvalue(), content_type="text/csv; charset=utf-8")
    name = f"survey-{survey.pk}-question-{question.pk}-v{version}-synthetic.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
