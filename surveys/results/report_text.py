"""The raw-report export's rows spelled as text in bulk: CSV lines and JSON records, a page at a time.

Spelling a report row by row through ``csv.writer`` and ``json.dumps`` costs tens of microseconds a
report, most of it on what every report of a randomization shares (its question, mechanism, ε and
parameters, its matrix block) or on reports seen before (a k-RR report is one of k values). So the
row is compiled once per randomization into literal text with three holes (the submission, its
hour, the report), each hour is spelled once, and each distinct packed report is decoded and
spelled once (up to :data:`MEMO_REPORTS` of them per randomization; reports of mechanisms whose
reports rarely repeat, such as the count-mean sketch's bit vectors, are spelled as they come). The
text is what ``csv.writer`` (QUOTE_MINIMAL, ``\\r\\n``) and ``json.dumps`` give for the same row,
byte for byte: the literal parts are spelled by them, with placeholders in the holes.

Reports are read by keyset pages of submissions (:func:`raw_report_pages`): one indexed range
query for the page's submissions and one for their reports, so memory holds one page whatever n,
and no server-side cursor is needed (it works behind PgBouncer in transaction mode).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.models.expressions import RawSQL

from surveys.kinds import randomized_only
from surveys.models import Randomization, Report, Submission, Survey

#: Distinct reports decoded and spelled once per randomization, at most (their text kept in memory).
MEMO_REPORTS = 4096

#: One raw report: (submission id, received hour as ISO text, question id, randomization id, packed).
RawReport = tuple[int, str, int, int, bytes]


def submission_pages(survey: Survey, size: int) -> Iterator[list[tuple[int, Any]]]:
    """The survey's submissions as (id, hour), ``size`` at a time, by keyset on the id.

    Each page is one indexed range query (``submission_survey_id``): no server-side cursor, so it
    works behind PgBouncer in transaction mode, and no offset, so page 500 costs what page 1 does.
    """
    last: int | None = None
    while True:
        page = Submission.objects.filter(survey=survey)
        if last is not None:
            page = page.filter(pk__gt=last)
        rows = list(page.order_by("pk").values_list("pk", "received_hour")[:size])
        if not rows:
            return
        yield rows
        last = rows[-1][0]


def raw_report_pages(survey: Survey, size: int) -> Iterator[list[RawReport]]:
    """Every randomized report of the survey (:data:`RawReport`), by submission then question, one
    page of ``size`` submissions at a time (their reports in one query)."""
    hour_text: dict[Any, str] = {}
    for page in submission_pages(survey, size):
        hours = {}
        for submission_id, hour in page:
            if hour not in hour_text:
                hour_text[hour] = hour.isoformat()
            hours[submission_id] = hour_text[hour]
        reports = (
            # The survey too: on PostgreSQL the reports' one partition (docs/deployment.md). None asked directly.
            randomized_only(Report.objects.filter(survey=survey, submission_id__in=_id_set(list(hours))))
            .order_by("submission_id", "question_id")
            .values_list("submission_id", "question_id", "randomization_id", "packed")
        )
        sql, params = reports.query.sql_with_params()  # tuples straight from the driver: no model layer
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            yield [(s, hours[s], q, r, bytes(packed)) for s, q, r, packed in cursor]


def _id_set(ids: list[int]) -> Any:
    """``ids`` for an ``__in`` lookup: on PostgreSQL one array parameter (``unnest``), which binds
    in one step where a list binds one placeholder per id; a list elsewhere."""
    if connection.vendor == "postgresql":
        return RawSQL("SELECT unnest(%s::bigint[])", (ids,))
    return ids


def csv_cells(values: list[Any]) -> str:
    """``values`` as one CSV line without its terminator, as ``csv.writer`` spells them."""
    buffer = io.StringIO()
    csv.writer(buffer).writerow(values)
    return buffer.getvalue()[:-2]


def csv_text_cell(text: str) -> str:
    """A non-empty string as ``csv.writer``'s default (excel) dialect spells it among other cells:
    quoted, with its quotes doubled, when it holds a comma, a quote or a line break; as it is otherwise."""
    if "," in text or '"' in text or "\r" in text or "\n" in text:
        return '"' + text.replace('"', '""') + '"'
    return text


_COMPACT = json.JSONEncoder(separators=(",", ":"))


@dataclass
class Spelling:
    """Each randomization's reports decoded (``unpack_report``) and spelled as compact JSON text
    (``json.dumps(report, separators=(",", ":"))``), or as that text's CSV cell where ``csv``, once
    per distinct packed report: ``memo`` keeps up to ``limit`` (:data:`MEMO_REPORTS`) of them per
    randomization, so that a loop looks a report up before it calls :meth:`spell`."""

    randomizations: dict[int, Randomization]
    csv: bool = False
    limit: int = MEMO_REPORTS
    memo: dict[int, dict[bytes, str]] = field(init=False)
    _mechanisms: dict[int, Any] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.memo = {pk: {} for pk in self.randomizations}

    def mechanism(self, randomization_id: int) -> Any:
        if randomization_id not in self._mechanisms:
            self._mechanisms[randomization_id] = self.randomizations[randomization_id].build_mechanism()
        return self._mechanisms[randomization_id]

    def spell(self, randomization_id: int, packed: bytes) -> str:
        """One packed report's text (kept in :attr:`memo` while it has room)."""
        text = _COMPACT.encode(self.mechanism(randomization_id).unpack_report(packed))
        if self.csv:
            text = csv_text_cell(text)
        memo = self.memo[randomization_id]
        if len(memo) < self.limit:
            memo[packed] = text
        return text


