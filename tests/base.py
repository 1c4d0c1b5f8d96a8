"""Shared makers for Django tests: people and surveys with sensible defaults (no factory library)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser
from django.db import connection, transaction

import ldp
from surveys import actions
from surveys.models import Question, Randomization, Report, Survey, random_id
from surveys.responding.tallies import read_tallies
from surveys.responding.writes import add_to_tally, record_submissions

PASSWORD = "correct horse battery staple"


def make_user(username: str, **extra: Any) -> AbstractUser:
    return get_user_model().objects.create_user(username=username, password=PASSWORD, **extra)


def make_survey(owner: AbstractUser, **fields: Any) -> Survey:
    return Survey.objects.create(owner=owner, **{"title": "Team pulse", **fields})


def make_question(survey: Survey, **fields: Any) -> Question:
    values = {
        "text": "How are you?",
        "kind": "single",
        "options": ["Good", "Fine", "Bad"],
        "epsilon": 1.0,
        "mechanism": "krr",
        "mechanism_params": {},
        **fields,
    }
    return actions.do_add_question(survey, values)


def make_open_survey(owner: AbstractUser, questions: int = 1, **fields: Any) -> Survey:
    survey = make_survey(owner, **fields)
    for i in range(questions):
        make_question(survey, text=f"Question {i + 1}")
    actions.do_open_survey(survey)
    return survey


@transaction.atomic
def make_reports(question: Question, values: list[int], seed: int = 0) -> list[Report]:
    """Randomize true values with the question's current randomization and store the reports."""
    randomization = actions.sync_randomization(question)
    packed = randomization.build_mechanism().randomize(np.asarray(values), rng=seed)
    submissions = record_submissions(question.survey, [None] * len(packed))
    reports = bulk_reports(question, randomization, submissions, [row.tobytes() for row in packed])
    add_to_tally(randomization, [row.tobytes() for row in packed])
    return reports


def bulk_reports(
    question: Question, randomization: Randomization, submissions: Iterable[Any], packed: Iterable[bytes]
) -> list[Report]:
    """One report of ``question`` a submission (in order), under ``randomization``: stored as a
    submission stores them, with the survey every report carries."""
    return Report.objects.bulk_create(
        Report(survey_id=question.survey_id, submission=s, question=question, randomization=randomization, packed=p)
        for s, p in zip(submissions, packed, strict=True)
    )


def stored_tally(randomization: Randomization) -> ldp.Tally:
    """The randomization's tally as the results read it: its cells summed over shards."""
    return read_tallies([randomization])[randomization.pk]


def tally_of_reports(randomization: Randomization) -> ldp.Tally:
    """The tally recomputed from the randomization's stored Report rows."""
    mechanism = randomization.build_mechanism()
    packed = b"".join(
        bytes(p)
        for p in Report.objects.filter(
            survey_id=randomization.question.survey_id, randomization=randomization
        ).values_list("packed", flat=True)
    )
    return mechanism.tally(mechanism.unpack_many(packed))


def make_number_question(survey: Survey, lo: float = 0, hi: float = 40, **fields: Any) -> Question:
    """A number question on [lo, hi] (Piecewise at epsilon 1 unless told), its params as the builder stores them."""
    from ldp.numeric import make_numeric_mechanism

    mechanism, epsilon = fields.pop("mechanism", "piecewise"), fields.pop("epsilon", 1.0)
    built = make_numeric_mechanism(mechanism, lo=lo, hi=hi, epsilon=epsilon)
    values = {
        "text": "Hours?",
        "kind": "numeric",
        "options": [],
        "epsilon": epsilon,
        "mechanism": mechanism,
        "mechanism_params": {"lo": float(lo), "hi": float(hi), **built.params()},
        "range_low": lo,
        "range_high": hi,
        "unit": "hours",
        **fields,
    }
    return actions.do_add_question(survey, values)


def make_text_question(survey: Survey, mechanism: str = "text-cms", epsilon: float = 4.0, **fields: Any) -> Question:
    """A short-answer question, its params as the builder stores them (the seed's shapes unless told)."""
    from ldp.textreports import make_text_mechanism

    params = fields.pop("mechanism_params", {})
    built = make_text_mechanism(mechanism, epsilon=epsilon, **params)
    values = {
        "text": "Which city?",
        "kind": "text",
        "options": [],
        "epsilon": epsilon,
        "mechanism": mechanism,
        "mechanism_params": built.params(),
        **fields,
    }
    return actions.do_add_question(survey, values)


@transaction.atomic
def make_text_reports(question: Question, texts: list[str], seed: int = 0) -> None:
    """Randomize normalized texts with the question's mechanism (Python, fixed seed) and store the reports."""
    randomization = actions.sync_randomization(question)
    mechanism = randomization.build_mechanism()
    packed = [mechanism.parse_report(r) for r in mechanism.randomize_reports(texts, rng=seed)]
    submissions = record_submissions(question.survey, [None] * len(packed))
    bulk_reports(question, randomization, submissions, packed)
    add_to_tally(randomization, packed)


