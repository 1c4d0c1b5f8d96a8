"""Export files, written by a job: every raw report (CSV, JSON) or a workbook (XLSX), in bounded memory.

The job reads the reports a page of submissions at a time (:mod:`surveys.results.report_text`:
keyset pagination, no server-side cursor, so behind PgBouncer too; CSV and JSON spelled a page at
a time from text compiled per randomization) and writes them to a partial
file, then stores it (Django's default file storage, under ``exports/``) for the organizer to
download until it expires (``EXPORT_EXPIRY_HOURS``). Memory holds one page and the writer's
buffer, whatever n; openpyxl writes the workbook in its write-only mode, which streams rows to disk.

Idempotent: the partial file's name is the job's, so a retried job (its worker killed mid-run)
starts it again from empty, and the stored file replaces any the attempt before may have saved.
A file records the survey's version (:mod:`surveys.responding.versions`) it was made at; the
download page offers it while no newer report has arrived, and a new export otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.utils import timezone

from surveys.jobs import guard
from surveys.jobs.records import Job
from surveys.responding.versions import survey_version
from surveys.results.estimates import SurveyState
from surveys.results.exports import (
    Column,
    Table,
    csv_pieces,
    estimate_table,
    json_report_pieces,
    report_table,
)

#: What an export job can write, by the format's name: its file extension and content type.
FORMATS = {
    "csv": ("csv", "text/csv; charset=utf-8"),
    "json": ("json", "application/json"),
    "xlsx": ("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
}
#: Rows of data per worksheet: Excel's limit (1,048,576) less the header row.
SHEET_ROWS = 1_048_575


def download_name(survey_id: int, fmt: str) -> str:
    return f"survey-{survey_id}.xlsx" if fmt == "xlsx" else f"survey-{survey_id}-reports.{fmt}"


def run_export(job: Job, progress: Any) -> dict[str, Any]:
    """The ``export`` task: write the survey's reports in ``job.params["format"]`` and store the file."""
    guard.off_request_path("The raw-report export")
    fmt = job.params["format"]
    extension, _content_type = FORMATS[fmt]
    survey = job.survey
    assert survey is not None
    version = survey_version(survey)
    total = SurveyState.read(survey).reports
    partial = Path(settings.MEDIA_ROOT) / "exports" / "partial" / f"job-{job.pk}.{extension}"
    partial.parent.mkdir(parents=True, exist_ok=True)
    written = 0

    def counting(rows: Iterator[Any]) -> Iterator[Any]:
        nonlocal written
        for row in rows:
            written += 1
            if written % 1000 == 0:
                progress(written, total)
            yield row

    progress(0, total, force=True)
    if fmt == "xlsx":
        table = report_table(survey)
        write_workbook(partial, [estimate_table(survey), Table(table.name, table.columns, counting(iter(table.rows)))])
    else:
        with partial.open("w", encoding="utf-8", newline="") as out:
            pieces = csv_pieces(report_table(survey)) if fmt == "csv" else json_report_pieces(survey)
            for text, count in pieces:
                out.write(text)
                written += count
                progress(written, total)
    progress(total, total, force=True)
    name = f"exports/survey-{survey.pk}-job-{job.pk}.{extension}"
    if default_storage.exists(name):  # a retry after the previous attempt stored its file
        default_storage.delete(name)
    with partial.open("rb") as stored:
        job.file.name = default_storage.save(name, File(stored, name=Path(name).name))
    size = partial.stat().st_size
    partial.unlink()
    job.expires_at = timezone.now() + timedelta(hours=settings.EXPORT_EXPIRY_HOURS)
    return {"format": fmt, "version": version, "reports": total, "bytes": size}


def write_workbook(path: Path, tables: list[Table]) -> None:
    """Tables as worksheets of an XLSX workbook, in openpyxl's write-only mode (rows go to disk as
    they come); a table longer than a sheet continues on "reports 2", "reports 3", ..."""
    from openpyxl import Workbook

    workbook = Workbook(write_only=True)
    for table in tables:
        sheet, rows, part = workbook.create_sheet(table.name), 0, 1
        sheet.append(table.names)
        for row in table.rows:
            if rows == SHEET_ROWS:
                part += 1
                sheet, rows = workbook.create_sheet(f"{table.name} {part}"), 0
                sheet.append(table.names)
            sheet.append([sheet_cell(v, c) for v, c in zip(row, table.columns, strict=True)])
            rows += 1
    workbook.save(path)


def sheet_cell(value: Any, column: Column) -> Any:
    """A value as a worksheet cell: JSON text for lists and mappings, numbers and text as they are."""
    if value is None:
        return None
    if column.type == "json" or isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return value


def fresh_export(survey: Any, fmt: str) -> Job | None:
    """The newest finished export of this format still downloadable and as new as the survey's reports."""
    job = (
        Job.objects.filter(survey=survey, task="export", params__format=fmt, status=Job.Status.DONE)
        .order_by("-pk")
        .first()
    )
    if job is None or not job.file or (job.expires_at and job.expires_at <= timezone.now()):
        return None
    return job if job.result.get("version") == survey_version(survey) else None


#: Finished jobs other than exports (refreshes, mail, the schedule's) are kept this long, then deleted.
KEEP_FINISHED = timedelta(days=1)


def run_expire_exports(job: Job, progress: Any) -> dict[str, Any]:
    """The hourly ``expire_exports`` task: delete the files of exports past their expiry, and the
    rows of other jobs finished more than :data:`KEEP_FINISHED` ago (a live survey queues a
    results refresh every few seconds)."""
    expired = Job.objects.filter(task="export", expires_at__lte=timezone.now()).exclude(file="")
    count = 0
    for old in expired:
        if old.file.name:
            default_storage.delete(old.file.name)
        Job.objects.filter(pk=old.pk).update(file="")
        count += 1
    finished = Job.objects.exclude(task="export").filter(
        status__in=[Job.Status.DONE, Job.Status.FAILED], finished_at__lt=timezone.now() - KEEP_FINISHED
    )
    return {"deleted": count, "forgotten": finished.delete()[0]}
