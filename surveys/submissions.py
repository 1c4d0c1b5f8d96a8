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
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.core import signing
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from ldp.mechanisms import InvalidReport
from surveys import tallies
from surveys.access import get_survey_by_share_slug
from surveys.models import Question, Randomization, Report, Submission, Survey, hour_now, random_id

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
    in_force = cached_randomizations_in_force(survey)
    try:
        return nonce, _parse_items(items, in_force)
    except StaleRandomizations:
        # The cache predates a change of the survey: read it afresh and judge the reports on that.
        return nonce, _parse_items(items, cached_randomizations_in_force(survey, refresh=True))


class StaleRandomizations(Exception):
    """A report names a question or version the cached randomizations do not know."""


def _parse_items(items: list[Any], in_force: InForce) -> list[ParsedReport]:
    try:
        if len(items) > len(in_force.by_question):
            raise SubmissionError(400, _("There are more reports than questions."))
        parsed: list[ParsedReport] = []
        seen: set[int] = set()
        for position, item in enumerate(items, start=1):
            parsed.append(_parse_item(item, position, in_force.by_question, seen))
    except SubmissionError:
        if in_force.cached:
            raise StaleRandomizations from None
        raise
    return parsed


@dataclass(frozen=True)
class InForce:
    by_question: dict[int, Randomization | None]
    read_at: float
    cached: bool = False


#: Per survey id, its randomizations in force as this process last read them. A cached entry is
#: only a hint: every submission re-checks its randomizations inside its transaction
#: (:func:`lock_randomizations`), and a report the hint refuses is judged again on a fresh read.
_IN_FORCE: dict[tuple[int, str], InForce] = {}
IN_FORCE_SECONDS = 30.0
IN_FORCE_SURVEYS = 1024


def cached_randomizations_in_force(survey: Survey, refresh: bool = False) -> InForce:
    now = time.monotonic()
    key = (survey.pk, survey.slug)
    entry = _IN_FORCE.get(key)
    if entry is not None and not refresh and now - entry.read_at < IN_FORCE_SECONDS:
        return entry
    if len(_IN_FORCE) >= IN_FORCE_SURVEYS:
        _IN_FORCE.clear()
    _IN_FORCE[key] = InForce(randomizations_in_force(survey), now, cached=True)
    return InForce(_IN_FORCE[key].by_question, now)


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


def do_submit(survey: Survey, nonce: str, reports: list[ParsedReport], responded: bool = False) -> Submission:
    """Store a parsed submission and add it to the tallies; all or nothing, in constant queries.

    ``survey`` may be a cached copy (:func:`survey_for_submission`): whether it is open, whether this
    browser may answer again (``responded``: it carries the "already responded" cookie) and its
    response limit are judged afresh inside the write. PostgreSQL: one statement
    (:data:`SUBMIT_SQL`), which is its own transaction, unless the survey has a response limit.
    Elsewhere: a ``BEGIN IMMEDIATE`` transaction of six statements.
    """
    submission = Submission(survey=survey, nonce=nonce, received_hour=hour_now())
    shard = tallies.pick_shard()
    rows = tallies.merge_rows(row for r in reports for row in tallies.tally_rows(r.randomization, [r.packed], shard))
    if connection.vendor != "postgresql":
        with transaction.atomic():
            _check_survey(survey, responded)
            lock_randomizations(survey, [r.randomization for r in reports])
            if not _store_statement_by_statement(submission, reports, rows, shard):
                raise SubmissionError(409, _("These answers were already sent."))
        return submission
    # In autocommit the statement is its own transaction.
    autocommit = not connection.in_atomic_block
    if autocommit and _submit_in_one_statement(submission, reports, rows, shard, responded, unlimited=True):
        return submission
    # A response limit (or a caller's transaction, where a savepoint keeps a failed statement from
    # poisoning it): count and insert under the survey's row lock.
    with transaction.atomic():
        _check_survey(survey, responded)
        _submit_in_one_statement(submission, reports, rows, shard, responded, unlimited=False)
    return submission


def _check_survey(survey: Survey, responded: bool) -> None:
    """Under the survey's row lock, re-read it and refuse what it no longer allows (in a transaction).

    The response limit is why this locks: respondents of a survey with a limit queue on its row,
    so that the count and the insert cannot interleave and overshoot the limit. Surveys without a
    limit never come here on PostgreSQL.
    """
    survey = Survey.objects.select_for_update().get(pk=survey.pk)
    if responded and not survey.allow_repeat_responses:
        raise SubmissionError(409, _("You have already answered this survey from this browser."))
    if survey.response_limit is not None and survey.response_count() >= survey.response_limit:
        raise SubmissionError(403, _("This survey is not accepting responses."))


