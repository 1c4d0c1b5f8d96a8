"""Reports and tally cells keyed by survey, and on PostgreSQL partitioned by it (migration 0031).

Every row carries its survey; on PostgreSQL both tables are ``PARTITION BY HASH (survey_id)`` and a
survey's tally read and export page touch one partition (the plans are checked with ``EXPLAIN``).
The migration is run on a database holding reports and cells: back to 0030 and forward again,
every row kept, with its survey."""

from __future__ import annotations

import importlib
import re

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext

from surveys import actions
from surveys.jobs import loop
from surveys.models import Randomization, Report, Submission, TallyCell
from surveys.responding import tallies
from surveys.results import report_text
from tests.base import stored_tally, tally_of_reports
from tests.surveys.test_storage import survey_with
from tests.surveys.test_tally_deltas import no_rate_limits, submit  # noqa: F401  (a fixture, used by name)

MIGRATION = importlib.import_module("surveys.migrations.0031_partition_by_survey")
PARTITIONED = ("surveys_report", "surveys_tallycell")


def two_answered_surveys(client, organizer):
    """Two surveys of 3 and 2 questions, 6 submissions each, folded into their cells."""
    surveys = [survey_with(organizer, 3), survey_with(organizer, 2)]
    for seed, survey in enumerate(surveys):
        submit(client, survey, 6, seed=10 * seed)
    loop.sweep()
    return surveys


def postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("partitioning is PostgreSQL's; SQLite keeps one table with the same keys")


def partitions_scanned(sql: str, table: str) -> set[str]:
    """The partitions of ``table`` that PostgreSQL's plan for ``sql`` reads."""
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    return set(re.findall(rf"\b{table}_p\d+\b", plan))


def test_every_report_and_cell_carries_its_survey(client, organizer):
    surveys = two_answered_surveys(client, organizer)
    for survey in surveys:
        submissions = set(Submission.objects.filter(survey=survey).values_list("pk", flat=True))
        reports = Report.objects.filter(survey=survey)
        assert set(reports.values_list("submission_id", flat=True)) == submissions
        assert reports.count() == len(submissions) * survey.questions.count()
        randomizations = set(Randomization.objects.filter(question__survey=survey).values_list("pk", flat=True))
        assert set(TallyCell.objects.filter(survey=survey).values_list("randomization_id", flat=True)) == randomizations
    assert Report.objects.count() == sum(Report.objects.filter(survey=s).count() for s in surveys)
    assert TallyCell.objects.count() == sum(TallyCell.objects.filter(survey=s).count() for s in surveys)


def test_the_keys_lead_with_the_survey():
    assert Report._meta.pk.columns == ("survey_id", "id")
    assert TallyCell._meta.pk.columns == ("survey_id", "randomization_id", "shard", "cell")
    (unique,) = Report._meta.constraints
    assert unique.fields == ("survey", "submission", "question")
    assert TallyCell._meta.pk.columns == tallies.CELL_KEY


def test_both_tables_are_hashed_by_survey_into_partitions(db):
    postgresql_only()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, p.partstrat, a.attname, "
            "(SELECT count(*) FROM pg_inherits i WHERE i.inhparent = c.oid) "
            "FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid "
            "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = p.partattrs[0] ORDER BY c.relname"
        )
        found = cursor.fetchall()
    assert MIGRATION.PARTITIONS == 16
    assert found == [(table, "h", "survey_id", 16) for table in PARTITIONED]


def test_a_tally_read_scans_one_partition(client, organizer):
    postgresql_only()
    survey = two_answered_surveys(client, organizer)[0]
    randomizations = list(Randomization.objects.filter(question__survey=survey))
    with CaptureQueriesContext(connection) as queries:
        tallies.read_tallies(randomizations)
    (sql,) = [q["sql"] for q in queries if "surveys_tallycell" in q["sql"]]
    assert len(partitions_scanned(sql, "surveys_tallycell")) == 1


def test_an_export_page_scans_one_partition(client, organizer):
    postgresql_only()
    survey = two_answered_surveys(client, organizer)[1]
    with CaptureQueriesContext(connection) as queries:
        (page,) = report_text.raw_report_pages(survey, 100)
    assert len(page) == 6 * 2
    (sql,) = [q["sql"] for q in queries if "surveys_report" in q["sql"]]
    assert len(partitions_scanned(sql, "surveys_report")) == 1


def test_deleting_a_survey_deletes_its_reports_and_cells_by_survey(client, organizer):
    kept, deleted = two_answered_surveys(client, organizer)
    before = Report.objects.filter(survey=kept).count(), TallyCell.objects.filter(survey=kept).count()
    with CaptureQueriesContext(connection) as queries:
        actions.do_delete_survey(deleted)
    first = [q["sql"] for q in queries if q["sql"].startswith("DELETE")][:2]
    assert all('"survey_id" = ' in sql for sql in first), first
    assert not Report.objects.filter(survey_id=deleted.pk).exists()
    assert not TallyCell.objects.filter(survey_id=deleted.pk).exists()
    assert (Report.objects.count(), TallyCell.objects.count()) == before


def rows(table: str, columns: str) -> set[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns} FROM {table}")
        return {tuple(bytes(v) if isinstance(v, memoryview) else v for v in row) for row in cursor.fetchall()}


@pytest.mark.django_db(transaction=True)  # migrations run their own transactions
def test_the_migration_keeps_every_row_and_gives_it_its_survey(client, organizer):
    surveys = two_answered_surveys(client, organizer)
    submit(client, surveys[0], 3, seed=50)  # cells folded, and pending rows after them
    reports = rows("surveys_report", "survey_id, id, submission_id, question_id, randomization_id, packed")
    cells = rows("surveys_tallycell", "survey_id, randomization_id, shard, cell, count")
    assert {r[0] for r in reports} == {r[0] for r in cells} == {s.pk for s in surveys}
    executor = MigrationExecutor(connection)
    try:
        executor.migrate([("surveys", "0030_tallydelta")])
        old_reports = rows("surveys_report", "id, submission_id, question_id, randomization_id, packed")
        assert old_reports == {r[1:] for r in reports}
        assert rows("surveys_tallycell", "randomization_id, shard, cell, count") == {c[1:] for c in cells}
        executor.loader.build_graph()
        executor.migrate([("surveys", "0031_partition_by_survey")])
    finally:
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
    assert rows("surveys_report", "survey_id, id, submission_id, question_id, randomization_id, packed") == reports
    assert rows("surveys_tallycell", "survey_id, randomization_id, shard, cell, count") == cells
    for survey in surveys:
        submissions = set(Submission.objects.filter(survey=survey).values_list("pk", flat=True))
        assert set(Report.objects.filter(survey=survey).values_list("submission_id", flat=True)) == submissions
        for randomization in Randomization.objects.filter(question__survey=survey):
            stored, recomputed = stored_tally(randomization), tally_of_reports(randomization)
            assert (stored.n, stored.counts.tolist()) == (recomputed.n, recomputed.counts.tolist())
    if connection.vendor == "postgresql":
        test_both_tables_are_hashed_by_survey_into_partitions(None)
