"""Jobs (surveys/jobs/): exports and other heavy work run off the request path, retried without loss or repeat."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.core.files.storage import default_storage
from django.urls import reverse
from django.utils import timezone

from surveys.jobs import guard, queue, worker
from surveys.jobs.records import Job
from surveys.responding.versions import survey_version
from surveys.results import export_files, exports
from tests.base import make_open_survey, make_reports, stored_tally


@pytest.fixture
def in_background(settings):
    """The database transport: nothing runs until a worker (here :func:`worker.run_pending`) does."""
    settings.JOBS_QUEUE = "db"


def drain(response):
    """Read a file response to its end, which closes its file (the test client's way, safe in a test transaction)."""
    b"".join(response.streaming_content)
    return response


@pytest.fixture
def answered(organizer):
    survey = make_open_survey(organizer, questions=2)
    first, second = survey.questions.order_by("position")
    make_reports(first, [i % 3 for i in range(120)], seed=1)
    make_reports(second, [(i * 7) % 3 for i in range(90)], seed=2)
    return survey


def test_a_page_never_writes_an_export_it_queues_one_and_shows_progress(organizer_client, answered, in_background):
    response = organizer_client.get(reverse("export_reports", args=[answered.pk, "csv"]))
    assert response.status_code == 302 and response.url == reverse("exports", args=[answered.pk])
    [job] = Job.objects.filter(task="export")
    assert job.status == Job.Status.QUEUED and not job.file
    # Asking again while it waits finds the same job.
    organizer_client.get(reverse("export_reports", args=[answered.pk, "csv"]))
    assert Job.objects.filter(task="export").count() == 1
    page = organizer_client.get(reverse("exports", args=[answered.pk])).content.decode()
    assert "waiting for a worker" in page and "every 2s" in page
    assert worker.run_pending() == 1
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.result["reports"] == 210 and job.expires_at > timezone.now()
    response = organizer_client.get(reverse("export_reports", args=[answered.pk, "csv"]))
    body = b"".join(response.streaming_content).decode("utf-8")
    assert body.startswith("\ufeffround,submission,")
    assert len(list(csv.DictReader(io.StringIO(body.removeprefix("\ufeff"))))) == 210


@pytest.mark.parametrize(
    "call",
    [
        lambda job: export_files.run_export(job, lambda *a, **k: None),
        lambda job: __import__("surveys.responding.invitations", fromlist=["x"]).run_invitation_mail(job, None),
        lambda job: __import__("surveys.series.rounds", fromlist=["x"]).run_open_due_rounds(job, None),
    ],
    ids=["export", "mail", "rounds"],
)
def test_heavy_work_fails_inline_in_a_web_request(answered, call):
    job = Job.objects.create(task="export", survey=answered, params={"format": "csv", "links": []})
    with guard.in_request(), pytest.raises(guard.InlineWorkError):
        call(job)


def test_the_request_guard_marks_every_request(organizer_client, answered, monkeypatch):
    seen = []
    from surveys.views import exports as export_views

    monkeypatch.setattr(export_views, "estimate_rows", lambda survey: seen.append(guard._in_request.get()) or iter(()))
    organizer_client.get(reverse("export_estimates", args=[answered.pk, "json"]))
    assert seen == [True]


def test_the_raw_report_export_pages_by_keyset_and_re_estimates_exactly(answered):
    pages = list(exports.submission_pages(answered, size=7))
    assert sum(len(p) for p in pages) == 120 + 90 and all(len(p) <= 7 for p in pages)
    ids = [pk for page in pages for pk, _hour in page]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    records = list(exports.report_records(answered, page_size=7))
    assert len(records) == 210
    for question in answered.questions.all():
        randomization = question.randomizations.get()
        mechanism = randomization.build_mechanism()
        rows = [r["report"] for r in records if r["question_id"] == question.pk]
        stored = stored_tally(randomization)
        assert len(rows) == stored.n
        retallied = mechanism.tally(mechanism.unpack_many(b"".join(mechanism.parse_report(r) for r in rows)))
        assert retallied.n == stored.n and retallied.counts.tolist() == stored.counts.tolist()


def test_a_job_killed_mid_run_is_retried_and_nothing_is_lost_or_doubled(answered, in_background, settings):
    job = queue.enqueue("export", answered, key="k", params={"format": "json"})
    # A worker claims it and dies: its partial file stays, its heartbeat stops.
    assert worker.claim(job.pk) is not None
    partial = export_files.Path(settings.MEDIA_ROOT) / "exports" / "partial" / f"job-{job.pk}.json"
    partial.parent.mkdir(parents=True)
    partial.write_text('{"half": ')
    assert worker.run_pending() == 0  # running elsewhere, as far as anyone knows
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=3600))
    assert worker.requeue_stale() == 1
    assert worker.run_pending() == 1
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.attempts == 2
    with default_storage.open(job.file.name) as stored:
        data = json.loads(stored.read())
    pairs = {(r["submission"], r["question_id"]) for r in data["reports"]}
    assert len(data["reports"]) == 210 and len(pairs) == 210
    assert not partial.exists()