def report_ids(count: int) -> list[int]:
    """Random ids for a submission's reports."""
    return [random_id() for _ in range(count)]


def _store_statement_by_statement(
    submission: Submission, reports: list[ParsedReport], rows: list[tuple[int, ...]], shard: int
) -> bool:
    """The submission, its reports, its tally cells and its hourly count: four statements."""
    if not insert_unless_replayed(submission):
        return False
    Report.objects.bulk_create(
        Report(id=pk, submission=submission, question=r.question, randomization=r.randomization, packed=r.packed)
        for pk, r in zip(report_ids(len(reports)), reports, strict=True)
    )
    tallies.add_rows(rows)
    tallies.count_responses(submission.survey, submission.received_hour, 1, shard)
    return True


#: PostgreSQL: a whole submission as one statement of data-modifying CTEs, atomic by itself.
#: ``locked`` share-locks the randomizations reported to (``FOR KEY SHARE``: respondents never wait
#: for each other, but an edit's ``FOR UPDATE`` excludes them; a row an edit retired while we waited
#: is re-read, retired). The submission is inserted only if every randomization is in force and
#: the survey open, and only if its nonce is new; reports, tally cells and the hourly count follow
#: only if it was inserted. The verdict comes back so the refusal can say why.
SUBMIT_SQL = """
WITH locked AS (
  SELECT r.retired, s.status, (s.closes_at IS NOT NULL AND s.closes_at <= %(now)s) AS closed,
         s.allow_repeat_responses AS repeat_allowed, s.response_limit
  FROM surveys_randomization r
  JOIN surveys_question q ON q.id = r.question_id
  JOIN surveys_survey s ON s.id = q.survey_id
  WHERE s.id = %(survey)s AND r.id = ANY(%(randomizations)s::bigint[])
  ORDER BY r.id
  FOR KEY SHARE OF r
), verdict AS (
  SELECT count(*) AS found,
         count(*) FILTER (WHERE retired) AS retired,
         count(*) FILTER (WHERE status <> 'open' OR closed) AS shut,
         count(*) FILTER (WHERE %(responded)s AND NOT repeat_allowed) AS repeated,
         count(*) FILTER (WHERE %(unlimited)s AND response_limit IS NOT NULL) AS limited
  FROM locked
), s AS (
  INSERT INTO surveys_submission (id, survey_id, received_hour, nonce)
  SELECT %(id)s, %(survey)s, %(hour)s, %(nonce)s FROM verdict
  WHERE found = %(expected)s AND retired = 0 AND shut = 0 AND repeated = 0 AND limited = 0
  ON CONFLICT (nonce) DO NOTHING RETURNING id
), r AS (
  INSERT INTO surveys_report (id, submission_id, question_id, randomization_id, packed)
  SELECT v.id, s.id, v.question, v.randomization, v.packed
  FROM s, unnest(%(report_ids)s::bigint[], %(questions)s::bigint[], %(report_randomizations)s::bigint[],
                 %(packed)s::bytea[]) AS v(id, question, randomization, packed)
), c AS (
  INSERT INTO surveys_tallycell (randomization_id, shard, cell, count)
  SELECT * FROM unnest(%(cell_randomizations)s::bigint[], %(cell_shards)s::smallint[], %(cells)s::integer[],
                       %(increments)s::bigint[])
  WHERE EXISTS (SELECT 1 FROM s)
  ON CONFLICT (randomization_id, shard, cell) DO UPDATE SET count = surveys_tallycell.count + excluded.count
), h AS (
  INSERT INTO surveys_hourlyresponses (survey_id, hour, shard, count)
  SELECT %(survey)s, %(hour)s, %(shard)s, 1 WHERE EXISTS (SELECT 1 FROM s)
  ON CONFLICT (survey_id, hour, shard) DO UPDATE SET count = surveys_hourlyresponses.count + 1
)
SELECT (SELECT count(*) FROM s), found, retired, shut, repeated, limited FROM verdict
"""


