"""The raw-report export as a job: time, peak memory and exactness at N responses (PostgreSQL).

    python -m bench.export [--responses N] [--formats csv,json,xlsx] [--pooler] [--loader bulk|dashboard]
                           [--baseline N]

Builds a scratch database of its own (dropped at the end) with N simulated respondents of the
dashboard benchmark's 10-question survey (10 N report rows: :func:`load`, the same rows as
``bench.dashboard.build`` with the same seed, loaded in bulk; ``--loader dashboard`` loads them
with ``build`` itself, for comparison), then runs
the ``export`` job (:func:`surveys.results.export_files.run_export`) in this process for each
format, as a worker would, and prints its time, the file's size and the process's resident memory
before it and at most during it (sampled every 0.1 s). The CSV is then read back and every question's reports
re-tallied: each tally must equal the stored one ("re-estimates exactly": the estimates are a
function of the tally). ``--pooler`` sets ``DATABASE_POOLER=true`` (no server-side cursors) and
connects through a PgBouncer of the run's own in transaction mode (``bench.server.pgbouncer``):
the loading and the export job both go through it. ``--baseline N`` first
times the CSV export of the first N submissions' reports spelled row by row (``csv.writer`` and
``json.dumps`` per report, as the export did before :mod:`surveys.results.report_text`) against the
compiled spelling, both in memory, and checks they are the same text.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import gc
import itertools
import json
import os
import resource
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bench.server import pgbouncer, scratch_database, setup_django


def rss_mib() -> float:
    """This process's resident memory now (Linux: /proc/self/status)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Sampler:
    """The highest resident memory seen every 0.1 s while a block runs."""

    def __enter__(self) -> Sampler:
        self.peak, self.start, self._stop = rss_mib(), rss_mib(), threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, rss_mib())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_mib())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=100_000)
    parser.add_argument("--formats", default="csv,xlsx")
    parser.add_argument("--pooler", action="store_true")
    parser.add_argument("--loader", choices=["bulk", "dashboard"], default="bulk")
    parser.add_argument("--baseline", type=int, default=0, metavar="N")
    args = parser.parse_args()
    os.environ["DATABASE_POOLER"] = "true" if args.pooler else "false"
    os.environ.setdefault("DEBUG", "false")  # as a production worker: no log of every query's SQL
    os.environ["MEDIA_ROOT"] = tempfile.mkdtemp(prefix="murmur-bench-export-")
    with ExitStack() as stack:
        url = stack.enter_context(scratch_database("murmur_bench_export"))
        if args.pooler:  # everything, the export job too, through a PgBouncer in transaction mode
            url = stack.enter_context(pgbouncer(url))
        run(args, url)


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
        for _, definition in indexes:
            cursor.execute(definition)
        for name, definition in sorted(constraints, key=lambda c: "FOREIGN" in c[1]):  # keys before references
            cursor.execute(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')


def load(responses: int, seed: int = 1, survey_name: str = "ten") -> tuple[int, list[int], str]:
    """:func:`bench.dashboard.build`'s survey and rows (the same random draws in the same order), loaded
    in bulk: COPY with the tables' keys made after (:func:`without_keys`), each question's tally cells
    per shard from one sort, and the hourly counters and version in one statement each."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.test import Client

    from bench.dashboard import SURVEYS, question_fields
    from bench.submit import sample_reports
    from surveys import actions
    from surveys.models import HourlyResponses, Report, Submission, Survey, SurveyVersion
    from surveys.responding import tallies

    user = get_user_model().objects.create_user("bench", password="bench-password-1")
    survey = Survey.objects.create(owner=user, title="Benchmark survey", expected_respondents=responses)
    questions = SURVEYS[survey_name]
    for text, options, epsilon, mechanism, params in questions:
        actions.do_add_question(survey, question_fields(text, options, epsilon, mechanism, params))
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
                f"COPY {tables[1]} (id, submission_id, question_id, randomization_id, packed) FROM STDIN"
            ) as copy:
                for report_id, submission_id, row in zip(report_ids.tolist(), ids.tolist(), packed, strict=True):
                    copy.write_row((report_id, submission_id, question.pk, randomization.pk, row))
            rows = []
            for shard in range(settings.TALLY_SHARDS):
                mine = [packed[i] for i in by_shard[bounds[shard] : bounds[shard + 1]].tolist()]
                rows.extend(tallies.tally_rows(randomization, mine, shard))
            tallies.add_rows(rows)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"loaded {responses:,} responses x {len(questions)} questions in {time.perf_counter() - started:.0f} s")

    client = Client()
    client.force_login(user)
    return survey.pk, list(survey.questions.values_list("pk", flat=True)), client.cookies["sessionid"].value


def run(args: argparse.Namespace, url: str) -> None:
    setup_django(url)
    from django.core.files.storage import default_storage
    from django.core.management import call_command

    from bench.dashboard import build
    from surveys.jobs import worker
    from surveys.jobs.records import Job

    print(f"database: {url.rsplit('@', 1)[1]}")
    call_command("migrate", verbosity=0)
    survey_id, _questions, _cookie = (load if args.loader == "bulk" else build)(args.responses)
    print(f"load average after loading: {load_average()}")
    if args.baseline:
        compare_spellings(survey_id, args.baseline)
    gc.collect()
    print(f"DATABASE_POOLER={os.environ['DATABASE_POOLER']}; resident memory after loading: {rss_mib():.0f} MiB")
    for fmt in args.formats.split(","):
        job = Job.objects.create(task="export", survey_id=survey_id, params={"format": fmt})
        started = time.perf_counter()
        with Sampler() as memory:
            assert worker.run(job.pk) == "done"
        seconds = time.perf_counter() - started
        job.refresh_from_db()
        print(
            f"{fmt}: {job.result['reports']:,} reports in {seconds:.0f} s "
            f"({job.result['reports'] / max(seconds, 1e-9) * 60:,.0f} a minute), "
            f"{job.result['bytes'] / 2**20:.0f} MiB file, resident memory {memory.start:.0f} MiB before, "
            f"at most {memory.peak:.0f} MiB during (load average {load_average()})"
        )
        if fmt == "csv":
            started = time.perf_counter()
            equal, count, rows = retally(survey_id, Path(default_storage.path(str(job.file.name))))
            print(
                f"csv re-tallied ({rows:,} rows read back in {time.perf_counter() - started:.0f} s): "
                f"{equal} of {count} tallies equal the stored ones"
            )


def load_average() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def retally(survey_id: int, path: Path, chunk: int = 100_000) -> tuple[int, int, int]:
    """Every question's reports read back from the exported CSV and tallied again, a chunk at a time:
    (tallies equal to the stored ones, randomizations, rows read)."""
    from surveys.models import Randomization
    from surveys.responding.tallies import read_tallies

    randomizations = {r.pk: r for r in Randomization.objects.filter(question__survey_id=survey_id)}
    mechanisms = {pk: r.build_mechanism() for pk, r in randomizations.items()}
    by_key = {(str(r.question_id), str(r.version)): r.pk for r in randomizations.values()}
    pending: dict[int, list[bytes]] = {pk: [] for pk in randomizations}
    again: dict[int, Any] = dict.fromkeys(randomizations)
    parsed: dict[tuple[int, str], bytes] = {}  # reports seen before, as in the export (bounded)

    def flush(pk: int) -> None:
        mechanism = mechanisms[pk]
        tally = mechanism.tally(mechanism.unpack_many(b"".join(pending[pk])))
        again[pk] = tally if again[pk] is None else again[pk] + tally
        pending[pk] = []

    rows = 0
    with path.open(encoding="utf-8-sig", newline="") as text:
        reader = csv.reader(text)
        names = next(reader)
        question, version, report = (names.index(c) for c in ("question_id", "version", "report"))
        for row in reader:
            rows += 1
            pk = by_key[(row[question], row[version])]
            packed = parsed.get((pk, row[report]))
            if packed is None:
                packed = mechanisms[pk].parse_report(json.loads(row[report]))
                if len(parsed) < 200_000:
                    parsed[(pk, row[report])] = packed
            pending[pk].append(packed)
            if len(pending[pk]) >= chunk:
                flush(pk)
    for pk in randomizations:
        if pending[pk] or again[pk] is None:
            flush(pk)
    stored = read_tallies(randomizations.values())
    equal = sum(
        again[pk].n == stored[pk].n and bool((again[pk].counts == stored[pk].counts).all()) for pk in randomizations
    )
    return equal, len(randomizations), rows


def compare_spellings(survey_id: int, submissions: int) -> None:
    """The first ``submissions`` submissions' reports as CSV, spelled row by row (``csv.writer`` and
    ``json.dumps`` per report) and compiled (:mod:`surveys.results.report_text`): time of each, same text."""
    from surveys.models import Survey
    from surveys.results.exports import Table, csv_stream, report_table

    survey = Survey.objects.get(pk=survey_id)
    table = report_table(survey, page_size=submissions)
    assert table.csv_body is not None
    started = time.perf_counter()
    compiled, count = next(table.csv_body())
    fast = time.perf_counter() - started
    started = time.perf_counter()
    by_row = "".join(csv_stream(Table(table.name, table.columns, itertools.islice(table.rows, count)), bom=False))
    slow = time.perf_counter() - started
    header = by_row[: by_row.index("\r\n") + 2]
    print(
        f"baseline, {count:,} reports in memory: row by row {slow:.1f} s, compiled {fast:.1f} s "
        f"({slow / fast:.1f}x; load average {load_average()}); same text: {by_row[len(header) :] == compiled}"
    )


if __name__ == "__main__":
    main()
