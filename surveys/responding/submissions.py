"""Respondents' submissions: strict parsing, one-time tokens, and the all-or-nothing write.

A submission is JSON::

    {"token": "<one-time token of the answer page>",
     "reports": [{"question": <id>, "version": <randomization version>, "report": {...}}, ...],
     "invite": "<invitation token>"}      (only when answering through an invitation link)

Each report is validated by its mechanism (``ldp``'s ``parse_report``) against the question's
frozen randomization. A submission carries exactly one report for every question in force (a
question that was skipped or not shown on the respondent's path sends the report of a stand-in
answer, :mod:`ldp.branching`), so its shape never depends on the answers; one that lacks a
question is refused. Everything is stored in one
transaction, with the tallies, or nothing is.

Parsing touches nothing; :mod:`surveys.responding.writes` stores a parsed submission in a constant number of
statements (one on PostgreSQL). The survey and its randomizations in force are cached per process
as hints only: the write re-checks everything that decides whether a submission is taken.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.core import signing
from django.utils.translation import gettext as _
from django.utils.translation import pgettext_lazy

from ldp.mechanisms import InvalidReport
from ldp.registry import randomized
from surveys.access import get_survey_by_share_slug
from surveys.models import Question, Randomization, Survey
from surveys.responding import invitations

TOKEN_SALT = "murmur.submission-token"
TOKEN_MAX_AGE = 7 * 24 * 3600
#: A real token is about 110 characters; anything much longer is not one.
TOKEN_MAX_LENGTH = 512


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
    """The nonce inside a valid token for this survey.

    A token is refused unless it is short ASCII text whose signature holds and whose payload is
    exactly the object :func:`new_token` signs; no payload, however it was made, reaches a 500.
    """
    if not isinstance(token, str):
        raise SubmissionError(400, _("The submission has no page token."))
    if len(token) > TOKEN_MAX_LENGTH or not token.isascii():
        raise SubmissionError(400, _("The page token is not valid."))
    try:
        data = signing.loads(token, salt=TOKEN_SALT, max_age=TOKEN_MAX_AGE)
    except signing.SignatureExpired:
        raise SubmissionError(409, _("This page is too old. Reload it and answer again.")) from None
    except (signing.BadSignature, ValueError):
        raise SubmissionError(400, _("The page token is not valid.")) from None
    if not isinstance(data, dict) or set(data) != {"survey", "nonce"} or not isinstance(data["nonce"], str):
        raise SubmissionError(400, _("The page token is not valid."))
    survey_id = data["survey"]
    if isinstance(survey_id, bool) or survey_id != survey.pk:
        raise SubmissionError(400, _("The page token belongs to another survey."))
    return data["nonce"]


class _DuplicateKey(ValueError):
    """A JSON object names the same field twice (``json`` would silently keep the last)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _DuplicateKey
    return result


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(body: bytes) -> Any:
    """The body as strict JSON: UTF-8, no NaN or Infinity, no field twice in one object.

    Nesting deeper than the interpreter's recursion limit (about 1,000 levels) is refused: the
    ``json`` module raises ``RecursionError`` there, which would otherwise escape as a 500.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise SubmissionError(400, _("The submission is not UTF-8 text.")) from None
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except RecursionError:
        raise SubmissionError(400, _("The submission is nested too deeply.")) from None
    except _DuplicateKey:
        raise SubmissionError(400, _("The submission names the same field twice in one object.")) from None
    except ValueError:
        raise SubmissionError(400, _("The submission is not valid JSON.")) from None


@dataclass(frozen=True)
class ParsedSubmission:
    nonce: str
    reports: list[ParsedReport]
    #: The keyed hash of the invitation token sent, if any (``surveys.responding.invitations.token_hash``).
    invitation: bytes | None = None


def parse_submission(survey: Survey, body: bytes) -> ParsedSubmission:
    """Validate a submission body completely, touching nothing."""
    payload = parse_json(body)
    if not isinstance(payload, dict) or not {"token", "reports"} <= set(payload) <= {"token", "reports", "invite"}:
        raise SubmissionError(
            400, _("A submission is an object with the fields “token” and “reports”, and “invite” if invited.")
        )
    nonce = read_token(survey, payload["token"])
    invitation = read_invitation(payload.get("invite"))
    items = payload["reports"]
    if not isinstance(items, list):
        raise SubmissionError(400, _("“reports” must be a list."))
    if not items:
        raise SubmissionError(400, _("Answer at least one question before sending."))
    in_force = cached_randomizations_in_force(survey)
    try:
        reports = parse_items(items, in_force)
    except StaleRandomizations:
        # The cache predates a change of the survey: read it afresh and judge the reports on that.
        reports = parse_items(items, cached_randomizations_in_force(survey, refresh=True))
    return ParsedSubmission(nonce, reports, invitation)


def read_invitation(token: Any) -> bytes | None:
    """The keyed hash of an invitation token sent with a submission (None: none sent)."""
    if token is None:
        return None
    if not isinstance(token, str) or not 16 <= len(token) <= 64 or not token.isascii():
        raise SubmissionError(
            400, _("The invitation in this link is not valid. Open the link exactly as you received it.")
        )
    return invitations.token_hash(token)


class StaleRandomizations(Exception):
    """A report names a question or version the cached randomizations do not know."""


def parse_items(items: list[Any], in_force: InForce, complete: bool = True) -> list[ParsedReport]:
    """Each item parsed against the randomizations in force; with ``complete`` (a real submission,
    not a builder's preview check) every question in force must have its report."""
    try:
        if len(items) > len(in_force.by_question):
            raise SubmissionError(400, _("There are more reports than questions."))
        parsed: list[ParsedReport] = []
        seen: set[int] = set()
        for position, item in enumerate(items, start=1):
            parsed.append(_parse_item(item, position, in_force.by_question, seen, in_force.before))
        if complete and not seen >= in_force.randomized_questions:
            raise SubmissionError(
                400,
                _(
                    "A submission carries one report for every question, also those skipped or not "
                    "asked; this one lacks some. Reload the page and answer again."
                ),
            )
    except SubmissionError:
        if in_force.cached:
            raise StaleRandomizations from None
        raise
    return parsed


@dataclass(frozen=True)
class InForce:
    by_question: Mapping[int, Randomization | None]
    read_at: float
    cached: bool = False
    before: Mapping[int, Randomization] = field(default_factory=dict)
    """Per two-phase question, the version its re-tune followed, still accepted
    (:func:`accepted_randomizations`)."""

    @property
    def randomized_questions(self) -> set[int]:
        """The questions every submission must carry a report for: all but those asked directly
        (whose answer is sent only when given; they are never behind a condition)."""
        return {
            question
            for question, randomization in self.by_question.items()
            if randomization is None or randomized(randomization.mechanism)
        }


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
    by_question, before = accepted_randomizations(survey)
    _IN_FORCE[key] = InForce(by_question, now, cached=True, before=before)
    return InForce(by_question, now, before=before)


def randomizations_in_force(survey: Survey) -> dict[int, Randomization | None]:
    """Per question id, the randomization reports must use now (None: none in force), one query."""
    return accepted_randomizations(survey)[0]


def accepted_randomizations(survey: Survey) -> tuple[dict[int, Randomization | None], dict[int, Randomization]]:
    """(:func:`randomizations_in_force`, per question id the version a re-tune followed), one query.

    A two-phase question's first version stays in force beside the re-tuned one
    (:mod:`surveys.kinds.adaptive`): a page served before the switch carried it, and its reports
    are estimated with the new version's, so they are still accepted; new pages get the new one.
    """
    questions: dict[int, Randomization | None] = {}
    before: dict[int, Randomization] = {}
    rows = (
        Randomization.objects.filter(question__survey=survey, retired=False)
        .select_related("question")
        .order_by("question__position", "question_id", "version")
    )
    last: dict[int, Randomization] = {}
    for randomization in rows:
        question = randomization.question
        current = randomization if randomization.key() == question.randomization_key() else None
        if current is not None and current.retuned_after is not None and question.pk in last:
            before[question.pk] = last[question.pk]
        last[question.pk] = randomization
        questions[question.pk] = current  # the newest version in force wins
    return questions, before


REPORT_ITEM_FIELDS = {"question", "version", "report"}


class _Where:
    """ "Report <position>", translated only when a refusal names it (a valid report never does)."""

    def __init__(self, position: int) -> None:
        self.position = position

    def __str__(self) -> str:
        return _("Report %(position)s") % {"position": self.position}


def _parse_item(
    item: Any,
    position: int,
    in_force: Mapping[int, Randomization | None],
    seen: set[int],
    before: Mapping[int, Randomization] | None = None,
) -> ParsedReport:
    where = _Where(position)
    if not isinstance(item, dict) or item.keys() != REPORT_ITEM_FIELDS:
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
    earlier = (before or {}).get(question_id)
    if earlier is not None and not isinstance(version, bool) and version == earlier.version:
        randomization = earlier  # a page served before the question's re-tune
    if randomization is None or isinstance(version, bool) or version != randomization.version:
        raise SubmissionError(409, _("The survey changed since this page was loaded. Reload it and answer again."))
    question = randomization.question
    try:
        packed = randomization.build_mechanism().parse_report(item["report"])
    except InvalidReport as error:
        raise SubmissionError(
            400,
            _("%(where)s (question “%(text)s”) is malformed: %(reason)s")
            % {"where": where, "text": question.text, "reason": report_reason(error)},
        ) from None
    return ParsedReport(question, randomization, packed)


#: The fields of a report (``ldp``'s ``parse_report``), as the error names them.
REPORT_FIELDS = {
    "value": pgettext_lazy("report field", "value"),
    "index": pgettext_lazy("report field", "index"),
    "bit": pgettext_lazy("report field", "bit"),
    "bits": pgettext_lazy("report field", "bits"),
    "buckets": pgettext_lazy("report field", "buckets"),
    "subset": pgettext_lazy("report field", "subset"),
    "hash": pgettext_lazy("report field", "hash"),
    "hash_index": pgettext_lazy("report field", "hash_index"),
    "coefficient": pgettext_lazy("report field", "coefficient"),
    "row": pgettext_lazy("report field", "row"),
    "cohort": pgettext_lazy("report field", "cohort"),
}


def field_name(field: str, position: int | None = None) -> str:
    """A report field's name in the active language, with the entry's index in its list if given."""
    name = str(REPORT_FIELDS.get(field, field))
    return name if position is None else f"{name}[{position}]"


def report_reason(error: InvalidReport) -> str:
    """Why ``ldp`` refused a report, in the active language, from the error's code and parameters
    (:class:`ldp.mechanisms.reports.InvalidReport`); its English message for a code it does not know."""
    params = error.params
    field = field_name(params["field"], params.get("position")) if "field" in params else ""
    if error.code == "not-an-object":
        return _("a report must be an object")
    if error.code == "wrong-fields":
        names = ", ".join(field_name(name) for name in params["fields"])
        return _("a report must have exactly the fields %(fields)s") % {"fields": names}
    if error.code == "not-an-integer":
        return _("%(field)s must be an integer") % {"field": field}
    if error.code == "out-of-range":
        values = {"field": field, "low": params["low"], "high": params["high"], "value": params["value"]}
        return _("%(field)s must lie in [%(low)s, %(high)s], got %(value)s") % values
    if error.code == "not-a-list":
        return _("%(field)s must be a list") % {"field": field}
    if error.code == "wrong-length":
        values = {"field": field, "length": params["length"], "got": params["got"]}
        return _("%(field)s must have %(length)s entries, got %(got)s") % values
    if error.code == "not-a-bit":
        return _("%(field)s must be 0 or 1") % {"field": field}
    if error.code == "repeated":
        return _("%(field)s must not repeat an entry") % {"field": field}
    if error.code == "packed-width":
        return _("a stored report must have %(width)s bytes, got %(got)s") % params
    return str(error)


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