def make_multi_question(
    survey: Survey, mechanism: str = "set-oue", max_choices: int = 2, epsilon: float = 2.0, **fields: Any
) -> Question:
    """A multi-select question (five options unless told), its params as the builder stores them."""
    values = {
        "text": f"Which helped ({mechanism})?",
        "kind": "multi_select",
        "options": ["Focus time", "Pair work", "Written docs", "Stand-ups", "Mentoring"],
        "epsilon": epsilon,
        "mechanism": mechanism,
        "mechanism_params": {"max_choices": max_choices},
        **fields,
    }
    return actions.do_add_question(survey, values)


@transaction.atomic
def make_set_reports(question: Question, sets: Any, seed: int = 0) -> None:
    """Randomize true sets with the question's randomization (Python, fixed seed) and store the reports."""
    randomization = actions.sync_randomization(question)
    packed = [row.tobytes() for row in randomization.build_mechanism().randomize(np.asarray(sets), rng=seed)]
    submissions = record_submissions(question.survey, [None] * len(packed))
    bulk_reports(question, randomization, submissions, packed)
    add_to_tally(randomization, packed)


@transaction.atomic
def make_joint_reports(questions: list[Question], answers: np.ndarray, seed: int = 0) -> None:
    """One submission per row of ``answers`` holding one report per question (column), as a browser sends them.

    Each column is randomized with its question's current randomization (fixed seed per column); a
    negative answer means the respondent skipped that question (no report).
    """
    answers = np.asarray(answers)
    submissions = record_submissions(questions[0].survey, [None] * answers.shape[0])
    for column, question in enumerate(questions):
        randomization = actions.sync_randomization(question)
        answered = np.flatnonzero(answers[:, column] >= 0)
        packed = randomization.build_mechanism().randomize(answers[answered, column], rng=seed + column)
        rows = [row.tobytes() for row in packed]
        insert_reports(
            (question.survey_id, submissions[i].pk, question.pk, randomization.pk, row)
            for i, row in zip(answered, rows, strict=True)
        )
        add_to_tally(randomization, rows)


def insert_reports(rows: Iterable[tuple[int, int, int, int, bytes]]) -> None:
    """Report rows (survey, submission, question, randomization ids and packed bytes) in one executemany, with
    random ids as the model's default gives them: what ``Report.objects.bulk_create`` writes, without
    building a model instance a report (a third of a test's set-up with thousands of reports)."""
    table = connection.ops.quote_name(Report._meta.db_table)
    columns = ", ".join(connection.ops.quote_name(Report._meta.get_field(f).column) for f in REPORT_COLUMNS)
    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {table} ({columns}) VALUES (%s, %s, %s, %s, %s, %s)",
            [(random_id(), *row) for row in rows],
        )


REPORT_COLUMNS = ("id", "survey", "submission", "question", "randomization", "packed")


def make_boruch_survey(survey: Survey, sensitive: list[str], groups: dict[str, list[str]], text: str) -> None:
    """A forced-response yes / no question (Boruch's die: p_yes = p_no = 1/6, epsilon ln 5) and one
    question asked directly per entry of ``groups`` (its text: its options), then open the survey."""
    import math

    make_question(
        survey,
        text=text,
        kind="yes_no",
        options=sensitive,
        epsilon=math.log(5),
        mechanism="forced-response",
        mechanism_params={"forced": ["1/6", "1/6"]},
    )
    for question, options in groups.items():
        make_question(survey, text=question, options=options, epsilon=math.inf, mechanism="direct")
    actions.do_open_survey(survey)


def with_stand_ins(survey: Survey, items: list[dict[str, Any]], seed: int = 0) -> list[dict[str, Any]]:
    """``items`` plus a stand-in report for every question in force that they lack, as the browser
    sends for a question skipped or not asked (ldp.branching): a submission carries every question."""
    from ldp.registry import family_of
    from surveys.responding.submissions import randomizations_in_force

    have = {item["question"] for item in items}
    result = list(items)
    for question_id, randomization in randomizations_in_force(survey).items():
        if question_id in have or randomization is None:
            continue
        mechanism: Any = randomization.build_mechanism()
        family = family_of(randomization.mechanism)
        if family == "text":
            report = mechanism.randomize_reports([""], rng=seed)[0]
        else:
            if family == "multi":
                answer: Any = np.zeros((1, randomization.k), dtype=bool)
            elif family == "mean":
                answer = np.array([mechanism.lo])
            else:
                answer = np.array([0])
            report = mechanism.unpack_report(mechanism.randomize(answer, rng=seed)[0].tobytes())
        result.append({"question": question_id, "version": randomization.version, "report": report})
    return result


def read_body(response: Any) -> bytes:
    """The response's body. A streamed one (an export file) is read to its end, which closes it the
    way the test client does; ``response.close()`` would also close the test's database connection
    (request_finished), which fails every later query on PostgreSQL."""
    return b"".join(response.streaming_content) if response.streaming else response.content
