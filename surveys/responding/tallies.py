"""Running sufficient statistics in the database: sharded tally cells and hourly counters.

The storage design (``docs/deployment.md`` says why):

- Reports are append-only rows with random ids.
- Each randomization's ldp ``Tally`` is kept as :class:`~surveys.models.TallyCell` rows keyed by
  (survey, randomization, shard, cell): the survey leads every key, and on PostgreSQL the table is
  partitioned by it, so a reader that names the survey reads one partition. A submission picks
  one shard at random; its counts reach that shard's cells through a pending row (below), added
  by a fold with **one** ``INSERT ... ON CONFLICT DO UPDATE SET count = count + excluded.count``
  per batch, so submissions that drew different shards never meet on a cell. Rows are written in
  one global order (survey, randomization, shard, cell), so concurrent upserts cannot deadlock.
- The hourly response counter is sharded the same way, one upsert per submission.
- Readers sum the shards in the database (``GROUP BY``): O(cells x shards) rows, never O(reports).
- A submission does not update the cells itself: it appends one :class:`~surveys.models.TallyDelta`
  row holding its reports (:func:`delta_payload`), and :func:`fold_deltas` adds pending rows to the
  cells and deletes them in one transaction, off the request path (the results refresh job and the
  job worker's sweep). Readers add the survey's pending rows in the same statement that sums the
  cells (one snapshot), so the exactness above holds at every moment: a fold moves counts from
  pending rows to cells atomically. About 57 row updates a ten-question submission become one insert.
- For bit-vector mechanisms (unary encodings, dBitFlip, CMS) extra cells from
  ``TallyCell.PROFILE_CELL`` down hold ``ldp.integrity.weight_profile`` flattened row by row:
  the reports by their number of one-bits w and, for unary encodings, by weight and
  bucket bit, the per-report statistics of the manipulation check: (d + 1)(k + 1) cells at most,
  of which a report touches 1 + w.
  Reports stored before these cells existed are simply not in the histogram (the test uses any
  subset of the reports), so no backfill is needed.

Both SQLite (3.24+) and PostgreSQL speak the same upsert.
"""

from __future__ import annotations

import hashlib
import secrets
import struct
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, cast

import numpy as np
from django.conf import settings
from django.db import connection, models, transaction

import ldp
from ldp import integrity
from surveys.models import HourlyResponses, Question, Randomization, Survey, SurveyVersion, TallyCell, TallyDelta

#: Rows per upsert statement: 5 parameters a row stays under SQLite's 32,766-variable limit.
ROWS_PER_STATEMENT = 6000


def pick_shard() -> int:
    """A shard for one submission, uniformly at random."""
    return secrets.randbelow(settings.TALLY_SHARDS)


def tally_rows(
    survey_id: int, randomization: Randomization, packed_reports: Sequence[bytes], shard: int
) -> list[tuple[int, int, int, int, int]]:
    """(survey id, randomization id, shard, cell, increment) for the non-zero cells of these reports'
    tally; ``survey_id`` is the randomization's question's survey."""
    cells = report_cells(randomization.build_mechanism(), packed_reports)
    return [(survey_id, randomization.pk, shard, cell, increment) for cell, increment in cells]


def report_cells(mechanism: Any, packed_reports: Sequence[bytes]) -> list[tuple[int, int]]:
    """(cell, increment) for the non-zero cells of these reports' tally, weight profile included."""
    packed = mechanism.unpack_many(b"".join(packed_reports))
    batch = mechanism.tally(packed)
    cells = np.flatnonzero(batch.counts)
    rows = [(TallyCell.N_CELL, int(batch.n))]
    rows.extend((int(c), int(batch.counts[c])) for c in cells)
    # ldp.integrity answers None for any mechanism without weights; its annotation names only Mechanism.
    profile = integrity.weight_profile(cast(ldp.Mechanism, mechanism), packed)
    if profile is not None:
        flat = profile.ravel()
        cells = np.flatnonzero(flat)
        rows.extend((TallyCell.PROFILE_CELL - int(i), int(flat[i])) for i in cells)
    return rows


def merge_rows(rows: Iterable[tuple[int, ...]]) -> list[tuple[int, int, int, int, int]]:
    """Increments summed per cell, in the one global lock order (survey, randomization, shard, cell).

    Every writer locks cells in this order, so concurrent upserts cannot deadlock.
    """
    merged: dict[tuple[int, int, int, int], int] = defaultdict(int)
    for survey_id, randomization_id, shard, cell, increment in rows:
        merged[(survey_id, randomization_id, shard, cell)] += increment
    return [(*key, increment) for key, increment in sorted(merged.items())]


def add_rows(rows: Iterable[tuple[int, ...]]) -> None:
    """Add increments to tally cells, creating missing cells (call inside a transaction)."""
    ordered = merge_rows(rows)
    table = TallyCell._meta.db_table
    for start in range(0, len(ordered), ROWS_PER_STATEMENT):
        chunk = ordered[start : start + ROWS_PER_STATEMENT]
        upsert_adding(table, (*CELL_KEY, "count"), CELL_KEY, chunk)


