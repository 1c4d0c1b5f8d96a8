"""Writing a parsed submission: its reports, pending tally increments and hourly count, all or nothing.

A submission costs the same few statements however many questions it answers, and never waits on
the survey's other respondents (the design, and why: ``docs/deployment.md``). On PostgreSQL it is
one statement (:data:`SUBMIT_SQL`) that share-locks and re-checks the randomizations it reports to
and the survey, then inserts the submission, its reports, its pending tally increments (one row:
``surveys.responding.tallies``) and the hourly count. Elsewhere (SQLite) it is a ``BEGIN
IMMEDIATE`` transaction of six statements. Editing a question's parameters locks its
randomization exclusively (``surveys.actions.sync_randomization``), so an edit and a submission to
the old version serialize: a report is never stored under a randomization that was retired before
it committed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from surveys.models import Invitation, Randomization, Report, Submission, Survey, hour_now, random_id
from surveys.responding import tallies
from surveys.responding.submissions import ParsedReport, SubmissionError


def do_submit(
    survey: Survey, nonce: str, reports: list[ParsedReport], responded: bool = False, invitation: bytes | None = None
) -> Submission:
    """Store a parsed submission and add it to the tallies; all or nothing, in constant queries.

    ``survey`` may be a cached copy (:func:`survey_for_submission`): whether it is open, whether this
    browser may answer again (``responded``: it carries the "already responded" cookie) and its
    response limit are judged afresh inside the write. ``invitation`` is the keyed hash of the
    invitation token sent with the submission (``surveys.responding.invitations``): the write marks it used,
    and refuses the submission if it is unknown or used, or if the survey is invitation-only and
    none came. PostgreSQL: one statement
    (:data:`SUBMIT_SQL`), which is its own transaction, unless the survey has a response limit.
    Elsewhere: a ``BEGIN IMMEDIATE`` transaction of six statements.
    """
    submission = Submission(survey=survey, nonce=nonce, received_hour=hour_now())
    shard = tallies.pick_shard()
    if connection.vendor != "postgresql":
        with transaction.atomic():
            _check_survey(survey, responded)
            invite_only = lock_randomizations(survey, [r.randomization for r in reports])
            use_invitation(survey, invitation, invite_only)
            if not _store_statement_by_statement(submission, reports, shard):
                raise SubmissionError(409, _("These answers were already sent."))
        return submission
    # In autocommit the statement is its own transaction.
    autocommit = not connection.in_atomic_block
    if autocommit and _submit_in_one_statement(submission, reports, shard, responded, invitation, unlimited=True):
        return submission
    # A response limit (or a caller's transaction, where a savepoint keeps a failed statement from
    # poisoning it): count and insert under the survey's row lock.
    with transaction.atomic():
        _check_survey(survey, responded)
        _submit_in_one_statement(submission, reports, shard, responded, invitation, unlimited=False)
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


def _store_statement_by_statement(submission: Submission, reports: list[ParsedReport], shard: int) -> bool:
    """The submission, its reports, its pending tally increments and its hourly count: four statements."""
    if not insert_unless_replayed(submission):
        return False
    Report.objects.bulk_create(
        Report(
            survey_id=submission.survey_id,
            id=pk,
            submission=submission,
            question=r.question,
            randomization=r.randomization,
            packed=r.packed,
        )
        for pk, r in zip(report_ids(len(reports)), reports, strict=True)
    )
    tallies.add_pending(submission.survey_id, shard, ((r.randomization.pk, r.packed) for r in reports))
    tallies.count_responses(submission.survey, submission.received_hour, 1, shard)
    return True


#: PostgreSQL: a whole submission as one statement of data-modifying CTEs, atomic by itself.
#: ``locked`` share-locks the randomizations reported to (``FOR KEY SHARE``: respondents never wait
#: for each other, but an edit's ``FOR UPDATE`` excludes them; a row an edit retired while we waited
#: is re-read, retired). The submission is inserted only if every randomization is in force and
#: the survey open, and only if its nonce is new; reports, pending tally increments, the hourly count
#: and the survey's version (``surveys.responding.versions``) follow only if it was inserted. The verdict
#: comes back so the refusal can say why.
SUBMIT_SQL = """
WITH locked AS (
  SELECT r.retired, s.status, (s.closes_at IS NOT NULL AND s.closes_at <= %(now)s) AS closed,
         s.allow_repeat_responses AS repeat_allowed, s.response_limit, s.invite_only
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
         count(*) FILTER (WHERE %(unlimited)s AND response_limit IS NOT NULL) AS limited,
         count(*) FILTER (WHERE invite_only AND %(invitation)s::bytea IS NULL) AS uninvited
  FROM locked
), accepted AS (
  SELECT 1 FROM verdict
  WHERE found = %(expected)s AND retired = 0 AND shut = 0 AND repeated = 0 AND limited = 0 AND uninvited = 0
), invited AS (
  UPDATE surveys_invitation SET used = TRUE
  WHERE %(invitation)s::bytea IS NOT NULL AND survey_id = %(survey)s AND token_hash = %(invitation)s::bytea
    AND NOT used AND EXISTS (SELECT 1 FROM accepted)
  RETURNING 1
), s AS (
  INSERT INTO surveys_submission (id, survey_id, received_hour, nonce)
  SELECT %(id)s, %(survey)s, %(hour)s, %(nonce)s FROM accepted
  WHERE %(invitation)s::bytea IS NULL OR EXISTS (SELECT 1 FROM invited)
  ON CONFLICT (nonce) DO NOTHING RETURNING id
), r AS (
  INSERT INTO surveys_report (survey_id, id, submission_id, question_id, randomization_id, packed)
  SELECT %(survey)s, v.id, s.id, v.question, v.randomization, v.packed
  FROM s, unnest(%(report_ids)s::bigint[], %(questions)s::bigint[], %(report_randomizations)s::bigint[],
                 %(packed)s::bytea[]) AS v(id, question, randomization, packed)
), c AS (
  INSERT INTO surveys_tallydelta (survey_id, id, shard, payload)
  SELECT %(survey)s, %(delta)s, %(shard)s, %(payload)s WHERE EXISTS (SELECT 1 FROM s)
), h AS (
  INSERT INTO surveys_hourlyresponses (survey_id, hour, shard, count)
  SELECT %(survey)s, %(hour)s, %(shard)s, 1 WHERE EXISTS (SELECT 1 FROM s)
  ON CONFLICT (survey_id, hour, shard) DO UPDATE SET count = surveys_hourlyresponses.count + 1
), v AS (
  INSERT INTO surveys_surveyversion (survey_id, shard, count)
  SELECT %(survey)s, %(shard)s, 1 WHERE EXISTS (SELECT 1 FROM s)
  ON CONFLICT (survey_id, shard) DO UPDATE SET count = surveys_surveyversion.count + 1
)
SELECT (SELECT count(*) FROM s), found, retired, shut, repeated, limited, uninvited, (SELECT count(*) FROM invited)
FROM verdict
"""


def _submit_in_one_statement(
    submission: Submission,
    reports: list[ParsedReport],
    shard: int,
    responded: bool,
    invitation: bytes | None,
    unlimited: bool,
) -> bool:
    """Run :data:`SUBMIT_SQL`; False if the survey has a response limit and ``unlimited`` was claimed."""
    randomizations = sorted({r.randomization.pk for r in reports})
    params: dict[str, Any] = {
        "now": timezone.now(),
        "survey": submission.survey_id,
        "randomizations": int_array(randomizations),
        "expected": len(randomizations),
        "responded": responded,
        "unlimited": unlimited,
        "invitation": invitation,
        "id": submission.pk,
        "hour": submission.received_hour,
        "nonce": submission.nonce,
        "report_ids": int_array(report_ids(len(reports))),
        "questions": int_array([r.question.pk for r in reports]),
        "report_randomizations": int_array([r.randomization.pk for r in reports]),
        "packed": bytea_array([r.packed for r in reports]),
        "delta": random_id(),
        "payload": tallies.delta_payload((r.randomization.pk, r.packed) for r in reports),
        "shard": shard,
    }
    with bound_cursor() as cursor:
        cursor.execute(SUBMIT_SQL, params)
        inserted, found, retired, shut, repeated, limited, uninvited, invited = cursor.fetchone()
    if shut:
        raise not_accepting(submission.survey)
    if found != len(randomizations) or retired:
        raise SubmissionError(409, _("The survey changed since this page was loaded. Reload it and answer again."))
    if repeated:
        raise SubmissionError(409, _("You have already answered this survey from this browser."))
    if limited:
        return False
    if uninvited:
        raise SubmissionError(403, str(UNINVITED))
    if invitation is not None and not invited:
        raise SubmissionError(403, str(INVITATION_USED))
    if not inserted:
        raise SubmissionError(409, _("These answers were already sent."))
    return True


def bound_cursor() -> Any:
    """A cursor of Django's PostgreSQL connection that binds parameters on the server.

    Django's own cursors bind on the client (psycopg's ``ClientCursor``): every array of
    :data:`SUBMIT_SQL` would be quoted into the statement's text and parsed back by the server.
    Parsing those literals was about 1 ms of the server's 2.5 ms per ten-question submission
    (``docs/benchmarks.md``). The statement stays unnamed (Django leaves psycopg's
    ``prepare_threshold`` unset), so it works behind a pooler in transaction mode; preparing it
    saved nothing measurable. The cursor goes through Django's wrapper: its execute wrappers
    and query log see it.
    """
    connection.ensure_connection()
    wrapper: Any = connection  # Django wraps its own cursors this way (not in its type stubs)
    return wrapper._prepare_cursor(psycopg.Cursor(connection.connection))


def int_array(values: Sequence[int]) -> str:
    """A PostgreSQL array literal of integers, ``{1,2,3}``, for a parameter cast to an array type.

    psycopg's list dumper is pure Python and walks every element (about a fifth of the submit
    view's CPU); the server reads this text with ``array_in``, as cheaply.
    """
    return "{" + ",".join(map(str, values)) + "}"


def bytea_array(values: Sequence[bytes]) -> str:
    r"""A PostgreSQL ``bytea[]`` literal: each element in hex, ``{"\\x0102",...}`` (the array's
    quoting halves the backslashes)."""
    return "{" + ",".join(f'"\\\\x{value.hex()}"' for value in values) + "}"


def not_accepting(survey: Survey) -> SubmissionError:
    """The refusal of a submission to a survey that is not open: a round of a recurring survey says
    which (400: reports of a closed round are never taken, the next round has its own link)."""
    if survey.series_id is not None:
        message = _(
            "Round %(round)s of this survey is closed and takes no more reports. Answer the current round "
            "at its own link."
        ) % {"round": survey.round_number}
        return SubmissionError(400, message)
    return SubmissionError(403, _("This survey is not accepting responses."))


UNINVITED = gettext_lazy("This survey takes answers by invitation only. Open the link from your invitation to answer.")
INVITATION_USED = gettext_lazy(
    "This invitation link has already been used or is not valid. Each invitation accepts one response."
)


def use_invitation(survey: Survey, invitation: bytes | None, invite_only: bool) -> None:
    """Mark the invitation used, or refuse: the statement-by-statement path (inside its transaction).

    One conditional ``UPDATE``: it matches only an unused invitation of this survey, so two
    submissions with the same invitation cannot both succeed.
    """
    if invitation is None:
        if invite_only:
            raise SubmissionError(403, str(UNINVITED))
        return
    if not Invitation.objects.filter(survey=survey, token_hash=invitation, used=False).update(used=True):
        raise SubmissionError(403, str(INVITATION_USED))


def lock_randomizations(survey: Survey, randomizations: list[Randomization]) -> bool:
    """Check, inside the submission's transaction, that its randomizations still take reports.

    The statement-by-statement path (SQLite). SQLite runs every write transaction alone
    (``BEGIN IMMEDIATE``), so this read cannot interleave with an edit; PostgreSQL share-locks and
    checks inside :data:`SUBMIT_SQL` instead. The same query re-reads whether the survey is open,
    and returns whether it takes answers by invitation only.
    """
    ids = sorted({r.pk for r in randomizations})
    sql = (
        "SELECT r.retired, s.status, CASE WHEN s.closes_at <= %s THEN 1 ELSE 0 END, s.invite_only "
        "FROM surveys_randomization r JOIN surveys_question q ON q.id = r.question_id "
        "JOIN surveys_survey s ON s.id = q.survey_id "
        f"WHERE s.id = %s AND r.id IN ({', '.join(['%s'] * len(ids))})"
    )
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(sql, [now, survey.pk, *ids])
        rows = cursor.fetchall()
    if any(status != Survey.Status.OPEN or closed for _retired, status, closed, _invite_only in rows):
        raise not_accepting(survey)
    if len(rows) != len(ids) or any(retired for retired, _status, _closed, _invite_only in rows):
        raise SubmissionError(409, _("The survey changed since this page was loaded. Reload it and answer again."))
    return any(bool(invite_only) for *_, invite_only in rows)


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