#: Placeholders for the three holes of a compiled row; a row whose own text holds one is refused.
SUBMISSION, HOUR, REPORT = "\ue000submission\ue000", "\ue000hour\ue000", "\ue000report\ue000"


def _holes(text: str, placeholders: list[str]) -> tuple[str, ...] | None:
    """``text`` cut at each placeholder, in order: the literal parts, or None if one is not there once."""
    parts = []
    for placeholder in placeholders:
        if text.count(placeholder) != 1:
            return None
        before, text = text.split(placeholder)
        parts.append(before)
    return (*parts, text)


def _compiled(
    templates: dict[int, Any], spell: Callable[[Any], str], hole: Callable[[str], str]
) -> dict[int, tuple[str, ...]]:
    """Each randomization's row (its holes marked by :data:`SUBMISSION`, :data:`HOUR` and :data:`REPORT`,
    in that order) spelled and cut into the literal text around the holes."""
    compiled = {}
    for randomization_id, template in templates.items():
        parts = _holes(spell(template), [hole(SUBMISSION), hole(HOUR), hole(REPORT)])
        if parts is None:
            raise ValueError(f"template of randomization {randomization_id} holds a placeholder's text")
        compiled[randomization_id] = parts
    return compiled


def _spelled(
    pages: Iterator[list[RawReport]], spelling: Spelling, compiled: dict[int, tuple[str, ...]], hour_text: Callable
) -> Iterator[list[str]]:
    """Each page's reports as texts: a randomization's compiled parts around the submission id, the
    hour (``hour_text``, once per hour) and the report (:class:`Spelling`, once per distinct report)."""
    hours: dict[str, str] = {}
    memo, spell = spelling.memo, spelling.spell
    for page in pages:
        texts = []
        for submission, hour, _question, randomization_id, packed in page:
            a, b, c, d = compiled[randomization_id]
            if hour not in hours:
                hours[hour] = hour_text(hour)
            report = memo[randomization_id].get(packed) or spell(randomization_id, packed)
            texts.append(f"{a}{submission}{b}{hours[hour]}{c}{report}{d}")
        yield texts


def csv_lines(
    pages: Iterator[list[RawReport]], spelling: Spelling, rows: dict[int, list[Any]]
) -> Iterator[tuple[str, int]]:
    """Each page's reports as CSV lines (``\\r\\n``-terminated) in one string, with the page's report
    count; ``rows`` holds each randomization's row of cells (as ``csv.writer`` takes them) with holes."""
    compiled = {pk: (*parts[:-1], parts[-1] + "\r\n") for pk, parts in _compiled(rows, csv_cells, str).items()}
    for lines in _spelled(pages, spelling, compiled, lambda hour: csv_cells([hour])):
        yield "".join(lines), len(lines)


def json_records(
    pages: Iterator[list[RawReport]], spelling: Spelling, records: dict[int, dict[str, Any]]
) -> Iterator[tuple[str, int]]:
    """Each page's reports as compact JSON records joined by commas (a leading comma on every page
    but the first), with the page's report count; ``records`` holds each randomization's record with holes."""
    compiled = _compiled(records, lambda r: json.dumps(r, separators=(",", ":")), json.dumps)
    first = True
    for texts in _spelled(pages, spelling, compiled, json.dumps):
        if texts:
            yield ("" if first else ",") + ",".join(texts), len(texts)
            first = False
