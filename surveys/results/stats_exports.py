"""Raw reports for SPSS (``.sav``) and Stata (``.dta``), with variable and value labels.

One row per stored report, as in the CSV export (:func:`surveys.results.exports.report_records`),
so every row carries what it takes to interpret it: the question, the version of its randomization,
the mechanism, ε, k and every parameter (``params``, JSON), and the report itself (``report``,
JSON, exactly as the CSV has it). Beside it, each field of the report gets a column of its own
(``r_<field>``): whole numbers as numbers, lists as space-separated numbers, so that a
one-number report (a k-RR option index, a numeric mechanism's output index) can be tabulated
directly. Submission ids are 63-bit and would lose digits as doubles, so they are text.

Written with pyreadstat (maintained; reads and writes SPSS, Stata and SAS through ReadStat) from a
pandas frame. Both formats keep Unicode text, so Korean questions and labels survive.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from typing import Any

import pandas as pd
import pyreadstat

from surveys.models import Survey
from surveys.results.exports import randomization_records, report_records

#: SPSS keeps at most 120 bytes of a value label.
VALUE_LABEL_BYTES = 120

COLUMNS: dict[str, str] = {
    "round": "Round of a recurring survey (empty: not recurring)",
    "submission": "Submission id (random: says nothing about order)",
    "received_hour": "Hour the submission arrived (UTC), nothing finer",
    "question_id": "Question id",
    "version": "Version of the question's randomization",
    "mechanism": "LDP mechanism (Murmur's name)",
    "k": "Number of options the mechanism randomizes over (0: not a choice)",
    "epsilon": "Privacy budget epsilon of the report",
    "params": "Mechanism parameters (JSON)",
    "memo_gamma": "Flip of the memoized layer in a recurring survey (empty: none)",
    "report": "The randomized report (JSON, as the CSV export)",
}


def _short(text: str, limit: int = VALUE_LABEL_BYTES) -> str:
    """A label within ``limit`` bytes of UTF-8 (SPSS keeps 120 of a value label, Stata 80 of a file
    label), cut on a character boundary."""
    encoded = text.encode("utf-8")[:limit]
    return encoded.decode("utf-8", errors="ignore")


def report_frame(survey: Survey) -> tuple[pd.DataFrame, dict[str, str], dict[str, dict[Any, str]]]:
    """The reports as a frame, its variable labels and its value labels."""
    designs = {(r["question_id"], r["version"]): r for r in randomization_records(survey)}
    rows: list[dict[str, Any]] = []
    fields: dict[str, str] = {}
    for record in report_records(survey):
        design = designs[(record["question_id"], record["version"])]
        row = {
            "round": record["round"],
            "submission": str(record["submission"]),
            "received_hour": record["received_hour"],
            "question_id": record["question_id"],
            "version": record["version"],
            "mechanism": design["mechanism"],
            "k": design["k"],
            "epsilon": design["epsilon"],
            "params": json.dumps(design["params"], sort_keys=True),
            "memo_gamma": design["memo_gamma"],
            "report": json.dumps(record["report"], separators=(",", ":")),
        }
        for name, value in record["report"].items():
            column = f"r_{name}"[:32]
            fields[column] = name
            row[column] = " ".join(str(int(v)) for v in value) if isinstance(value, list) else value
        rows.append(row)
    frame = pd.DataFrame(rows, columns=[*COLUMNS, *sorted(fields)])
    for column in ("round", "question_id", "version", "k", "epsilon", "memo_gamma"):
        frame[column] = pd.to_numeric(frame[column])
    for column in fields:
        values = frame[column]
        if any(isinstance(v, str) for v in values):  # a list in some report: the column is text
            frame[column] = ["" if v is None or v != v else str(v) for v in values]
        else:
            frame[column] = pd.to_numeric(values)
    labels = {**COLUMNS, **{column: f"Report field “{name}”" for column, name in fields.items()}}
    questions = {r["question_id"]: r["question"] for r in designs.values()}
    value_labels = {"question_id": {qid: _short(text) for qid, text in questions.items()}}
    return frame, labels, value_labels


def _write(survey: Survey, writer: Callable[..., None], suffix: str, label_bytes: int) -> bytes:
    frame, labels, value_labels = report_frame(survey)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, f"reports{suffix}")
        writer(
            frame,
            path,
            column_labels=[labels[c] for c in frame.columns],
            variable_value_labels=value_labels,
            file_label=_short(f"Murmur: {survey.title}", label_bytes),
        )
        with open(path, "rb") as file:
            return file.read()


def sav_bytes(survey: Survey) -> bytes:
    """The reports as an SPSS system file."""
    return _write(survey, pyreadstat.write_sav, ".sav", VALUE_LABEL_BYTES)


def dta_bytes(survey: Survey) -> bytes:
    """The reports as a Stata 15 file (UTF-8; long texts as strL)."""
    return _write(survey, pyreadstat.write_dta, ".dta", 80)
