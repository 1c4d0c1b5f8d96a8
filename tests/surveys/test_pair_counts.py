"""Post-hoc cross-tabs from stored pair counts: no page reads a report; the job counts each closed hour once."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.db import connection
from django.db.models import Count
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from surveys import actions
from surveys.jobs import worker
from surveys.jobs.records import Job
from surveys.models import HourlyResponses, OpenPairCount, PairCount, PairHour, Report, Submission, hour_now
from surveys.results import crosstabs, pair_counts
from tests.base import make_joint_reports, make_question, make_survey
from tests.surveys.test_crosstab import pair_tally_of_stored_reports

REPORT_TABLE = Report._meta.db_table


def scanned(first, second):
    """The pair table of the stored reports, matched by submission (the reference)."""
    return pair_tally_of_stored_reports(first, second)[2]


def counted(first, second):
    return crosstabs.pair_table(first.current_randomization(), second.current_randomization())


def answers(n, seed, k=(3, 2)):
    rng = np.random.default_rng(seed)
    rows = np.column_stack([rng.integers(0, k[0], n), rng.integers(0, k[1], n)])
    rows[rng.random(n) < 0.1, 1] = -1  # one in ten skipped the second question
    return rows


def move_to_hour(submissions, hour):
    """Give these submissions another hour, and the hourly counters what the submissions say."""
    Submission.objects.filter(pk__in=[s.pk for s in submissions]).update(received_hour=hour)
    survey_id = submissions[0].survey_id
    HourlyResponses.objects.filter(survey_id=survey_id).delete()
    per_hour = Submission.objects.filter(survey_id=survey_id).values("received_hour").annotate(n=Count("pk"))
    HourlyResponses.objects.bulk_create(
        HourlyResponses(survey_id=survey_id, hour=row["received_hour"], shard=0, count=row["n"]) for row in per_hour
    )


def add(questions, n, seed, hour=None):
    before = set(Submission.objects.values_list("pk", flat=True))
    make_joint_reports(questions, answers(n, seed), seed=seed)
    new = list(Submission.objects.exclude(pk__in=before))
    if hour is not None:
        move_to_hour(new, hour)
    return new


@pytest.fixture
def crossed(organizer):
    """Fruit (k-RR) and weekend (OUE), answered over three closed hours and the current one."""
    survey = make_survey(organizer, title="Crossed", public_results=True)
    fruit = make_question(survey, text="Fruit?", options=["Apple", "Banana", "Cherry"], epsilon=3.0)
    weekend = make_question(survey, text="Weekend?", kind="yes_no", options=["Yes", "No"], epsilon=3.0, mechanism="oue")
    actions.do_open_survey(survey)
    now = hour_now()
    for back, seed in ((5, 1), (3, 2), (2, 3)):
        add([fruit, weekend], 300, seed, hour=now - timedelta(hours=back))
    add([fruit, weekend], 200, seed=4)
    return survey, fruit, weekend


def assert_equal_tables(found, expected):
    assert found.n == expected.n
    np.testing.assert_array_equal(found.table, expected.table)


def test_the_job_counts_what_a_scan_of_the_reports_finds(crossed):
    survey, fruit, weekend = crossed
    result = pair_counts.count_survey(survey)
    assert result == {"folded": 3, "open": 1, "rebuilt": 0}
    expected = scanned(fruit, weekend)
    assert 800 < expected.n < 1000  # one in ten skipped the second question
    assert_equal_tables(counted(fruit, weekend), expected)
    assert PairHour.objects.filter(survey=survey).count() == 3
    assert sorted(PairHour.objects.values_list("submissions", flat=True)) == [300, 300, 300]


def test_a_rerun_doubles_nothing_and_new_reports_of_the_open_hour_replace_its_counts(crossed):
    survey, fruit, weekend = crossed
    pair_counts.count_survey(survey)
    assert pair_counts.count_survey(survey) == {"folded": 0, "open": 1, "rebuilt": 0}
    assert_equal_tables(counted(fruit, weekend), scanned(fruit, weekend))
    add([fruit, weekend], 150, seed=9)
    pair_counts.count_survey(survey)
    assert_equal_tables(counted(fruit, weekend), scanned(fruit, weekend))


def test_a_job_killed_mid_run_leaves_whole_hours_only_and_its_retry_completes_them(crossed, monkeypatch):
    """Folded one hour per transaction here; with several, a killed batch leaves none of its hours."""
    survey, fruit, weekend = crossed
    real, calls = pair_counts.count_hour, []

    def dies_on_the_second_hour(*args):
        calls.append(args[1])
        if len(calls) == 2:
            raise SystemExit("worker killed")
        return real(*args)

    monkeypatch.setattr(pair_counts, "count_hour", dies_on_the_second_hour)
    monkeypatch.setattr(pair_counts, "HOURS_PER_TRANSACTION", 1)
    job = Job.objects.create(task="count_pairs", survey=survey, params={})
    with pytest.raises(SystemExit):
        worker.run(job.pk)
    # One whole hour folded (its ledger row and counts together), the second rolled back.
    assert PairHour.objects.filter(survey=survey).count() == 1
    assert counted(fruit, weekend).n < scanned(fruit, weekend).n
    monkeypatch.setattr(pair_counts, "count_hour", real)
    Job.objects.filter(pk=job.pk).update(status=Job.Status.QUEUED)  # the sweep's requeue
    assert worker.run(job.pk) == "done"
    assert_equal_tables(counted(fruit, weekend), scanned(fruit, weekend))
    assert PairHour.objects.filter(survey=survey).count() == 3


def test_a_second_fold_of_the_same_hour_adds_nothing(crossed):
    survey, fruit, weekend = crossed
    pair_counts.count_survey(survey)
    totals = counted(fruit, weekend)
    randomizations = pair_counts.eligible([fruit.current_randomization(), weekend.current_randomization()])
    hour = PairHour.objects.filter(survey=survey).order_by("hour").first().hour
    mechanisms = pair_counts.mechanisms_of(randomizations)
    assert pair_counts.fold_hours(survey.pk, [hour], randomizations, mechanisms) == 0
    later = PairHour.objects.filter(survey=survey).order_by("hour").last().hour
    assert pair_counts.fold_hours(survey.pk, [later, hour], randomizations, mechanisms) == 0
    assert_equal_tables(counted(fruit, weekend), totals)


def test_a_submission_stored_after_its_hour_was_folded_rebuilds_the_totals(crossed):
    survey, fruit, weekend = crossed
    pair_counts.count_survey(survey)
    late_hour = PairHour.objects.filter(survey=survey).order_by("hour").first().hour
    add([fruit, weekend], 40, seed=11, hour=late_hour)
    assert pair_counts.count_survey(survey)["rebuilt"] == 1
    assert_equal_tables(counted(fruit, weekend), scanned(fruit, weekend))
    assert pair_counts.count_survey(survey)["rebuilt"] == 0


def test_open_counts_of_an_hour_move_to_the_totals_when_it_closes(crossed, monkeypatch):
    survey, fruit, weekend = crossed
    pair_counts.count_survey(survey)
    assert OpenPairCount.objects.filter(survey=survey).exists()
    later = hour_now() + timedelta(hours=2)
    monkeypatch.setattr(pair_counts.timezone, "now", lambda: later)
    assert pair_counts.count_survey(survey)["folded"] == 1
    assert not OpenPairCount.objects.filter(survey=survey).exists()
    assert_equal_tables(counted(fruit, weekend), scanned(fruit, weekend))


@pytest.mark.parametrize("public", [False, True])
def test_a_cross_tab_page_never_queries_the_report_table(crossed, organizer_client, client, settings, public):
    survey, fruit, weekend = crossed
    query = f"?first={fruit.pk}&second={weekend.pk}"
    url = reverse("public_crosstab", args=[survey.slug]) if public else reverse("survey_crosstab", args=[survey.pk])
    reader = client if public else organizer_client
    reader.get(url + query)  # the first view counts (the synchronous transport of tests runs the job)
    expected = scanned(fruit, weekend)
    settings.JOBS_QUEUE = "db"  # from here a job only waits in the table, as in production
    settings.PAIR_REFRESH_SECONDS = 0
    with CaptureQueriesContext(connection) as fresh:
        response = reader.get(url + query)
    assert response.status_code == 200 and response.context["crosstab"].n == expected.n
    add([fruit, weekend], 50, seed=21)  # new responses: the counts are stale, a count is queued
    with CaptureQueriesContext(connection) as stale:
        response = reader.get(url + query)
    assert response.status_code == 200 and response.context["crosstab"].n == expected.n
    assert Job.objects.filter(task="count_pairs", status=Job.Status.QUEUED).count() == 1
    for captured in (fresh, stale):
        sql = [q["sql"] for q in captured.captured_queries]
        assert sql and not [s for s in sql if REPORT_TABLE in s], sql


def test_a_submission_writes_no_pair_count(client, organizer):
    from tests.surveys.test_submit import post, submission

    survey = make_survey(organizer)
    make_question(survey, text="A?", options=["x", "y", "z"])
    make_question(survey, text="B?", options=["x", "y", "z"])
    make_question(survey, text="C?", options=["x", "y", "z"])
    actions.do_open_survey(survey)
    with CaptureQueriesContext(connection) as captured:
        assert post(client, survey, submission(survey)).status_code == 201
    tables = [m._meta.db_table for m in (PairCount, OpenPairCount, PairHour)]
    assert not [q for q in captured.captured_queries if any(t in q["sql"] for t in tables)]
    assert not PairCount.objects.exists() and not OpenPairCount.objects.exists()
