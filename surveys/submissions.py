"""Respondents' submissions: strict parsing, one-time tokens, and the all-or-nothing write.

A submission is JSON::

    {"token": "<one-time token of the answer page>",
     "reports": [{"question": <id>, "version": <randomization version>, "report": {...}}, ...]}

Each report is validated by its mechanism (``ldp``'s ``parse_report``) against the question's
frozen randomization. Skipped questions simply have no report. Everything is stored in one
transaction, with the tallies, or nothing is.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.core import signing
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils.translation import gettext as _

from ldp.mechanisms import InvalidReport
from surveys.models import HourlyResponses, Question, Randomization, Report, Submission, Survey, Tally, hour_now

TOKEN_SALT = "murmur.submission-token"
TOKEN_MAX_AGE = 7 * 24 * 3600


class SubmissionError(Exception):
    """A refused submission: an HTTP status and a message for the respondent."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class ParsedReport:
    question: Question
    randomization: Randomization
    packed: bytes


def new_token(survey: Survey) -> str:
    """A signed one-time token for one load of the answer page."""
    return signing.dumps({"survey": survey.pk, "nonce": secrets.token_urlsafe(24)}, salt=TOKEN_SALT)


def read_token(survey: Survey, token: Any) -> str:
    """The nonce inside a valid token for this survey."""
    if not isinstance(token, str):
        raise SubmissionError(400, _("The submission has no page token."))
    try:
        data = signing.loads(token, salt=TOKEN_SALT, max_age=TOKEN_MAX_AGE)
    except signing.SignatureExpired:
        raise SubmissionError(409, _("This page is too old. Reload it and answer again.")) from None
    except signing.BadSignature:
        raise SubmissionError(400, _("The page token is not valid.")) from None
    if data.get("survey") != survey.pk:
        raise SubmissionError(400, _("The page token belongs to another survey."))
    return str(data["nonce"])


def parse_submission(survey: Survey, body: bytes) -> tuple[str, list[ParsedReport]]:
    """Validate a submission body completely, touching nothing; return (nonce, reports)."""
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise SubmissionError(400, _("The submission is not valid JSON.")) from None
    if not isinstance(payload, dict) or set(payload) != {"token", "reports"}:
        raise SubmissionError(400, _("A submission is an object with exactly the fields “token” and “reports”."))
    nonce = read_token(survey, payload["token"])
    items = payload["reports"]
    questions = {q.pk: q for q in survey.questions.all()}
    if not isinstance(items, list):
        raise SubmissionError(400, _("“reports” must be a list."))
    if not items:
        raise SubmissionError(400, _("Answer at least one question before sending."))
    if len(items) > len(questions):
        raise SubmissionError(400, _("There are more reports than questions."))
    parsed: list[ParsedReport] = []
    seen: set[int] = set()
    for position, item in enumerate(items, start=1):
        parsed.append(_parse_item(item, position, questions, seen))
    return nonce, parsed


def _parse_item(item: Any, position: int, questions: dict[int, Question], seen: set[int]) -> ParsedReport:
    where = _("Report %(position)s") % {"position": position}
    if not isinstance(item, dict) or set(item) != {"question", "version", "report"}:
        raise SubmissionError(
            400, _("%(where)s must have exactly the fields “question”, “version” and “report”.") % {"where": where}
        )
    question_id, version = item["question"], item["version"]
    if isinstance(question_id, bool) or not isinstance(question_id, int) or question_id not in questions:
        raise SubmissionError(400, _("%(where)s names a question this survey does not have.") % {"where": where})
    if question_id in seen:
        raise SubmissionError(400, _("%(where)s repeats a question already answered.") % {"where": where})
    seen.add(question_id)
    question = questions[question_id]
    randomization = question.current_randomization()
    if randomization is None or isinstance(version, bool) or version != randomization.version:
        raise SubmissionError(409, _("The survey changed since this page was loaded. Reload it and answer again."))
    try:
        packed = randomization.build_mechanism().parse_report(item["report"])
    except InvalidReport as error:
        raise SubmissionError(
            400,
            _("%(where)s (question “%(text)s”) is malformed: %(reason)s")
            % {"where": where, "text": question.text, "reason": error},
        ) from None
    return ParsedReport(question, randomization, packed)


@transaction.atomic
def do_submit(survey: Survey, nonce: str, reports: list[ParsedReport]) -> Submission:
    """Store a parsed submission and update the tallies; all or nothing."""
    if survey.response_limit is not None:
        # Count and insert under the survey's row lock, so the limit cannot be overshot.
        survey = Survey.objects.select_for_update().get(pk=survey.pk)
    if not survey.accepting_responses():
        raise SubmissionError(403, _("This survey is not accepting responses."))
    try:
        with transaction.atomic():
            [submission] = record_submissions(survey, [nonce])
    except IntegrityError:
        raise SubmissionError(409, _("These answers were already sent.")) from None
    Report.objects.bulk_create(
        Report(submission=submission, question=r.question, randomization=r.randomization, packed=r.packed)
        for r in reports
    )
    # Lock tallies in one global order, so concurrent submissions cannot deadlock.
    for parsed in sorted(reports, key=lambda r: r.randomization.pk):
        add_to_tally(parsed.randomization, [parsed.packed])
    return submission


def record_submissions(survey: Survey, nonces: Sequence[str | None]) -> list[Submission]:
    """Create submissions and count them in the current hour (call inside a transaction)."""
    hour = hour_now()
    submissions = Submission.objects.bulk_create(
        [Submission(survey=survey, nonce=nonce, received_hour=hour) for nonce in nonces]
    )
    counter, _created = HourlyResponses.objects.get_or_create(survey=survey, hour=hour)
    HourlyResponses.objects.filter(pk=counter.pk).update(count=F("count") + len(submissions))
    return submissions


def add_to_tally(randomization: Randomization, packed_reports: list[bytes]) -> None:
    """Add reports to the randomization's tally under a row lock (call inside a transaction)."""
    mechanism = randomization.build_mechanism()
    batch = mechanism.tally(mechanism.unpack_many(b"".join(packed_reports)))
    tally = Tally.objects.select_for_update().get(randomization=randomization)
    tally.n += batch.n
    tally.counts = (np.asarray(tally.counts, dtype=np.int64) + batch.counts).tolist()
    tally.save(update_fields=["n", "counts"])