#: The tally cells' key, and the conflict target of their upserts.
CELL_KEY = ("survey_id", "randomization_id", "shard", "cell")


def add_to_tally(randomization: Randomization, packed_reports: Sequence[bytes], shard: int | None = None) -> None:
    """Add stored reports of one randomization to its tally (call inside a transaction)."""
    if packed_reports:
        survey_id = survey_ids_of([randomization])[randomization.pk]
        add_rows(tally_rows(survey_id, randomization, packed_reports, pick_shard() if shard is None else shard))


def survey_ids_of(randomizations: Iterable[Randomization]) -> dict[int, int]:
    """Each randomization's survey id: from its question where loaded, the rest in one query."""
    found, missing = {}, {}
    for r in randomizations:
        if Randomization.question.is_cached(r):
            found[r.pk] = r.question.survey_id
        else:
            missing[r.pk] = r.question_id
    if missing:
        survey_of = dict(Question.objects.filter(pk__in=set(missing.values())).values_list("pk", "survey_id"))
        found.update((pk, survey_of[question_id]) for pk, question_id in missing.items())
    return found


def count_responses(survey: Survey, hour: datetime, count: int, shard: int | None = None) -> None:
    """Add ``count`` submissions to the survey's counter for ``hour`` and to its version (call inside
    a transaction)."""
    table = HourlyResponses._meta.db_table
    shard = pick_shard() if shard is None else shard
    row = (survey.pk, connection.ops.adapt_datetimefield_value(hour), shard, count)
    upsert_adding(table, ("survey_id", "hour", "shard", "count"), ("survey_id", "hour", "shard"), [row])
    bump_version(survey, count, shard)


def bump_version(survey: Survey, count: int, shard: int) -> None:
    """Add ``count`` submissions to the survey's version counter (:mod:`surveys.responding.versions`)."""
    table = SurveyVersion._meta.db_table
    upsert_adding(table, ("survey_id", "shard", "count"), ("survey_id", "shard"), [(survey.pk, shard, count)])


def upsert_adding(table: str, columns: Sequence[str], key: Sequence[str], rows: Sequence[tuple[object, ...]]) -> None:
    """``INSERT ... ON CONFLICT (key) DO UPDATE SET count = count + excluded.count``, one statement.

    On PostgreSQL the rows travel as one array per column (``unnest``): four parameters however
    many rows, which keeps the statement cheap to build and to parse.
    """
    quote = connection.ops.quote_name
    names = ", ".join(quote(c) for c in columns)
    count = quote("count")
    conflict = (
        f"ON CONFLICT ({', '.join(quote(c) for c in key)}) "
        f"DO UPDATE SET {count} = {quote(table)}.{count} + excluded.{count}"
    )
    if connection.vendor == "postgresql":
        types = [UNNEST_TYPES[c] for c in columns]
        arrays = ", ".join(f"%s::{t}[]" for t in types)
        sql = f"INSERT INTO {quote(table)} ({names}) SELECT * FROM unnest({arrays}) {conflict}"
        params: list[Any] = [list(column) for column in zip(*rows, strict=True)]
    else:
        row = "(" + ", ".join(["%s"] * len(columns)) + ")"
        sql = f"INSERT INTO {quote(table)} ({names}) VALUES {', '.join([row] * len(rows))} {conflict}"
        params = [value for r in rows for value in r]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


#: PostgreSQL element types of the upserted columns.
UNNEST_TYPES = {
    "randomization_id": "bigint",
    "first_id": "bigint",
    "second_id": "bigint",
    "survey_id": "bigint",
    "shard": "smallint",
    "cell": "integer",
    "count": "bigint",
    "hour": "timestamptz",
}


def read_tallies(randomizations: Iterable[Randomization]) -> dict[int, ldp.Tally]:
    """Each randomization's tally: its cells summed over shards in the database, plus the pending
    increments of its survey (:class:`~surveys.models.TallyDelta`), read in one statement (one snapshot)."""
    by_id = {r.pk: r for r in randomizations}
    mechanisms = {pk: r.build_mechanism() for pk, r in by_id.items()}
    counts = {pk: m.empty_tally().counts.copy() for pk, m in mechanisms.items()}
    profiles = {pk: integrity.empty_profile(cast(ldp.Mechanism, m)) for pk, m in mechanisms.items()}
    n = dict.fromkeys(by_id, 0)
    rows, pending = _cells_and_pending(survey_ids_of(by_id.values()))
    for randomization_id, packed in pending.items():
        cells = report_cells(mechanisms[randomization_id], packed)
        rows.extend((randomization_id, cell, increment) for cell, increment in cells)
    for randomization_id, cell, total in rows:
        if cell == TallyCell.N_CELL:
            n[randomization_id] += int(total)
        elif cell <= TallyCell.PROFILE_CELL:
            profile = profiles[randomization_id]
            if profile is not None and TallyCell.PROFILE_CELL - cell < profile.size:
                profile.flat[TallyCell.PROFILE_CELL - cell] += int(total)
        else:
            counts[randomization_id][cell] += int(total)
    return {pk: ldp.Tally(n[pk], counts[pk], profiles[pk]) for pk in by_id}