def test_a_failing_job_is_retried_then_marked_failed(answered, in_background, monkeypatch):
    calls = []

    def flaky(survey):
        calls.append(1)
        if len(calls) == 1:
            raise OSError("disk full")
        return exports.Table("reports", exports.REPORT_COLUMNS, iter(()))

    monkeypatch.setattr(export_files, "report_table", flaky)
    job = queue.enqueue("export", answered, params={"format": "csv"})
    worker.run_pending()
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.attempts == 2 and len(calls) == 2

    monkeypatch.setattr(export_files, "report_table", lambda survey: 1 / 0)
    job = queue.enqueue("export", answered, params={"format": "csv"})
    worker.run_pending()
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and job.attempts == worker.MAX_ATTEMPTS and "ZeroDivisionError" in job.error


def test_the_workbook_holds_estimates_and_reports_with_korean_intact(organizer_client, organizer):
    from openpyxl import load_workbook

    survey = make_open_survey(organizer, questions=1, title="팀 설문")
    question = survey.questions.get()
    question.text, question.options = "오늘 기분은 어떤가요?", ["좋음", "보통", "나쁨"]
    question.save(update_fields=["text", "options"])
    make_reports(question, [i % 3 for i in range(300)], seed=3)
    response = organizer_client.get(reverse("export_workbook", args=[survey.pk]))
    assert response["Content-Disposition"].endswith(f'filename="survey-{survey.pk}.xlsx"')
    workbook = load_workbook(io.BytesIO(b"".join(response.streaming_content)), read_only=True)
    assert workbook.sheetnames == ["estimates", "reports"]
    estimates = list(workbook["estimates"].values)
    assert estimates[0][: len(exports.ESTIMATE_COLUMNS)] == tuple(exports.ESTIMATE_COLUMNS)
    assert {row[estimates[0].index("option")] for row in estimates[1:]} == {"좋음", "보통", "나쁨"}
    assert "오늘 기분은 어떤가요?" in {row[estimates[0].index("question")] for row in estimates[1:]}
    reports = list(workbook["reports"].values)
    assert len(reports) == 301 and reports[0][0] == "round"
    workbook.close()


def test_a_long_table_continues_on_another_sheet(tmp_path, monkeypatch):
    from openpyxl import load_workbook

    monkeypatch.setattr(export_files, "SHEET_ROWS", 4)
    table = exports.Table("reports", [exports.Column("n", "int")], ([i] for i in range(10)))
    export_files.write_workbook(tmp_path / "long.xlsx", [table])
    workbook = load_workbook(tmp_path / "long.xlsx", read_only=True)
    assert workbook.sheetnames == ["reports", "reports 2", "reports 3"]
    assert [row[0] for row in workbook["reports 3"].values] == ["n", 8, 9]
    workbook.close()


def test_estimate_csv_starts_with_a_byte_order_mark_for_excel(organizer_client, answered):
    body = organizer_client.get(reverse("export_estimates", args=[answered.pk, "csv"])).content
    assert body.startswith("\ufeffround,".encode())


def test_an_expired_export_is_refused_and_its_file_deleted(organizer_client, answered):
    drain(organizer_client.get(reverse("export_reports", args=[answered.pk, "csv"])))
    job = Job.objects.get(task="export")
    url = reverse("export_download", args=[answered.pk, job.pk])
    assert drain(organizer_client.get(url)).status_code == 200
    Job.objects.filter(pk=job.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert organizer_client.get(url).status_code == 404
    name = job.file.name
    old = queue.enqueue("open_due_rounds")
    Job.objects.filter(pk=old.pk).update(finished_at=timezone.now() - timedelta(days=2))
    queue.enqueue("expire_exports")
    assert not default_storage.exists(name)
    assert not Job.objects.filter(pk=old.pk).exists() and Job.objects.filter(pk=job.pk).exists()


def test_another_organizer_cannot_see_or_download_exports(client, other_organizer, answered):
    client.force_login(other_organizer)
    assert client.get(reverse("exports", args=[answered.pk])).status_code == 404
    assert client.post(reverse("exports", args=[answered.pk]), {"format": "csv"}).status_code == 404
    assert not Job.objects.exists()


def test_a_new_report_makes_the_next_download_a_new_export(organizer_client, answered):
    drain(organizer_client.get(reverse("export_reports", args=[answered.pk, "csv"])))
    before = survey_version(answered)
    make_reports(answered.questions.first(), [0, 1], seed=9)
    assert survey_version(answered) == before + 2
    drain(organizer_client.get(reverse("export_reports", args=[answered.pk, "csv"])))
    assert [j.result["reports"] for j in Job.objects.filter(task="export").order_by("pk")] == [210, 212]
