"""Respondents' submissions: strict parsing, one-time tokens, and the all-or-nothing write.

A submission is JSON::

    {"token": "<one-time token of the answer page>",
     "reports": [{"question": <id>, "version": <randomization version>, "report": {...}}, ...]}

Each report is validated by its mechanism (``ldp``'s ``parse_report``) against the question's
frozen randomization. Skipped questions simply have no report. Everything is stored in one
transaction, with the tallies, or nothing is.

A submission costs the same few queries however many questions the survey has: one to read the
survey's randomizations in force, then in one transaction one to share-lock and re-check them,
one insert each for the submission and its reports, one upsert of the tally cells and one of
the hourly counter (``surveys.tallies``). Editing a question's parameters locks its randomization
exclusively, so an edit and a submission to the old version serialize: whichever commits first
wins, and a report is never stored under a randomization that was retired before it committed.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.core import signing
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from ldp.mechanisms import InvalidReport
from surveys import tallies
from surveys.models import Question, Randomization, Report, Submission, Survey, hour_now

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
    if not isinstance(items, list):
        raise SubmissionError(400, _("“reports” must be a list."))
    if not items:
        raise SubmissionError(400, _("Answer at least one question before sending."))
    in_force = randomizations_in_force(survey)
    if len(items) > len(in_force):
        raise SubmissionError(400, _("There are more reports than questions."))
    parsed: list[ParsedReport] = []
    seen: set[int] = set()
    for position, item in enumerate(items, start=1):
        parsed.append(_parse_item(item, position, in_force, seen))
    return nonce, parsed


def randomizations_in_force(survey: Survey) -> dict[int, Randomization | None]:
    """Per question id, the randomization reports must use now (None: none in force), one query."""
    questions: dict[int, Randomization | None] = {}
    rows = (
        Randomization.objects.filter(question__survey=survey, retired=False)
        .select_related("question")
        .order_by("question__position", "question_id", "version")
    )
    for randomization in rows:
        question = randomization.question
        current = randomization if randomization.key() == question.randomization_key() else None
        questions[question.pk] = current  # the newest version in force wins
    return questions


def _parse_item(item: Any, position: int, in_force: dict[int, Randomization | None], seen: set[int]) -> ParsedReport:
    where = _("Report %(position)s") % {"position": position}
    if not isinstance(item, dict) or set(item) != {"question", "version", "report"}:
        raise SubmissionError(
            400, _("%(where)s must have exactly the fields “question”, “version” and “report”.") % {"where": where}
        )
    question_id, version = item["question"], item["version"]
    if isinstance(question_id, bool) or not isinstance(question_id, int) or question_id not in in_force:
        raise SubmissionError(400, _("%(where)s names a question this survey does not have.") % {"where": where})
    if question_id in seen:
        raise SubmissionError(400, _("%(where)s repeats a question already answered.") % {"where": where})
    seen.add(question_id)
    randomization = in_force[question_id]
    if randomization is None or isinstance(version, bool) or version != randomization.version:
        raise SubmissionError(409, _("The survey changed since this page was loaded. Reload it and answer again."))
    question = randomization.question
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
    """Store a parsed submission and add it to the tallies; all or nothing, in constant queries."""
    if survey.response_limit is not None:
        # Count and insert under the survey's row lock, so the limit cannot be overshot. Only
        # surveys with a limit pay for this: their respondents queue on the survey row.
        survey = Survey.objects.select_for_update().get(pk=survey.pk)
        if survey.response_count() >= survey.response_limit:
            raise SubmissionError(403, _("This survey is not accepting responses."))
    lock_randomizations(survey, [r.randomization for r in reports])
    shard = tallies.pick_shard()
    try:
        with transaction.atomic():
            submission = Submission.objects.create(survey=survey, nonce=nonce, received_hour=hour_now())
    except IntegrityError:
        raise SubmissionError(409, _("These answers were already sent.")) from None
    Report.objects.bulk_create(
        Report(submission=submission, question=r.question, randomization=r.randomization, packed=r.packed)
        for r in reports
    )
    tallies.add_rows(row for r in reports for row in tallies.tally_rows(r.randomization, [r.packed], shard))
    tallies.count_responses(survey, submission.received_hour, 1, shard)
    return submission


def lock_randomizations(survey: Survey, randomizations: list[Randomization]) -> None:
    """Share-lock the randomizations a submission reports to, and check they still take reports.

    ``FOR KEY SHARE`` does not make respondents wait for each other, but an edit that retires a
    randomization locks it ``FOR UPDATE`` first: the edit waits for submissions in flight, and a
    submission that arrives during the edit waits for it, then sees the randomization retired
    (PostgreSQL re-reads a locked row after the lock holder commits) and is refused. SQLite runs
    every write transaction alone (``BEGIN IMMEDIATE``), which serializes the same way. The same
    query re-reads whether the survey is still open.
    """
    ids = sorted({r.pk for r in randomizations})
    lock = " FOR KEY SHARE OF r" if connection.vendor == "postgresql" else ""
    sql = (
        "SELECT r.retired, s.status, CASE WHEN s.closes_at <= %s THEN 1 ELSE 0 END "
        "FROM surveys_randomization r JOIN surveys_question q ON q.id = r.question_id "
        "JOIN surveys_survey s ON s.id = q.survey_id "
        f"WHERE s.id = %s AND r.id IN ({', '.join(['%s'] * len(ids))}) ORDER BY r.id{lock}"
    )
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(sql, [now, survey.pk, *ids])
        rows = cursor.fetchall()
    if any(status != Survey.Status.OPEN or closed for _retired, status, closed in rows):
        raise SubmissionError(403, _("This survey is not accepting responses."))
    if len(rows) != len(ids) or any(retired for retired, _status, _closed in rows):
        raise SubmissionError(409, _("The survey changed since this page was loaded. Reload it and answer again."))


def record_submissions(survey: Survey, nonces: Sequence[str | None]) -> list[Submission]:
    """Create submissions and count them in the current hour (call inside a transaction)."""
    hour = hour_now()
    submissions = Submission.objects.bulk_create(
        [Submission(survey=survey, nonce=nonce, received_hour=hour) for nonce in nonces]
    )
    tallies.count_responses(survey, hour, len(submissions))
    return submissions


add_to_tally = tallies.add_to_tally
