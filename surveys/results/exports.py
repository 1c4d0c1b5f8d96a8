"""What the exports hold, as data: estimate rows, sufficient statistics, randomizations and reports.

The views in :mod:`surveys.views.exports` and :mod:`surveys.views.crosstab` write the small ones out
as CSV or JSON; the raw reports are written to a file by a job (:mod:`surveys.results.export_files`).
Nothing here builds a response. :class:`Table` (columns and an iterator of rows) is what every file
format is written from.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from surveys.kinds import SUMMARIES, summary_of
from surveys.models import Question, Randomization, Survey
from surveys.results import crosstabs, integrity, report_text
from surveys.results.estimates import SurveyState
from surveys.series import rounds


def crosstab_record(crosstab: crosstabs.Crosstab) -> dict[str, Any]:
    """The export of one cross-tab: how each question was randomized, the pair table, and the estimate."""

    def question(q: Question, r: Any) -> dict[str, Any]:
        spec = {"version": r.version, "mechanism": r.mechanism, "k": r.k, "epsilon": r.epsilon, "params": r.params}
        return {"question_id": q.pk, "question": q.text, "kind": q.kind, "options": q.options, **spec}

    record: dict[str, Any] = {
        "method": "post-hoc",
        "level": 0.95,
        "first": question(crosstab.first, crosstab.first_randomization),
        "second": question(crosstab.second, crosstab.second_randomization),
        "n": crosstab.n,
        "pair_table": crosstab.tally.table.tolist(),
        "enough": crosstab.enough,
        "expected_half_width": crosstab.expected_half_width,
    }
    estimate = crosstab.estimate
    if estimate is not None:
        conditional = estimate.conditional("first")
        joint_conditional = estimate.conditional("first", simultaneous=True)
        record |= {
            "unbiased": estimate.cells.tolist(),
            "consistent": estimate.consistent_cells.tolist(),
            "standard_error": estimate.standard_errors.tolist(),
            "low": estimate.bands.low.tolist(),
            "high": estimate.bands.high.tolist(),
            "simultaneous_low": estimate.simultaneous.low.tolist(),
            "simultaneous_high": estimate.simultaneous.high.tolist(),
            "conditional_on_first": _finite(conditional.shares),
            "conditional_low": _finite(conditional.bands.low),
            "conditional_high": _finite(conditional.bands.high),
            "conditional_simultaneous_low": _finite(joint_conditional.bands.low),
            "conditional_simultaneous_high": _finite(joint_conditional.bands.high),
            "conditional_noisy": conditional.noisy.tolist(),
        }
    return record


def _finite(values: np.ndarray) -> list[list[float | None]]:
    """NaN (an undefined conditional row) as null, which JSON can carry."""
    return [[None if np.isnan(v) else float(v) for v in row] for row in values]


#: A matrix item's block: its id and title, and the item's place in it (0 for the first item).
MATRIX_FIELDS = ("matrix_id", "matrix_title", "matrix_item_index")


def matrix_fields(questions: list[Question]) -> dict[int, dict[str, Any]]:
    """Per matrix item (by question id), :data:`MATRIX_FIELDS`; ``questions`` in the survey's order.

    A block's items stand together in that order, so an item's place is its count among its block's.
    """
    fields: dict[int, dict[str, Any]] = {}
    counts: dict[int, int] = {}
    for question in questions:
        if question.matrix_id is not None:
            assert question.matrix is not None
            index = counts[question.matrix_id] = counts.get(question.matrix_id, -1) + 1
            fields[question.pk] = dict(
                zip(MATRIX_FIELDS, (question.matrix_id, question.matrix.title, index), strict=True)
            )
    return fields


ESTIMATE_COLUMNS = [
    "round",
    "question_id",
    "question",
    "kind",
    "version",
    "versions",
    "mechanism",
    "k",
    "epsilon",
    "params",
    "n",
    "option_index",
    "option",
    "prefer_not_to_say",
    "raw_count",
    "unbiased",
    "standard_error",
    "unbiased_low",
    "unbiased_high",
    "consistent",
    "consistent_low",
    "consistent_high",
    "consistent_method",
    "enough",
    "expected_half_width",
    "reports_needed",
    "unbiased_band",
    "consistent_band",
    *integrity.EXPORT_FIELDS,
    "statistic",
    "p_value",
    "found",
    "found_by",
    *MATRIX_FIELDS,
]


def estimate_rows(survey: Survey) -> Iterator[dict[str, Any]]:
    """One row per question version and option (or summary) with reports: the page's numbers, and more.

    ``enough`` is the page's own verdict (:attr:`QuestionResult.enough`): where it is false the page
    withholds the estimate as noise, and the export says so beside the numbers. ``statistic`` says
    what a row estimates: an option's ``share``, a ``mean`` (numeric mechanisms, and ratings' shares
    summarized), or a rating's ``nps``.
    """
    state = SurveyState.read(survey)
    matrices = matrix_fields(state.questions)
    for result in state.all_results():
        if result.n:
            block = matrices.get(result.question.pk, {})
            yield from ({**row, **block} for row in result.summary.export_rows(result))


def tally_exports(survey: Survey) -> dict[str, list[dict[str, Any]]]:
    """Per summary that exports raw tallies (:attr:`surveys.kinds.base.Summary.tally_export`: free text's
    ``text_tallies``, multi-select's ``multi_select_tallies``), the sufficient statistics of every
    randomization with reports that it summarizes (:meth:`surveys.kinds.base.Summary.tally_record`)."""
    state = SurveyState.read(survey)
    exports: dict[str, list[dict[str, Any]]] = {s.tally_export: [] for s in SUMMARIES.values() if s.tally_export}
    for question in state.questions:
        for randomization in state.randomizations.get(question.pk, []):
            tally = state.tallies[randomization.pk]
            summary = summary_of(randomization.mechanism)
            if summary.tally_export and tally.n:
                exports[summary.tally_export].append(summary.tally_record(question, randomization, tally))
    return exports


def declared_pairs(survey: Survey) -> list[dict[str, Any]]:
    """Declared pairs' sufficient statistics: enough to re-estimate the joint cells and both marginals.

    ``counts`` is the pair mechanism's tally over k1 k2 answers (answer = first * k2 + second).
    """
    state = SurveyState.read(survey)
    records = []
    for question in state.questions:
        if question.pair_first is None or question.pair_second is None:
            continue
        for randomization in state.randomizations.get(question.pk, []):
            tally = state.tallies[randomization.pk]
            if not tally.n:
                continue
            records.append(
                {
                    "question_id": question.pk,
                    "first_question_id": question.pair_first.pk,
                    "second_question_id": question.pair_second.pk,
                    "first_options": question.pair_first.options,
                    "second_options": question.pair_second.options,
                    "k1": question.pair_first.k,
                    "k2": question.pair_second.k,
                    "version": randomization.version,
                    "mechanism": randomization.mechanism,
                    "k": randomization.k,
                    "epsilon": randomization.epsilon,
                    "params": randomization.params,
                    "n": tally.n,
                    "counts": tally.counts.tolist(),
                }
            )
    return records


def randomization_records(survey: Survey) -> list[dict[str, Any]]:
    """Every randomization of the survey's questions; ``memo`` names the layers of a recurring
    survey's memoized reports (:data:`ldp.memo.MEMO_LAYERS`), empty for one-layer reports."""
    records = []
    questions = list(survey.questions.select_related("matrix"))
    matrices = matrix_fields(questions)
    for question in questions:
        block = matrices.get(question.pk, dict.fromkeys(MATRIX_FIELDS))
        for r in question.randomizations.all():
            spec = r.build_mechanism().client_spec()
            memo = rounds.memo_block(survey, question, spec, r.memo_gamma)
            records.append(
                {
                    "round": survey.round_number,
                    "question_id": question.pk,
                    "memo": memo["layers"] if memo else "",
                    "memo_gamma": memo.get("gamma") if memo else None,
                    "question": question.text,
                    "kind": question.kind,
                    "unit": question.unit,
                    "options": question.options,
                    "version": r.version,
                    "mechanism": r.mechanism,
                    "k": r.k,
                    "epsilon": r.epsilon if math.isfinite(r.epsilon) else None,  # asked directly: no epsilon
                    "params": r.params,
                    "client_spec": spec,
                    # A declared pair: the two questions whose answers it randomizes as first * k2 + second.
                    "pair": [question.pair_first_id, question.pair_second_id] if question.pair_first_id else None,
                    **block,  # a matrix item's block and place in it (null for other questions)
                }
            )
    return records


#: Reports per page of the raw-report export, about: a page's submissions' reports are read in one query.
PAGE_REPORTS = 20_000


def page_submissions(survey: Survey) -> int:
    """Submissions per page: :data:`PAGE_REPORTS` over the survey's questions, so that a page's
    memory does not grow with the number of questions either."""
    return max(1, PAGE_REPORTS // max(1, survey.questions.count()))


@dataclass(frozen=True)
class Column:
    """One column of an export table: its name, and what its values are (``int``, ``float``,
    ``str``, or ``json``: a list or mapping a writer spells as JSON text)."""

    name: str
    type: str = "str"


#: A table's CSV body already spelled: pieces of text (whole lines) and how many rows each holds.
CsvBody = Callable[[], Iterator[tuple[str, int]]]


@dataclass
class Table:
    """An export as data: named columns and an iterator of rows (lists in column order).

    Every writer (CSV, JSON, XLSX here; statistics packages' formats elsewhere) takes one of these,
    so a new format needs no new query. Rows of the raw-report table come page by page
    (:func:`report_records`): iterating holds one page in memory, whatever n. ``csv_body``, where
    set, spells the same rows as CSV faster than row by row (:mod:`surveys.results.report_text`);
    :func:`csv_stream` uses it.
    """

    name: str
    columns: list[Column]
    rows: Iterable[list[Any]]
    csv_body: CsvBody | None = None

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]


def submission_pages(survey: Survey, size: int | None = None) -> Iterator[list[tuple[int, Any]]]:
    """The survey's submissions as (id, hour), ``size`` (:func:`page_submissions`) at a time, by keyset
    on the id (:func:`surveys.results.report_text.submission_pages`)."""
    return report_text.submission_pages(survey, size or page_submissions(survey))


def _randomizations(survey: Survey) -> dict[int, Randomization]:
    return {r.pk: r for q in survey.questions.all() for r in q.randomizations.all()}


def report_records(survey: Survey, page_size: int | None = None) -> Iterator[dict[str, Any]]:
    """Every stored report, decoded to its JSON form, a page of submissions at a time.

    Ordered by the submissions' random ids, so the order says nothing about arrival.
    """
    spelling = report_text.Spelling(_randomizations(survey))
    for page in report_text.raw_report_pages(survey, page_size or page_submissions(survey)):
        for submission_id, hour, question_id, randomization_id, packed in page:
            yield {
                "round": survey.round_number,
                "submission": submission_id,
                "received_hour": hour,
                "question_id": question_id,
                "version": spelling.randomizations[randomization_id].version,
                "report": spelling.mechanism(randomization_id).unpack_report(packed),
            }


def json_report_pieces(survey: Survey, page_size: int | None = None) -> Iterator[tuple[str, int]]:
    """:func:`json_report_stream` of every report, spelled a page at a time (:mod:`surveys.results.report_text`):
    pieces of text, each with the number of reports it holds."""
    head = {"survey": survey.title, "round": survey.round_number, "randomizations": randomization_records(survey)}
    yield json.dumps(head)[:-1] + ', "reports": [', 0
    spelling = report_text.Spelling(_randomizations(survey), csv=False)
    records = {pk: _report_record(survey, r.question_id, r.version) for pk, r in spelling.randomizations.items()}
    yield from report_text.json_records(
        report_text.raw_report_pages(survey, page_size or page_submissions(survey)), spelling, records
    )
    yield "]}", 0


def _report_record(survey: Survey, question_id: int, version: int) -> dict[str, Any]:
    """A report's JSON record with its submission, hour and report left as holes."""
    return {
        "round": survey.round_number,
        "submission": report_text.SUBMISSION,
        "received_hour": report_text.HOUR,
        "question_id": question_id,
        "version": version,
        "report": report_text.REPORT,
    }


def json_report_stream(survey: Survey, records: Iterable[dict[str, Any]] | None = None) -> Iterator[str]:
    """The survey's randomizations and every report (``records``, default :func:`report_records`) as JSON text."""
    if records is None:
        yield from (text for text, _count in json_report_pieces(survey))
        return
    head = {"survey": survey.title, "round": survey.round_number, "randomizations": randomization_records(survey)}
    yield json.dumps(head)[:-1] + ', "reports": ['
    for i, record in enumerate(records):
        yield ("," if i else "") + json.dumps(record, separators=(",", ":"))
    yield "]}"


REPORT_COLUMNS = [
    Column("round", "int"),
    Column("submission", "int"),
    Column("received_hour"),
    Column("question_id", "int"),
    Column("version", "int"),
    Column("mechanism"),
    Column("k", "int"),
    Column("epsilon", "float"),
    Column("params", "json"),
    Column("report", "json"),
    Column("matrix_id", "int"),
    Column("matrix_title"),
    Column("matrix_item_index", "int"),
]


def _report_row(record: dict[str, Any], r: dict[str, Any]) -> list[Any]:
    """A report's row of :data:`REPORT_COLUMNS`: its record (:func:`report_records`) and its randomization's."""
    return [
        record["round"],
        record["submission"],
        record["received_hour"],
        record["question_id"],
        record["version"],
        r["mechanism"],
        r["k"],
        r["epsilon"],
        r["params"],
        record["report"],
        *(r[name] for name in MATRIX_FIELDS),
    ]


def report_table(survey: Survey, page_size: int | None = None) -> Table:
    """The raw reports as a :class:`Table`: one row per report, its randomization beside it."""
    versions = {(r["question_id"], r["version"]): r for r in randomization_records(survey)}

    def rows() -> Iterator[list[Any]]:
        for record in report_records(survey, page_size):
            yield _report_row(record, versions[(record["question_id"], record["version"])])

    def csv_body() -> Iterator[tuple[str, int]]:
        holes = (report_text.SUBMISSION, report_text.HOUR, report_text.REPORT)
        spelling = report_text.Spelling(_randomizations(survey), csv=True)
        templates = {}
        for pk, r in spelling.randomizations.items():
            row = _report_row(_report_record(survey, r.question_id, r.version), versions[(r.question_id, r.version)])
            templates[pk] = [v if v in holes else csv_cell(v, c) for v, c in zip(row, REPORT_COLUMNS, strict=True)]
        yield from report_text.csv_lines(
            report_text.raw_report_pages(survey, page_size or page_submissions(survey)), spelling, templates
        )

    return Table("reports", REPORT_COLUMNS, rows(), csv_body)


_ESTIMATE_TYPES = {
    "round": "int",
    "question_id": "int",
    "version": "int",
    "versions": "json",
    "k": "int",
    "n": "int",
    "params": "json",
}


def estimate_table(survey: Survey) -> Table:
    """The estimate rows (:func:`estimate_rows`) as a :class:`Table` of :data:`ESTIMATE_COLUMNS`."""
    columns = [Column(name, _ESTIMATE_TYPES.get(name, "str")) for name in ESTIMATE_COLUMNS]
    return Table("estimates", columns, ([row.get(name) for name in ESTIMATE_COLUMNS] for row in estimate_rows(survey)))


def csv_cell(value: Any, column: Column) -> Any:
    """A value as a CSV cell: JSON for lists and mappings, empty for none."""
    if value is None:
        return ""
    if column.type == "json":
        return json.dumps(value, separators=(",", ":")) if column.name == "report" else json.dumps(value)
    return value


#: Excel opens a CSV file as UTF-8 (Korean intact) only when it starts with this byte-order mark.
CSV_BOM = "\ufeff"


def csv_pieces(table: Table, bom: bool = True) -> Iterator[tuple[str, int]]:
    """A table as CSV text (``table.csv_body`` where set), starting with the byte-order mark: pieces
    of about 64 kB or more, each with the number of rows it holds."""
    head = io.StringIO()
    if bom:
        head.write(CSV_BOM)
    csv.writer(head).writerow(table.names)
    if table.csv_body is not None:
        yield head.getvalue(), 0
        yield from table.csv_body()
        return
    buffer, writer, rows = head, csv.writer(head), 0
    for row in table.rows:
        writer.writerow([csv_cell(v, c) for v, c in zip(row, table.columns, strict=True)])
        rows += 1
        if buffer.tell() > 64_000:
            yield buffer.getvalue(), rows
            buffer.seek(0)
            buffer.truncate()
            rows = 0
    yield buffer.getvalue(), rows


def csv_stream(table: Table, bom: bool = True) -> Iterator[str]:
    """A table as CSV text in pieces (:func:`csv_pieces`), starting with the byte-order mark."""
    return (text for text, _rows in csv_pieces(table, bom))


def csv_report_stream(survey: Survey) -> Iterator[str]:
    return csv_stream(report_table(survey))