def _submit_in_one_statement(
    submission: Submission,
    reports: list[ParsedReport],
    rows: list[tuple[int, ...]],
    shard: int,
    responded: bool,
    unlimited: bool,
) -> bool:
    """Run :data:`SUBMIT_SQL`; False if the survey has a response limit and ``unlimited`` was claimed."""
    randomizations = sorted({r.randomization.pk for r in reports})
    cell_randomizations, cell_shards, cells, increments = (list(c) for c in zip(*rows, strict=True))
    params = {
        "now": timezone.now(),
        "survey": submission.survey_id,
        "randomizations": randomizations,
        "expected": len(randomizations),
        "responded": responded,
        "unlimited": unlimited,
        "id": submission.pk,
        "hour": submission.received_hour,
        "nonce": submission.nonce,
        "report_ids": report_ids(len(reports)),
        "questions": [r.question.pk for r in reports],
        "report_randomizations": [r.randomization.pk for r in reports],
        "packed": [r.packed for r in reports],
        "cell_randomizations": cell_randomizations,
        "cell_shards": cell_shards,
        "cells": cells,
        "increments": increments,
        "shard": shard,
    }
    with connection.cursor() as cursor:
        cursor.execute(SUBMIT_SQL, params)
        inserted, found, retired, shut, repeated, limited = cursor.fetchone()
    if shut:
        raise SubmissionError(403, _("This survey is not accepting responses."))
    if found != len(randomizations) or retired:
        raise SubmissionError(409, _("The survey changed since this page was loaded. Reload it and answer again."))
    if repeated:
        raise SubmissionError(409, _("You have already answered this survey from this browser."))
    if limited:
        return False
    if not inserted:
        raise SubmissionError(409, _("These answers were already sent."))
    return True


#: Per share slug, the survey as this process last read it: a hint for the submit endpoint only
#: (the write re-reads everything that decides whether the submission is taken).
_SURVEYS: dict[str, tuple[Survey, float]] = {}


def survey_for_submission(slug: str) -> Survey:
    """The survey behind a share link, cached per process for a few seconds (else 404)."""
    now = time.monotonic()
    hit = _SURVEYS.get(slug)
    if hit is not None and now - hit[1] < IN_FORCE_SECONDS:
        return hit[0]
    survey = get_survey_by_share_slug(slug)
    if len(_SURVEYS) >= IN_FORCE_SURVEYS:
        _SURVEYS.clear()
    _SURVEYS[slug] = (survey, now)
    return survey


def lock_randomizations(survey: Survey, randomizations: list[Randomization]) -> None:
    """Check, inside the submission's transaction, that its randomizations still take reports.

    The statement-by-statement path (SQLite). SQLite runs every write transaction alone
    (``BEGIN IMMEDIATE``), so this read cannot interleave with an edit; PostgreSQL share-locks and
    checks inside :data:`SUBMIT_SQL` instead. The same query re-reads whether the survey is open.
    """
    ids = sorted({r.pk for r in randomizations})
    sql = (
        "SELECT r.retired, s.status, CASE WHEN s.closes_at <= %s THEN 1 ELSE 0 END "
        "FROM surveys_randomization r JOIN surveys_question q ON q.id = r.question_id "
        "JOIN surveys_survey s ON s.id = q.survey_id "
        f"WHERE s.id = %s AND r.id IN ({', '.join(['%s'] * len(ids))})"
    )
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(sql, [now, survey.pk, *ids])
        rows = cursor.fetchall()
    if any(status != Survey.Status.OPEN or closed for _retired, status, closed in rows):
        raise SubmissionError(403, _("This survey is not accepting responses."))
    if len(rows) != len(ids) or any(retired for retired, _status, _closed in rows):
        raise SubmissionError(409, _("The survey changed since this page was loaded. Reload it and answer again."))


def insert_unless_replayed(submission: Submission) -> bool:
    """Insert the submission unless its nonce was stored already; whether it was inserted.

    ``ON CONFLICT (nonce) DO NOTHING`` instead of catching an IntegrityError: no savepoint, so
    two fewer round trips, and a concurrent replay waits for the first and then inserts nothing.
    """
    quote = connection.ops.quote_name
    table = quote(Submission._meta.db_table)
    sql = (
        f"INSERT INTO {table} (id, survey_id, received_hour, nonce) VALUES (%s, %s, %s, %s) "
        "ON CONFLICT (nonce) DO NOTHING RETURNING id"
    )
    hour = connection.ops.adapt_datetimefield_value(submission.received_hour)
    with connection.cursor() as cursor:
        cursor.execute(sql, [submission.pk, submission.survey_id, hour, submission.nonce])
        return cursor.fetchone() is not None


def record_submissions(survey: Survey, nonces: Sequence[str | None]) -> list[Submission]:
    """Create submissions and count them in the current hour (call inside a transaction)."""
    hour = hour_now()
    submissions = Submission.objects.bulk_create(
        [Submission(survey=survey, nonce=nonce, received_hour=hour) for nonce in nonces]
    )
    tallies.count_responses(survey, hour, len(submissions))
    return submissions


add_to_tally = tallies.add_to_tally
