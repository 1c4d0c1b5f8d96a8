"""Post-hoc pair counts kept by a job, so that a cross-tab page never reads a report.

The ``count_pairs`` job (:func:`run_count_pairs`, one per survey at a time) keeps, for every two
crossable randomizations of a survey, the table T of ``ldp.crosstab.PairTally`` in
:mod:`surveys.results.pair_models`:

- each **closed hour** (ended more than :data:`GRACE` ago: no submission of that hour can still
  commit) is counted once and added to the totals in the same transaction as its ledger row, so a
  re-run, a retry or a second job adds nothing twice, and a killed one adds nothing at all;
- the **open hours** (at most two) are recounted at every run and replace their previous counts.

Reports carry only their hour (``Submission.received_hour``), so the hour is the finest unit the
job can take; random ids give no order within it. An hour is read by keyset pages of its
submissions and their reports, each report turned into its own tally counts c, one matrix per
page holding every randomization's counts side by side; X^T X (one BLAS product) then holds every
pair's T and n at once. The cost is O(reports) per hour counted, once per closed hour; a page
reads O(cells). Submissions never write pair counts: a declared pair (one randomization over
k1 k2 answers) is an ordinary tally, kept by the submit statement.

If a folded hour's count of submissions no longer matches its hourly counter (a submission
committed after its hour was closed), the survey's totals are rebuilt from the reports in one
transaction.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any, cast

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils import timezone

from ldp.crosstab import MAX_CELLS, PairTally, crosses_post_hoc, report_counts
from ldp.mechanisms import Mechanism
from surveys.kinds import summary_of
from surveys.models import Randomization, Report, Submission, Survey
from surveys.responding import tallies
from surveys.responding.versions import survey_version
from surveys.results.pair_models import N_CELL, OpenPairCount, PairCount, PairHour

#: An hour is closed this long after it ends (a submission commits in milliseconds after its hour is read).
GRACE = timedelta(minutes=5)
#: Closed hours folded per transaction (their counts summed into one upsert of the totals).
HOURS_PER_TRANSACTION = 24
#: Submissions per keyset page while counting an hour.
PAGE = 2000
#: Rows per insert (five columns stay under SQLite's variable limit).
ROWS_PER_STATEMENT = 5000


def eligible(randomizations: Sequence[Randomization]) -> list[Randomization]:
    """The randomizations whose reports can be crossed post hoc: choices over the options, linear statistic."""
    found = []
    for randomization in randomizations:
        if not summary_of(randomization.mechanism).choice_reports:
            continue
        mechanism: Any = randomization.build_mechanism()
        if getattr(mechanism, "k", 0) and crosses_post_hoc(mechanism):
            found.append(randomization)
    return sorted(found, key=lambda r: r.pk)


def pairs(
    randomizations: Sequence[Randomization], mechanisms: dict[int, Mechanism]
) -> Iterator[tuple[Randomization, Randomization]]:
    """(a, b), a's id below b's, of different questions and at most ``MAX_CELLS`` cells."""
    for a, b in itertools.combinations(randomizations, 2):
        k_a, k_b = cast(Any, mechanisms[a.pk]).k, cast(Any, mechanisms[b.pk]).k
        if a.question_id != b.question_id and k_a * k_b <= MAX_CELLS:
            yield a, b


def _submission_pages(survey_id: int, hour: datetime) -> Iterator[list[int]]:
    """The hour's submission ids, by keyset pages of :data:`PAGE` (index ``submission_survey_hour``)."""
    rows = Submission.objects.filter(survey_id=survey_id, received_hour=hour).order_by("pk")
    last = None
    while True:
        page = rows if last is None else rows.filter(pk__gt=last)
        ids = list(page.values_list("pk", flat=True)[:PAGE])
        if not ids:
            return
        yield ids
        last = ids[-1]


def mechanisms_of(randomizations: Sequence[Randomization]) -> dict[int, Mechanism]:
    return {r.pk: cast(Mechanism, r.build_mechanism()) for r in randomizations}


