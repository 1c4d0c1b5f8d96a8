"""The raw-report export spelled in bulk (surveys/results/report_text.py): the same bytes as row by row."""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest
from django.urls import reverse

from surveys import actions
from surveys.models import Report
from surveys.results import export_files, exports, report_text
from tests.base import (
    make_joint_reports,
    make_multi_question,
    make_number_question,
    make_question,
    make_reports,
    make_set_reports,
    make_survey,
    make_text_question,
    make_text_reports,
)


@pytest.fixture
def mixed(organizer, organizer_client):
    """Reports of every family, a matrix block, a direct question, and text that CSV must quote."""
    survey = make_survey(organizer, title='Pulse, "Q4" 설문', epsilon_cap=100.0)
    choice = make_question(survey, text='Mood, "today"?', options=["좋음", "a,b", 'say "hi"'], mechanism="oue")
    data = {
        "title": 'Agree, "or" not\nat all',
        "items_text": "Tools\nTeam",
        "options_text": "No\nYes",
        "epsilon": "1.5",
        "mechanism": "auto",
    }
    assert organizer_client.post(reverse("matrix_add", args=[survey.pk]), data).status_code == 302
    number = make_number_question(survey)
    text = make_text_question(survey)
    multi = make_multi_question(survey)
    direct = make_question(survey, text="Region?", options=["North", "South"], epsilon=math.inf, mechanism="direct")
    krr = make_question(survey, text="Team?", options=["A", "B", "C", "D"], mechanism="krr")
    actions.do_open_survey(survey)
    rng = np.random.default_rng(11)
    items = list(survey.questions.filter(matrix__isnull=False).order_by("position"))
    columns = [choice, *items, krr, direct]
    answers = np.column_stack([rng.integers(0, q.k, size=60) for q in columns])
    answers[rng.random(answers.shape) < 0.2] = -1  # some skipped
    make_joint_reports(columns, answers, seed=3)
    make_reports(krr, [i % 4 for i in range(25)], seed=4)
    make_reports(number, list(rng.uniform(0, 40, size=20)), seed=5)
    make_text_reports(text, ["Seoul", "Busan", "Seoul"] * 5, seed=6)
    make_set_reports(multi, [[1, 0, 1, 0, 0], [0, 1, 0, 0, 0]] * 6, seed=7)
    return survey


def row_by_row(survey, page_size=None) -> str:
    """The report table written by ``csv.writer`` a row at a time (the table without its compiled body)."""
    table = exports.report_table(survey, page_size)
    return "".join(exports.csv_stream(exports.Table(table.name, table.columns, table.rows)))


@pytest.mark.parametrize("page_size", [1, 7, None])
def test_the_compiled_csv_is_the_row_by_row_csv_byte_for_byte(mixed, page_size):
    expected = row_by_row(mixed, page_size)
    compiled = "".join(exports.csv_stream(exports.report_table(mixed, page_size)))
    assert compiled == expected
    rows = list(csv.reader(io.StringIO(expected.removeprefix(exports.CSV_BOM))))
    assert rows[0] == [c.name for c in exports.REPORT_COLUMNS]
    stored = Report.objects.filter(question__survey=mixed).exclude(question__mechanism="direct").count()
    assert len(rows) - 1 == stored and stored < Report.objects.filter(question__survey=mixed).count()
    kinds = {row[5] for row in rows[1:]}
    assert {"oue", "krr", "piecewise", "text-cms", "set-oue"} <= kinds and "direct" not in kinds
    assert any(row[11] == 'Agree, "or" not\nat all' for row in rows[1:])  # quoted, quotes doubled, line kept


def test_a_full_memo_still_spells_every_report(mixed, monkeypatch):
    expected = row_by_row(mixed)
    monkeypatch.setattr(report_text, "MEMO_REPORTS", 0)
    monkeypatch.setattr(report_text.Spelling, "limit", 0)
    assert "".join(exports.csv_stream(exports.report_table(mixed))) == expected


@pytest.mark.parametrize("page_size", [1, 7, None])
def test_the_compiled_json_is_the_record_by_record_json(mixed, page_size):
    expected = "".join(exports.json_report_stream(mixed, exports.report_records(mixed, page_size)))
    pieces = list(exports.json_report_pieces(mixed, page_size))
    assert "".join(text for text, _count in pieces) == expected
    data = json.loads(expected)
    assert sum(count for _text, count in pieces) == len(data["reports"]) > 0


def test_the_export_job_writes_the_compiled_text_and_counts_every_report(mixed, settings, tmp_path):
    from surveys.jobs.records import Job

    settings.MEDIA_ROOT = tmp_path
    seen = []
    job = Job.objects.create(task="export", survey=mixed, params={"format": "csv"})
    result = export_files.run_export(job, lambda done, total=None, force=False: seen.append((done, total)))
    with job.file.open("rb") as stored:
        written = stored.read().decode("utf-8")
    assert written == row_by_row(mixed)
    assert seen[-1] == (result["reports"], result["reports"])  # done
    rows = len(list(csv.reader(io.StringIO(written)))) - 1
    assert seen[-2][0] == rows > 0  # every row written was counted as it went


@pytest.mark.parametrize(
    "text", ["7", "[0,1]", '{"a":1}', "a\nb", "a\rb", 'say "hi"', "좋음", " lead", "semi;colon", "tab\there"]
)
def test_a_text_cell_is_spelled_as_csv_writer_spells_it(text):
    assert report_text.csv_text_cell(text) == report_text.csv_cells(["x", text])[2:]


def test_a_row_holding_a_placeholder_is_refused_not_misspelled():
    rows = {1: [report_text.SUBMISSION, report_text.SUBMISSION, report_text.HOUR, report_text.REPORT]}
    with pytest.raises(ValueError, match="placeholder"):
        list(report_text.csv_lines(iter([]), report_text.Spelling({}), rows))


def test_a_page_holds_about_the_same_number_of_reports_whatever_the_number_of_questions(organizer):
    small = make_survey(organizer)
    make_question(small)
    wide = make_survey(organizer)
    for i in range(40):
        make_question(wide, text=f"Q{i}")
    assert exports.page_submissions(small) == exports.PAGE_REPORTS
    assert exports.page_submissions(wide) == exports.PAGE_REPORTS // 40
