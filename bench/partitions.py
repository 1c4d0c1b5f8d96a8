"""Reports and tally cells partitioned by survey (PostgreSQL declarative partitioning), against plain tables.

    python -m bench.partitions [--reports N] [--surveys S] [--partitions P] [--submissions T]

In a scratch database of its own (dropped at the end), two copies of the report and tally-cell
tables as the submit statement writes them, with ``survey_id`` on every row: plain, and
``PARTITION BY HASH (survey_id)`` with P partitions (primary keys and upsert targets lead with
``survey_id``, as partitioning and Citus both require). Measured on each, alternating:

- a bulk load of N reports over S surveys (10 questions each) with their tally cells (16 shards);
- T submissions one transaction each, as the submit statement writes them: 10 reports (``unnest``)
  and their 10 tally-cell upserts (``ON CONFLICT ... DO UPDATE``), in one statement;
- a survey's tally read (``GROUP BY randomization, cell`` over its cells), and a keyset page of
  2,000 of its reports (the export's read), for random surveys.

Prints medians and the partitioned / plain ratio with the load average. These are bench tables
of their own, apart from Murmur's: it measured whether converting the app's would pay, before
migration 0031 converted them the same way (``bench.partition_migration`` times that migration).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import psycopg

from bench.server import scratch_database

QUESTIONS = 10
SHARDS = 16
CELLS = 5

PLAIN = """
CREATE TABLE {p}report (survey_id bigint NOT NULL, id bigint NOT NULL, submission_id bigint NOT NULL,
  randomization_id bigint NOT NULL, packed bytea NOT NULL, PRIMARY KEY (survey_id, id));
CREATE INDEX ON {p}report (survey_id, submission_id);
CREATE TABLE {p}tallycell (survey_id bigint NOT NULL, randomization_id bigint NOT NULL, shard smallint NOT NULL,
  cell integer NOT NULL, count bigint NOT NULL, PRIMARY KEY (survey_id, randomization_id, shard, cell));
"""
PARTITIONED = """
CREATE TABLE {p}report (survey_id bigint NOT NULL, id bigint NOT NULL, submission_id bigint NOT NULL,
  randomization_id bigint NOT NULL, packed bytea NOT NULL, PRIMARY KEY (survey_id, id)) PARTITION BY HASH (survey_id);
CREATE INDEX ON {p}report (survey_id, submission_id);
CREATE TABLE {p}tallycell (survey_id bigint NOT NULL, randomization_id bigint NOT NULL, shard smallint NOT NULL,
  cell integer NOT NULL, count bigint NOT NULL, PRIMARY KEY (survey_id, randomization_id, shard, cell))
  PARTITION BY HASH (survey_id);