def count_hour(
    survey_id: int, hour: datetime, randomizations: Sequence[Randomization], mechanisms: dict[int, Mechanism]
) -> tuple[int, dict[tuple[int, int], PairTally]]:
    """(submissions in the hour, every pair's PairTally over them), read from the hour's reports."""
    sizes = {pk: m.empty_tally().counts.size for pk, m in mechanisms.items()}
    offsets, width = {}, 0
    for r in randomizations:
        offsets[r.pk], width = width, width + sizes[r.pk]
    answered = {r.pk: width + i for i, r in enumerate(randomizations)}
    columns = width + len(randomizations)
    gram = np.zeros((columns, columns))
    submissions = 0
    for ids in _submission_pages(survey_id, hour):
        submissions += len(ids)
        order = np.array(ids, dtype=np.int64)  # ascending: the keyset order
        reports: dict[int, tuple[list[int], list[bytes]]] = defaultdict(lambda: ([], []))
        found = Report.objects.filter(  # the survey: one partition (docs/deployment.md)
            survey_id=survey_id, submission_id__in=ids, randomization_id__in=list(mechanisms)
        ).values_list("submission_id", "randomization_id", "packed")
        for submission_id, randomization_id, packed in found:
            rows, values = reports[randomization_id]
            rows.append(submission_id)
            values.append(bytes(packed))
        x = np.zeros((len(ids), columns))
        for pk, (rows, values) in reports.items():
            mechanism = mechanisms[pk]
            unique, inverse = np.unique(mechanism.unpack_many(b"".join(values)), axis=0, return_inverse=True)
            at = np.searchsorted(order, np.array(rows, dtype=np.int64))
            x[at, offsets[pk] : offsets[pk] + sizes[pk]] = report_counts(mechanism, unique)[inverse.ravel()]
            x[at, answered[pk]] = 1
        gram += x.T @ x  # exact: integer sums far below 2^53
    counts = np.rint(gram).astype(np.int64)
    found_pairs = {}
    for a, b in pairs(randomizations, mechanisms):
        n = int(counts[answered[a.pk], answered[b.pk]])
        block = counts[offsets[a.pk] : offsets[a.pk] + sizes[a.pk], offsets[b.pk] : offsets[b.pk] + sizes[b.pk]]
        found_pairs[(a.pk, b.pk)] = PairTally(n, block.copy())
    return submissions, found_pairs


def _rows(counted: dict[tuple[int, int], PairTally]) -> list[tuple[int, int, int, int]]:
    """(first, second, cell, count) for every pair answered together: n, then the non-zero cells."""
    rows = []
    for (a, b), tally in counted.items():
        if not tally.n:
            continue
        rows.append((a, b, N_CELL, tally.n))
        flat = tally.table.ravel()
        rows.extend((a, b, int(cell), int(flat[cell])) for cell in np.flatnonzero(flat))
    return rows


def _add_to_totals(survey_id: int, counted: dict[tuple[int, int], PairTally]) -> None:
    rows = [(survey_id, *row) for row in _rows(counted)]
    table = PairCount._meta.db_table
    columns, key = ("survey_id", "first_id", "second_id", "cell", "count"), ("first_id", "second_id", "cell")
    for start in range(0, len(rows), ROWS_PER_STATEMENT):
        tallies.upsert_adding(table, columns, key, rows[start : start + ROWS_PER_STATEMENT])


def _replace_open(survey_id: int, hour: datetime, counted: dict[tuple[int, int], PairTally]) -> None:
    with transaction.atomic():
        OpenPairCount.objects.filter(survey_id=survey_id, hour=hour).delete()
        OpenPairCount.objects.bulk_create(
            (
                OpenPairCount(survey_id=survey_id, hour=hour, first_id=a, second_id=b, cell=cell, count=count)
                for a, b, cell, count in _rows(counted)
            ),
            batch_size=ROWS_PER_STATEMENT,
        )


def fold_hours(
    survey_id: int, hours: Sequence[datetime], randomizations: Sequence[Randomization], mechanisms: dict[int, Mechanism]
) -> int:
    """Add closed hours to the totals, once: their ledger rows, their summed counts (one upsert) and
    the removal of their open counts commit together. Hours folded already (by this job before, or
    another) make the batch roll back; each hour is then tried alone. Returns the hours folded."""
    try:
        with transaction.atomic():
            marks = PairHour.objects.bulk_create(PairHour(survey_id=survey_id, hour=hour) for hour in hours)
            summed: dict[tuple[int, int], PairTally] = {}
            for mark in marks:
                mark.submissions, counted = count_hour(survey_id, mark.hour, randomizations, mechanisms)
                for key, tally in counted.items():
                    before = summed.get(key)
                    summed[key] = tally if before is None else PairTally(before.n + tally.n, before.table + tally.table)
            _add_to_totals(survey_id, summed)
            PairHour.objects.bulk_update(marks, ["submissions"])
            OpenPairCount.objects.filter(survey_id=survey_id, hour__in=list(hours)).delete()
    except IntegrityError:
        if len(hours) == 1:
            return 0  # its ledger row exists: folded already
        return sum(fold_hours(survey_id, [hour], randomizations, mechanisms) for hour in hours)
    return len(hours)


