"""Simulated respondents loaded in bulk into a scratch PostgreSQL database, for the benchmarks.

The dashboard and export benchmarks load their surveys with :func:`build`. At 100,000 responses it
took 15 s where inserting through the tables' keys (the loader before it) took 93 s, with the same
rows (docs/benchmarks.md, "The raw-report export of 1,000,000 responses").
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from bench.submit import sample_reports


@contextlib.contextmanager
def without_keys(cursor: Any, tables: list[str]) -> Iterator[None]:
    """The tables' indexes and constraints dropped while a block loads them, then made again from
    their own definitions (PostgreSQL's advice for populating a database: one sorted build per index
    and one join per foreign key instead of a check and an index insertion per row). Call inside a
    transaction, so that a failure leaves the schema as it was. ``tables`` in the order they are
    made again (a referenced table first)."""
    definitions = {}
    for table in tables:
        cursor.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s::regclass", [table]
        )
        constraints = cursor.fetchall()
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s AND NOT indexname = ANY(%s)",
            [table, [name for name, _ in constraints]],
        )
        definitions[table] = (constraints, cursor.fetchall())
    for table in reversed(tables):  # a referencing table's foreign keys go before the keys they name
        constraints, indexes = definitions[table]
        for name, _ in constraints:
            cursor.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
        for name, _ in indexes:
            cursor.execute(f'DROP INDEX "{name}"')
    yield
    cursor.execute("SET LOCAL maintenance_work_mem = '256MB'")
    for table in tables:
        constraints, indexes = definitions[table]
        for _, definition in indexes:  # a partitioned table's says ON ONLY: made here for every partition
            cursor.execute(definition.replace(" ON ONLY ", " ON ", 1))
        for name, definition in sorted(constraints, key=lambda c: "FOREIGN" in c[1]):  # keys before references
            cursor.execute(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')


def build(responses: int, questions: list[dict[str, Any]], seed: int = 1) -> tuple[int, list[int], str]:
    """A survey of ``questions`` (the fields of ``actions.do_add_question``), opened, with ``responses``
    simulated respondents' reports (randomized by ldp, random ids as the app makes them, spread over
    two weeks of hours), loaded in bulk: COPY with the tables' keys made after (:func:`without_keys`),
    each question's tally cells per shard from one sort, and the hourly counters and version in one
    statement each. Returns (survey id, question ids, a logged-in session cookie)."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.test import Client

    from surveys import actions
    from surveys.models import HourlyResponses, Report, Submission, Survey, SurveyVersion
    from surveys.responding import tallies

    user = get_user_model().objects.create_user("bench", password="bench-password-1")
    survey = Survey.objects.create(owner=user, title="Benchmark survey", expected_respondents=responses)
    for fields in questions:
        actions.do_add_question(survey, fields)
    actions.do_open_survey(survey)

    rng = np.random.default_rng(seed)
    start = datetime(2026, 11, 1, tzinfo=UTC)
    hours = (np.arange(responses) * 24 * 14) // responses  # spread over two weeks
    started = time.perf_counter()
    shards = rng.integers(0, settings.TALLY_SHARDS, size=responses)  # each submission's random shard
    by_shard = np.argsort(shards, kind="stable")  # each shard's submissions, in their order
    bounds = np.searchsorted(shards[by_shard], np.arange(settings.TALLY_SHARDS + 1))
    tables = [Submission._meta.db_table, Report._meta.db_table]
    with transaction.atomic(), connection.connection.cursor() as cursor, without_keys(cursor, tables):
        ids = rng.choice(2**62, size=responses, replace=False) + 2**32  # random ids, as the app makes them
        moments = [start + timedelta(hours=h) for h in range(int(hours.max()) + 1 if responses else 0)]
        with cursor.copy(f"COPY {tables[0]} (id, survey_id, received_hour) FROM STDIN") as copy:
            for submission_id, hour in zip(ids.tolist(), hours.tolist(), strict=True):
                copy.write_row((submission_id, survey.pk, moments[hour]))
        cells, counts = np.unique(np.c_[hours, shards], axis=0, return_counts=True)
        hourly = [
            (survey.pk, connection.ops.adapt_datetimefield_value(moments[h]), s, c)
            for (h, s), c in zip(cells.tolist(), counts.tolist(), strict=True)
        ]
        key = ("survey_id", "hour", "shard")
        tallies.upsert_adding(HourlyResponses._meta.db_table, (*key, "count"), key, hourly)
        per_shard = np.bincount(shards, minlength=settings.TALLY_SHARDS).tolist()
        tallies.upsert_adding(
            SurveyVersion._meta.db_table, ("survey_id", "shard", "count"), ("survey_id", "shard"),
            [(survey.pk, s, c) for s, c in enumerate(per_shard) if c],
        )  # fmt: skip
        for question in survey.questions.all():
            randomization = question.current_randomization()
            mechanism = randomization.build_mechanism()
            packed = sample_reports(question, mechanism, responses, rng)
            report_ids = rng.choice(2**62, size=responses, replace=False) + 2**32
            with cursor.copy(
                f"COPY {tables[1]} (survey_id, id, submission_id, question_id, randomization_id, packed) FROM STDIN"
            ) as copy:
                for report_id, submission_id, row in zip(report_ids.tolist(), ids.tolist(), packed, strict=True):
                    copy.write_row((survey.pk, report_id, submission_id, question.pk, randomization.pk, row))
            rows = []
            for shard in range(settings.TALLY_SHARDS):
                mine = [packed[i] for i in by_shard[bounds[shard] : bounds[shard + 1]].tolist()]
                rows.extend(tallies.tally_rows(survey.pk, randomization, mine, shard))
            tallies.add_rows(rows)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"loaded {responses:,} responses x {len(questions)} questions in {time.perf_counter() - started:.0f} s")

    client = Client()
    client.force_login(user)
    return survey.pk, list(survey.questions.values_list("pk", flat=True)), client.cookies["sessionid"].value
