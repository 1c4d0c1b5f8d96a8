"""The raw-report export as a job: time, peak memory and exactness at N responses (PostgreSQL).

    python -m bench.export [--responses N] [--formats csv,json,xlsx] [--pooler]
                           [--baseline N]

Builds a scratch database of its own (dropped at the end) with N simulated respondents of the
dashboard benchmark's 10-question survey (10 N report rows, :func:`bench.loader.build`), then runs
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
import csv
import gc
import itertools
import json
import os
import resource
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from bench.dashboard import SURVEYS, question_fields
from bench.loader import build
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


def run(args: argparse.Namespace, url: str) -> None:
    setup_django(url)
    from django.core.files.storage import default_storage
    from django.core.management import call_command

    from surveys.jobs import worker
    from surveys.jobs.records import Job

    print(f"database: {url.rsplit('@', 1)[1]}")
    call_command("migrate", verbosity=0)
    survey_id, _questions, _cookie = build(args.responses, [question_fields(*q) for q in SURVEYS["ten"]])
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