def _cells_and_pending(surveys: dict[int, int]) -> tuple[list[tuple[int, int, int]], dict[int, list[bytes]]]:
    """(randomization, cell, total) summed over shards, and the pending reports of these
    randomizations (``surveys``: randomization id -> its survey id), from one statement: a fold
    commits between no two reads. Both tables are filtered by the surveys as constants, so
    PostgreSQL reads only their partitions of the cells."""
    if not surveys:
        return [], {}
    ids, survey_ids = list(surveys), sorted(set(surveys.values()))
    quote = connection.ops.quote_name
    marks, survey_marks = ", ".join(["%s"] * len(ids)), ", ".join(["%s"] * len(survey_ids))
    sql = (
        f"SELECT randomization_id, cell, SUM({quote('count')}), NULL FROM {TallyCell._meta.db_table} "
        f"WHERE survey_id IN ({survey_marks}) AND randomization_id IN ({marks}) GROUP BY randomization_id, cell "
        f"UNION ALL SELECT NULL, NULL, NULL, payload FROM {TallyDelta._meta.db_table} "
        f"WHERE survey_id IN ({survey_marks})"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*survey_ids, *ids, *survey_ids])
        fetched = cursor.fetchall()
    wanted = set(ids)
    rows = [(r, c, t) for r, c, t, payload in fetched if payload is None]
    pending: dict[int, list[bytes]] = defaultdict(list)
    for *_, payload in fetched:
        if payload is not None:
            for randomization_id, packed in parse_payload(bytes(payload)):
                if randomization_id in wanted:
                    pending[randomization_id].append(packed)
    return rows, pending


#: A pending report in a :class:`~surveys.models.TallyDelta` payload: its randomization's id and
#: its packed length, then its bytes.
_ITEM = struct.Struct("<qI")


def delta_payload(reports: Iterable[tuple[int, bytes]]) -> bytes:
    """A submission's (randomization id, packed report) pairs as one :class:`~surveys.models.TallyDelta` payload."""
    return b"".join(_ITEM.pack(pk, len(packed)) + packed for pk, packed in reports)


def parse_payload(payload: bytes) -> list[tuple[int, bytes]]:
    """The (randomization id, packed report) pairs of a payload (:func:`delta_payload`)."""
    items, offset = [], 0
    while offset < len(payload):
        pk, length = _ITEM.unpack_from(payload, offset)
        offset += _ITEM.size
        items.append((pk, payload[offset : offset + length]))
        offset += length
    return items


def add_pending(survey_id: int, shard: int, reports: Iterable[tuple[int, bytes]]) -> None:
    """Append a submission's reports as pending increments (call inside its transaction)."""
    TallyDelta.objects.create(survey_id=survey_id, shard=shard, payload=delta_payload(reports))


def fold_deltas(survey: Survey | None = None, limit: int = 5000) -> int:
    """Add up to ``limit`` pending rows (of one survey, or of all) to the tally cells and delete
    them, in one transaction; how many were folded.

    Rows another fold holds are skipped (``SKIP LOCKED``), so folds run side by side. Reports of a
    randomization deleted meanwhile (with its reports) are dropped with their row.
    """
    with transaction.atomic():
        pending = TallyDelta.objects.all() if survey is None else TallyDelta.objects.filter(survey=survey)
        rows = list(
            pending.select_for_update(skip_locked=True).values_list("survey_id", "id", "shard", "payload")[:limit]
        )
        if not rows:
            return 0
        grouped: dict[tuple[int, int, int], list[bytes]] = defaultdict(list)
        for survey_id, _id, shard, payload in rows:
            for randomization_id, packed in parse_payload(bytes(payload)):
                grouped[(survey_id, randomization_id, shard)].append(packed)
        known = Randomization.objects.in_bulk({randomization_id for _, randomization_id, _ in grouped})
        cells: list[tuple[int, int, int, int, int]] = []
        for (survey_id, randomization_id, shard), reports in grouped.items():
            if randomization_id in known:
                cells.extend(tally_rows(survey_id, known[randomization_id], reports, shard))
        add_rows(cells)
        TallyDelta.objects.filter(pk__in=[(survey_id, pk) for survey_id, pk, *_ in rows]).delete()
    return len(rows)


def tally_digest(tally: ldp.Tally) -> str:
    """A short fingerprint of a tally's contents: equal tallies, equal digests."""
    digest = hashlib.blake2b(digest_size=8)
    digest.update(int(tally.n).to_bytes(8, "little"))
    digest.update(np.ascontiguousarray(tally.counts, dtype=np.int64).tobytes())
    return digest.hexdigest()


def hourly_counts(survey: Survey) -> list[tuple[datetime, int]]:
    """(hour, submissions) for every hour with submissions, shards summed in the database."""
    rows = (
        HourlyResponses.objects.filter(survey=survey)
        .values_list("hour")
        .annotate(total=models.Sum("count"))
        .order_by("hour")
    )
    return [(hour, int(total)) for hour, total in rows]
