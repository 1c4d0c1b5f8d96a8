"""A two-phase question's exports: its estimate pools two randomization versions, and every export of
the estimate says which (``versions``), while every raw report keeps the version it was sent under.

The survey is tests/surveys/test_adaptive.py's: k-RR until 300 reports, then subset selection.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter

import pytest
from django.urls import reverse

from surveys.actions import sync_randomization
from surveys.responding import retune
from surveys.results import exports, stats_exports
from surveys.results.export_files import sheet_cell
from surveys.results.exports import ESTIMATE_COLUMNS, estimate_rows, report_records, report_table
from tests.base import make_question
from tests.base import make_reports as store_reports
from tests.surveys.test_adaptive import answers, phase_one, two_phase_survey
from tests.surveys.test_api import call, make_token

LATER = 200


@pytest.fixture
def pooled(organizer):
    """The survey, its two-phase question after the switch, and a one-version question beside it."""
    survey, question = two_phase_survey(organizer)
    plain = make_question(survey, text="Plain?", options=["Yes", "No"])
    sync_randomization(plain)  # added to the open survey: randomized as the builder's add does
    phase_one(question, seed=21)
    retune.retune_question(question.pk)
    question.refresh_from_db()
    store_reports(question, answers(LATER, 22), seed=23)
    store_reports(plain, [0, 1] * 10, seed=24)
    first, second = question.randomizations.order_by("version")
    assert first.mechanism != second.mechanism  # the switch happened (k-RR to subset selection)
    return survey, question, plain, first, second


def rows_of(rows, question):
    return [row for row in rows if int(row["question_id"]) == question.pk]


def test_every_estimate_export_names_both_versions_of_a_pooled_estimate(organizer_client, pooled):
    survey, question, plain, first, second = pooled
    n = 300 + LATER
    assert "versions" in ESTIMATE_COLUMNS
    rows = rows_of(estimate_rows(survey), question)
    assert rows and all(row["versions"] == [1, 2] and row["version"] == 2 and row["n"] == n for row in rows)
    assert all(row["versions"] == [1] for row in rows_of(estimate_rows(survey), plain))
    # CSV and JSON downloads, and the API's estimates.
    body = organizer_client.get(reverse("export_estimates", args=[survey.pk, "csv"])).content.decode("utf-8-sig")
    csv_rows = rows_of(csv.DictReader(io.StringIO(body)), question)
    assert csv_rows and {row["versions"] for row in csv_rows} == {"[1, 2]"}
    payload = organizer_client.get(reverse("export_estimates", args=[survey.pk, "json"])).json()
    assert {tuple(row["versions"]) for row in rows_of(payload["estimates"], question)} == {(1, 2)}
    token = make_token(survey.owner, scope="read")
    api = call(organizer_client, token, "get", f"/api/v1/surveys/{survey.pk}/estimates").json()
    assert {tuple(row["versions"]) for row in rows_of(api["estimates"], question)} == {(1, 2)}
    # The workbook's estimates sheet (the same table, cell by cell).
    table = exports.estimate_table(survey)
    index = table.names.index("versions")
    sheet = [row for row in table.rows if row[table.names.index("question_id")] == question.pk]
    assert {sheet_cell(row[index], table.columns[index]) for row in sheet} == {"[1,2]"}


def test_the_raw_reports_keep_each_reports_own_version_and_design(pooled):
    survey, question, plain, first, second = pooled
    versions = Counter(r["version"] for r in report_records(survey) if r["question_id"] == question.pk)
    assert versions == {1: 300, 2: LATER}
    table = report_table(survey)
    names = table.names
    designs = {1: first, 2: second}
    for row in table.rows:
        if row[names.index("question_id")] == question.pk:
            design = designs[row[names.index("version")]]
            assert (row[names.index("mechanism")], row[names.index("params")]) == (design.mechanism, design.params)
    frame, _labels, _values = stats_exports.report_frame(survey)
    ours = frame[frame["question_id"] == question.pk]
    assert Counter(ours["version"]) == {1: 300, 2: LATER}
    for version, design in designs.items():
        mine = ours[ours["version"] == version]
        assert set(mine["mechanism"]) == {design.mechanism}
        assert set(mine["params"]) == {json.dumps(design.params, sort_keys=True)}