def closed(hour: datetime, now: datetime) -> bool:
    """Whether no submission of ``hour`` can still commit at ``now``."""
    return hour + timedelta(hours=1) + GRACE <= now


def count_survey(survey: Survey, progress: Any = None) -> dict[str, int]:
    """Fold the survey's closed hours not folded yet and recount its open hours (the job's work)."""
    randomizations = eligible(list(Randomization.objects.filter(question__survey=survey)))
    mechanisms = mechanisms_of(randomizations)
    now = timezone.now()
    hours = tallies.hourly_counts(survey)
    folded = dict(PairHour.objects.filter(survey=survey).values_list("hour", "submissions"))
    late = any(folded[hour] != count for hour, count in hours if hour in folded)
    to_fold = [hour for hour, _count in hours if closed(hour, now) and (late or hour not in folded)]
    done = 0
    with transaction.atomic() if late else contextlib.nullcontext():
        if late:  # a submission committed after its hour was folded: rebuild the totals, atomically
            PairCount.objects.filter(survey=survey).delete()
            PairHour.objects.filter(survey=survey).delete()
        for start in range(0, len(to_fold), HOURS_PER_TRANSACTION):
            batch = to_fold[start : start + HOURS_PER_TRANSACTION]
            done += fold_hours(survey.pk, batch, randomizations, mechanisms)
            if progress is not None:
                progress(start + len(batch), len(to_fold))
    open_hours = [hour for hour, _count in hours if not closed(hour, now)]
    for hour in open_hours:
        _replace_open(survey.pk, hour, count_hour(survey.pk, hour, randomizations, mechanisms)[1])
    OpenPairCount.objects.filter(survey=survey, hour__lt=now - timedelta(hours=1) - GRACE).exclude(
        hour__in=open_hours
    ).delete()
    return {"folded": done, "open": len(open_hours), "rebuilt": int(late)}


def run_count_pairs(job: Any, progress: Any) -> dict[str, int]:
    """The ``count_pairs`` task: bring a survey's pair counts up to now, then say so (:func:`stamp`)."""
    from surveys.jobs import guard

    guard.off_request_path("Counting pairs of reports")
    survey = job.survey
    version = survey_version(survey)
    result = count_survey(survey, progress)
    cache.set(_stamp_key(survey.pk), (version, time.time()), None)
    return {**result, "version": version}


def _stamp_key(survey_id: int) -> str:
    return f"murmur:pairs:{survey_id}"


def stamp(survey: Survey) -> tuple[int, float] | None:
    """(the survey's version, the time) of the last completed count, or None before the first."""
    found: tuple[int, float] | None = cache.get(_stamp_key(survey.pk))
    return found


def keep_fresh(survey: Survey, version: int) -> tuple[int, float] | None:
    """The last count's stamp; queue a count (one per survey at a time) if responses came since it
    and it is older than ``PAIR_REFRESH_SECONDS``, or if there is none. Never counts in the request."""
    last = stamp(survey)
    if last is None or (last[0] != version and time.time() - last[1] >= settings.PAIR_REFRESH_SECONDS):
        from surveys.jobs import queue

        queue.enqueue("count_pairs", survey, key=f"pairs:{survey.pk}", params={})
        last = stamp(survey)  # the synchronous transport has counted already
    return last


def read_pair_tally(first: Randomization, second: Randomization, sizes: tuple[int, int]) -> PairTally:
    """The pair's table from the stored counts (closed hours' totals plus open hours): O(cells).

    ``sizes`` are the two mechanisms' tally sizes; the table is first x second whichever id is lower.
    """
    swap = first.pk > second.pk
    a, b = (second, first) if swap else (first, second)
    size_a, size_b = (sizes[1], sizes[0]) if swap else sizes
    totals: dict[int, int] = defaultdict(int)
    for model in (PairCount, OpenPairCount):
        rows = model.objects.filter(first=a, second=b).values_list("cell").annotate(total=Sum("count")).order_by()
        for cell, total in rows:
            totals[cell] += int(total)
    flat = np.zeros(size_a * size_b, dtype=np.int64)
    for cell, total in totals.items():
        if 0 <= cell < flat.size:
            flat[cell] = total
    table = flat.reshape(size_a, size_b)
    return PairTally(totals.get(N_CELL, 0), table.T.copy() if swap else table)


def pair_digest(tally: PairTally) -> str:
    """A fingerprint of a pair table: equal tables, equal digests."""
    digest = hashlib.blake2b(digest_size=8)
    digest.update(int(tally.n).to_bytes(8, "little"))
    digest.update(np.ascontiguousarray(tally.table, dtype=np.int64).tobytes())
    return digest.hexdigest()