"""
SUBMIT = """
WITH r AS (
  INSERT INTO {p}report (survey_id, id, submission_id, randomization_id, packed)
  SELECT %(survey)s, v.id, %(submission)s, v.randomization, v.packed
  FROM unnest(%(ids)s::bigint[], %(randomizations)s::bigint[], %(packed)s::bytea[]) AS v(id, randomization, packed)
)
INSERT INTO {p}tallycell (survey_id, randomization_id, shard, cell, count)
SELECT %(survey)s, v.randomization, %(shard)s, v.cell, 1
FROM unnest(%(randomizations)s::bigint[], %(cells)s::integer[]) AS v(randomization, cell)
ON CONFLICT (survey_id, randomization_id, shard, cell) DO UPDATE SET count = {p}tallycell.count + 1
"""
TALLY = (
    "SELECT randomization_id, cell, sum(count) FROM {p}tallycell WHERE survey_id = %s GROUP BY randomization_id, cell"
)
PAGE = (
    "SELECT submission_id, randomization_id, packed FROM {p}report "
    "WHERE survey_id = %s AND id > %s ORDER BY id LIMIT 2000"
)


def create(cursor: psycopg.Cursor, prefix: str, partitions: int) -> None:
    if prefix == "plain_":
        cursor.execute(PLAIN.format(p=prefix))
        return
    cursor.execute(PARTITIONED.format(p=prefix))
    for table in ("report", "tallycell"):
        for i in range(partitions):
            cursor.execute(
                f"CREATE TABLE {prefix}{table}_{i} PARTITION OF {prefix}{table} "
                f"FOR VALUES WITH (MODULUS {partitions}, REMAINDER {i})"
            )


def load(cursor: psycopg.Cursor, prefix: str, reports: int, surveys: int) -> float:
    """N reports spread over the surveys (random ids), then their tally cells; seconds taken."""
    started = time.perf_counter()
    cursor.execute(
        f"INSERT INTO {prefix}report (survey_id, id, submission_id, randomization_id, packed) "
        "SELECT 1 + (g %% %(surveys)s), 4294967296 + (random() * 4e18)::bigint, (g / %(questions)s), "
        "(1 + (g %% %(surveys)s)) * 100 + (g %% %(questions)s), '\\x01'::bytea FROM generate_series(0, %(n)s - 1) g",
        {"surveys": surveys, "questions": QUESTIONS, "n": reports},
    )
    cursor.execute(
        f"INSERT INTO {prefix}tallycell (survey_id, randomization_id, shard, cell, count) "
        "SELECT s, s * 100 + q, shard, cell, 1 + (random() * 100)::int FROM generate_series(1, %(surveys)s) s, "
        "generate_series(0, %(questions)s - 1) q, generate_series(0, %(shards)s - 1) shard, "
        "generate_series(-1, %(cells)s - 1) cell",
        {"surveys": surveys, "questions": QUESTIONS, "shards": SHARDS, "cells": CELLS},
    )
    cursor.execute(f"ANALYZE {prefix}report; ANALYZE {prefix}tallycell")
    return time.perf_counter() - started


def submit(connection: psycopg.Connection, prefix: str, surveys: int, rng: np.random.Generator) -> float:
    """One submission as the submit statement writes it, in autocommit; milliseconds taken."""
    survey = int(rng.integers(1, surveys + 1))
    params = {
        "survey": survey,
        "submission": int(rng.integers(2**40, 2**62)),
        "ids": [int(i) for i in rng.integers(2**40, 2**62, size=QUESTIONS)],
        "randomizations": [survey * 100 + q for q in range(QUESTIONS)],
        "packed": [b"\x02"] * QUESTIONS,
        "cells": [int(c) for c in rng.integers(0, CELLS, size=QUESTIONS)],
        "shard": int(rng.integers(0, SHARDS)),
    }
    started = time.perf_counter()
    connection.execute(SUBMIT.format(p=prefix), params)
    return 1000 * (time.perf_counter() - started)


def read(connection: psycopg.Connection, sql: str, params: list[object]) -> float:
    started = time.perf_counter()
    connection.execute(sql, params).fetchall()
    return 1000 * (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=int, default=1_000_000)
    parser.add_argument("--surveys", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--submissions", type=int, default=2000)
    parser.add_argument("--reads", type=int, default=200)
    args = parser.parse_args()
    with scratch_database("murmur_bench_partitions") as url:
        run(args, url)


def run(args: argparse.Namespace, url: str) -> None:
    kinds = {"plain": "plain_", "partitioned": "part_"}
    with psycopg.connect(url, autocommit=True) as connection:
        for prefix in kinds.values():
            create(connection.cursor(), prefix, args.partitions)
        for name, prefix in kinds.items():
            seconds = load(connection.cursor(), prefix, args.reports, args.surveys)
            print(
                f"{name:12s} bulk load of {args.reports:,} reports over {args.surveys} surveys and their tally "
                f"cells: {seconds:.1f} s (load average {os.getloadavg()[0]:.1f})"
            )
        rng = np.random.default_rng(1)
        timings: dict[str, dict[str, list[float]]] = {name: {"submit": [], "tally": [], "page": []} for name in kinds}
        for i in range(args.submissions):  # alternate, so both see the same moments of the machine's load
            for name, prefix in kinds.items() if i % 2 else reversed(kinds.items()):
                timings[name]["submit"].append(submit(connection, prefix, args.surveys, rng))
        for i in range(args.reads):
            survey = int(rng.integers(1, args.surveys + 1))
            for name, prefix in kinds.items() if i % 2 else reversed(kinds.items()):
                timings[name]["tally"].append(read(connection, TALLY.format(p=prefix), [survey]))
                timings[name]["page"].append(read(connection, PAGE.format(p=prefix), [survey, 0]))
        load_average = os.getloadavg()[0]
        labels = {
            "submit": f"submission (10 reports, 10 cell upserts), median of {args.submissions}",
            "tally": f"a survey's tally read ({QUESTIONS * SHARDS * (CELLS + 1)} cells), median of {args.reads}",
            "page": f"a keyset page of 2,000 of a survey's reports, median of {args.reads}",
        }
        for what, label in labels.items():
            plain, part = (statistics.median(timings[name][what]) for name in kinds)
            print(
                f"{label}: plain {plain:.2f} ms, partitioned ({args.partitions} hash partitions) {part:.2f} ms, "
                f"ratio {part / plain:.2f} (load average {load_average:.1f})"
            )


if __name__ == "__main__":
    main()
