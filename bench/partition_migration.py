"""Migration 0031 on a loaded database: how long rebuilding the report and tally-cell tables takes.

    python -m bench.partition_migration [--responses N]

In a scratch database of its own (dropped at the end), N simulated respondents of the dashboard
benchmark's 10-question survey (10 N reports, :func:`bench.loader.build`) are loaded at the latest
migration; the surveys app is then migrated back to 0030 (plain tables keyed by id) and forward
to 0031 again (``PARTITION BY HASH (survey_id)``), each step timed, and every table's rows
counted and every tally compared with its reports' after. The forward step is what a deployment
of 0031 costs (one transaction, the tables locked meanwhile).
"""

from __future__ import annotations

import argparse
import os
import time

from bench.dashboard import SURVEYS, question_fields
from bench.loader import build
from bench.server import scratch_database, setup_django


def counts() -> tuple[int, int]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT (SELECT count(*) FROM surveys_report), (SELECT count(*) FROM surveys_tallycell)")
        reports, cells = cursor.fetchone()
    return reports, cells


def run(responses: int) -> None:
    from django.core.management import call_command
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor
    from django.db.models import Count

    from surveys.models import Randomization, Report
    from surveys.responding.tallies import read_tallies

    call_command("migrate", verbosity=0)
    survey_id, _questions, _cookie = build(responses, [question_fields(*q) for q in SURVEYS["ten"]])
    before = counts()
    print(f"{before[0]:,} reports, {before[1]:,} tally cells (load average {load_average()})")
    executor = MigrationExecutor(connection)
    for target in ("0030_tallydelta", "0031_partition_by_survey"):
        executor.loader.build_graph()
        started = time.perf_counter()
        executor.migrate([("surveys", target)])
        seconds = time.perf_counter() - started
        print(f"migrate surveys {target}: {seconds:.1f} s, rows {counts()} (load average {load_average()})")
        assert counts() == before
    randomizations = list(Randomization.objects.filter(question__survey_id=survey_id))
    stored = read_tallies(randomizations)
    reports = dict(
        Report.objects.filter(survey_id=survey_id).values_list("randomization").annotate(n=Count("id")).order_by()
    )
    equal = sum(stored[r.pk].n == reports.get(r.pk, 0) for r in randomizations)
    print(f"{equal} of {len(randomizations)} tallies count their reports")


def load_average() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=100_000)
    args = parser.parse_args()
    os.environ.setdefault("DEBUG", "false")  # no log of every query's SQL
    with scratch_database("murmur_bench_partition_migration") as url:
        setup_django(url)
        run(args.responses)


if __name__ == "__main__":
    main()
