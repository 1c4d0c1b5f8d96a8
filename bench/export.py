"""The raw-report export as a job: time, peak memory and exactness at N responses (PostgreSQL).

    python -m bench.export [--responses N] [--formats csv,json,xlsx] [--pooler]

Builds a scratch database of its own (dropped at the end) with N simulated respondents of the
dashboard benchmark's 10-question survey (``bench.dashboard.build``: 10 N report rows), then runs
the ``export`` job (:func:`surveys.results.export_files.run_export`) in this process for each
format, as a worker would, and prints its time, the file's size and the process's resident memory
before it and at most during it (sampled every 0.1 s). The CSV is then read back and every question's reports
re-tallied: each tally must equal the stored one ("re-estimates exactly": the estimates are a
function of the tally). ``--pooler`` sets ``DATABASE_POOLER=true`` (no server-side cursors, as
behind PgBouncer in transaction mode); the export uses none either way.
"""

from __future__ import annotations

import argparse
import csv
import gc
import json
import os
import resource
import tempfile
import threading
import time
from pathlib import Path

from bench.server import scratch_database, setup_django


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
    args = parser.parse_args()
    os.environ["DATABASE_POOLER"] = "true" if args.pooler else "false"
    os.environ["MEDIA_ROOT"] = tempfile.mkdtemp(prefix="murmur-bench-export-")
    with scratch_database("murmur_bench_export") as url:
        run(args, url)


def run(args: argparse.Namespace, url: str) -> None:
    setup_django(url)
    from django.core.files.storage import default_storage
    from django.core.management import call_command

    from bench.dashboard import build
    from surveys.jobs import worker
    from surveys.jobs.records import Job
    from surveys.models import Randomization
    from surveys.responding.tallies import read_tallies

    call_command("migrate", verbosity=0)
    survey_id, _questions, _cookie = build(args.responses)
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
            f"{fmt}: {job.result['reports']:,} reports in {seconds:.0f} s, "
            f"{job.result['bytes'] / 2**20:.0f} MiB file, resident memory {memory.start:.0f} MiB before, "
            f"at most {memory.peak:.0f} MiB during"
        )
        if fmt != "csv":
            continue
        randomizations = {r.pk: r for r in Randomization.objects.filter(question__survey_id=survey_id)}
        by_key = {(r.question_id, r.version): r for r in randomizations.values()}
        packed: dict[int, list[bytes]] = {pk: [] for pk in randomizations}
        with Path(default_storage.path(str(job.file.name))).open(encoding="utf-8-sig") as text:
            for row in csv.DictReader(text):
                r = by_key[(int(row["question_id"]), int(row["version"]))]
                packed[r.pk].append(r.build_mechanism().parse_report(json.loads(row["report"])))
        stored_tallies = read_tallies(randomizations.values())
        unequal = 0
        for pk, r in randomizations.items():
            mechanism = r.build_mechanism()
            again = mechanism.tally(mechanism.unpack_many(b"".join(packed[pk])))
            same = again.n == stored_tallies[pk].n and (again.counts == stored_tallies[pk].counts).all()
            unequal += not same
        print(f"csv re-tallied: {len(randomizations) - unequal} of {len(randomizations)} tallies equal the stored ones")


if __name__ == "__main__":
    main()
