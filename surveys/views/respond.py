"""Respondents' views: the answer page at the share link, and the submission endpoint.

The page sends each question's client spec; the browser randomizes and posts only reports
(static/surveys/respond.js). The endpoint stores a submission's reports all together or not at
all, and answers every refusal with a 4xx status and a sentence saying why.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.signing import BadSignature
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET, require_POST

from ldp import registry
from surveys import actions, languages
from surveys.access import get_survey_by_share_slug
from surveys.kinds import cost_of, skip_index, summary_of
from surveys.models import Question, Randomization, Survey, asked_jointly, spent_epsilon
from surveys.responding import retune
from surveys.responding.ratelimits import SUBMIT_WAIT, rate_limited
from surveys.responding.receipts import receipt_rows
from surveys.responding.submissions import (
    SubmissionError,
    new_token,
    parse_submission,
    randomizations_in_force,
    survey_for_submission,
)
from surveys.responding.writes import do_submit
from surveys.sampling import pool_of
from surveys.series import rounds
from surveys.transparency import entry_of, spec_digest

RESPONDED_COOKIE = "murmur-responded-{pk}"
RESPONDED_SALT = "murmur.responded"
RESPONDED_MAX_AGE = 365 * 24 * 3600


@dataclass(frozen=True)
class AnswerItem:
    """One question as a respondent sees it: its options, its client spec, its privacy."""

    question: Question
    version: int
    spec: dict[str, Any]
    privacy: Any
    """The privacy figures the page shows (:func:`surveys.kinds.cost_of`)."""
    memo: dict[str, Any] | None = None
    """A recurring survey's memoized question: its spec entry's ``memo`` block
    (:func:`surveys.series.rounds.memo_block`)."""
    epsilon_infinity: float | None = None
    """Memoized: the longitudinal bound, the permanent layer's epsilon over any number of rounds."""
    number: int = 0
    """Its number on the page: a matrix is one numbered block (:func:`grouped`)."""
    rows: list[AnswerItem] = field(default_factory=list)
    """A matrix's first item carries every row of its grid; the others are shown there."""
    drawn_elsewhere: bool = False
    """A matrix row other than the first (drawn in the grid), or a declared pair (its questions are drawn)."""
    pair: int | None = None
    """Asked in a declared pair: the pair's question id. ``spec`` and ``privacy`` are then the pair's."""
    pair_role: str = ""
    """"first" or "second": its answer's place in the pair's one answer, first * k2 + second."""
    memo_gamma: float | None = None
    """The randomization's stored flip of a memoized layer (``Randomization.memo_gamma``)."""
    skip: int | None = None
    """The option whose report a skip sends, its "Prefer not to say" (:func:`surveys.kinds.skip_index`; a
    declared pair's, carried by both its questions); None: the family's fill answer."""

    @property
    def epsilon(self) -> float:
        """What answering it spends: a declared pair's question shows the pair's epsilon, spent once for both."""
        return float(self.spec["epsilon"]) if self.pair is not None else self.question.epsilon

    @property
    def randomized(self) -> bool:
        """False for a question asked directly (:func:`ldp.registry.randomized`): its answer is sent
        as given, with no spec to randomize with and no budget (static/surveys/direct.js)."""
        return registry.randomized(self.spec["mechanism"])

    @property
    def total_epsilon(self) -> float:
        """A matrix's rows' ε in sum."""
        return sum(row.question.epsilon for row in self.rows)

    @property
    def takes(self) -> str:
        """What the browser randomizes (:attr:`surveys.kinds.base.Summary.takes`): the answer's "value"
        (numeric mechanisms), its "text" (free text), the "set" of options checked (multi-select) or
        option "index".

        Carried by the question's fieldset (``data-takes``), not the spec entries, whose digest the
        transparency page publishes."""
        return summary_of(self.spec["mechanism"]).takes


def has_responded(request: HttpRequest, survey: Survey) -> bool:
    """Whether this browser carries the signed "already responded" cookie for the survey."""
    try:
        request.get_signed_cookie(RESPONDED_COOKIE.format(pk=survey.pk), salt=RESPONDED_SALT)
    except (KeyError, BadSignature):
        return False
    return True


def answer_items(survey: Survey) -> list[AnswerItem]:
    in_force = randomizations_in_force(survey)

    def randomization_of(question: Question) -> Randomization:
        randomization = in_force.get(question.pk)
        if randomization is None:
            with transaction.atomic():
                randomization = actions.sync_randomization(question)
        return randomization

    return assemble_items(survey, randomization_of)


def assemble_items(survey: Survey, randomization_of: Any) -> list[AnswerItem]:
    """Every question as the page shows it, in order; ``randomization_of(question)`` gives its randomization.

    A question asked in a declared pair has none: its item carries the pair's spec and privacy, and
    its answer is randomized with the other's as the pair's one report.
    """
    questions = list(survey.questions.all())
    joint = asked_jointly(questions)
    n = survey.expected_respondents
    own = {q.pk: answer_item(randomization_of(q), n) for q in questions if q.pk not in joint}
    items = []
    for question in questions:
        if question.pk in joint:
            pair, role = joint[question.pk]
            items.append(replace(own[pair.pk], question=question, version=0, pair=pair.pk, pair_role=role))
        else:
            items.append(own[question.pk])
    return items


def answer_item(randomization: Randomization, n: int) -> AnswerItem:
    mechanism = randomization.build_mechanism()
    return AnswerItem(
        question=randomization.question,
        version=randomization.version,
        spec=mechanism.client_spec(),
        privacy=cost_of(mechanism, n),
        memo_gamma=randomization.memo_gamma,
        skip=skip_index(randomization.question),
    )


def specs_context(survey: Survey, items: list[AnswerItem]) -> dict[str, Any]:
    """What the answer page (and its preview) carries about the items' randomization.

    ``specs`` for respond.js to randomize with, their ``spec_digest`` (surveys.transparency), the
    ``total_epsilon`` the page states and the ``promise``: the budgets the page states, which the
    browser holds the specs to before it sends anything (static/ldp/epsilon.js).
    """
    # A declared pair's questions are sent as the pair: no spec, memo or budget of their own.
    items = grouped([with_memo(survey, i) if i.pair is None else i for i in items])
    sent = [i for i in items if i.pair is None and i.randomized]
    specs = [entry_of(i.question.pk, i.version, i.spec, i.memo, i.skip) for i in sent]
    # Of a sampled pool only the m questions really answered spend (surveys.sampling); the browser
    # draws them from the same block its promise check counts with (static/ldp/sampling.js).
    pool = pool_of(survey, [i.question.pk for i in sent])
    total_epsilon = spent_epsilon([i.question for i in sent], pool)
    promise = {
        "total": total_epsilon,
        "cap": survey.epsilon_cap,
        "questions": {str(i.question.pk): question_promise(i.question, i.epsilon_infinity) for i in sent},
    } | ({"sampling": pool.as_json()} if pool else {})
    return {
        "items": items,
        "logic": display_logic(items),
        "specs": specs,
        "spec_digest": spec_digest(specs),
        "total_epsilon": total_epsilon,
        "promise": promise,
        "pool": pool,
    }


def display_logic(items: list[AnswerItem]) -> dict[str, dict[str, Any]]:
    """Per question id, how the page shows it (``Question.logic``: a condition on an earlier answer, a
    random option order): read by respond.js, never part of a report. A condition on a question the
    survey no longer has, or on a later one, is dropped (the question is then always shown)."""
    seen: set[int] = set()
    logic: dict[str, dict[str, Any]] = {}
    for item in items:
        question = item.question
        rules = dict(question.logic or {})
        condition = rules.get("show_if")
        if condition is not None and (not isinstance(condition, dict) or condition.get("question") not in seen):
            rules.pop("show_if")
        seen.add(question.pk)
        if rules:
            logic[str(question.pk)] = rules
    return logic


def with_memo(survey: Survey, item: AnswerItem) -> AnswerItem:
    """The item with its memo block and longitudinal bound when the survey recurs and its mechanism memoizes."""
    memo = rounds.memo_block(survey, item.question, item.spec, item.memo_gamma)
    if memo is None:
        return item
    return replace(item, memo=memo, epsilon_infinity=rounds.permanent_epsilon(item.spec, memo))


def grouped(items: list[AnswerItem]) -> list[AnswerItem]:
    """The items numbered as the page shows them: a matrix's consecutive items are one grid.

    Every item stays in the list (each is its own question, spec and report); a matrix's first item
    carries all its ``rows`` and the others are marked ``drawn_elsewhere``, so the page draws them once;
    so is a declared pair, whose two questions are drawn where they stand.
    """
    result: list[AnswerItem] = []
    number = 0
    for item in items:
        matrix = item.question.matrix_id
        head = next((i for i in reversed(result) if not i.drawn_elsewhere), None) if result else None
        if matrix is not None and result and result[-1].question.matrix_id == matrix and head is not None:
            row = replace(item, number=head.number, drawn_elsewhere=True)
            head.rows.append(row)
            result.append(row)
            continue
        if item.question.pair_first_id is not None:
            result.append(replace(item, drawn_elsewhere=True))  # its two questions are drawn
            continue
        number += 1
        head = replace(item, number=number, rows=[])
        if matrix is not None:
            head.rows.append(head)
        result.append(head)
    return result


def question_promise(question: Question, epsilon_infinity: float | None = None) -> dict[str, float]:
    """The question's stated budget: its epsilon per report, its delta for an (epsilon, delta)
    mechanism, and for a memoized question of a recurring survey the bound over all rounds."""
    delta = question.mechanism_params.get("delta")
    promise = {"epsilon": question.epsilon} | ({"delta": float(delta)} if delta is not None else {})
    return promise | ({"epsilon_infinity": epsilon_infinity} if epsilon_infinity is not None else {})


@require_GET
@ensure_csrf_cookie
def respond(request: HttpRequest, slug: str) -> HttpResponse:
    survey = get_survey_by_share_slug(slug)
    if survey.series_id is not None and rounds.open_if_due(survey.series_id) is not None:
        survey.refresh_from_db()  # a schedule just opened the next round, which closed this one
    accepting = survey.accepting_responses()
    blocked = not survey.allow_repeat_responses and has_responded(request, survey)
    items = answer_items(survey) if accepting and not blocked else []
    # Text only: specs, digest and the body respond.js posts are the same in every language.
    reading = languages.reading(request, survey)
    languages.localize(survey, [item.question for item in items], reading.language)
    context = {
        "reading": reading,
        "transparency_url": reverse("transparency", args=[survey.slug]) + reading.query,
        "survey": survey,
        "accepting": accepting,
        "already_responded": blocked,
        **specs_context(survey, items),
        "token": new_token(survey) if items else "",
        "invitations_used": bool(items) and (survey.invite_only or survey.invitations.exists()),
        "current_round": None if accepting else rounds.current_round(survey),
    }
    return languages.render_in(reading, lambda: render(request, "surveys/respond.html", context))


@require_POST
@rate_limited("submit", per_argument="slug", as_json=True, message=SUBMIT_WAIT)
def submit(request: HttpRequest, slug: str) -> HttpResponse:
    try:
        survey = survey_for_submission(slug)
    except Http404:
        return JsonResponse({"error": _("There is no survey at this link, or it is not open yet.")}, status=404)
    try:
        if survey.series_id is not None:
            rounds.open_if_due(survey.series_id)  # a due round closes this one: the write then refuses
        body = read_json_body(request)
        parsed = parse_submission(survey, body)
        reports = parsed.reports
        do_submit(survey, parsed.nonce, reports, has_responded(request, survey), parsed.invitation)
        retune.after_submit(survey, reports)  # queues a two-phase question's re-tune at its threshold
    except SubmissionError as error:
        return JsonResponse({"error": error.message}, status=error.status)
    # The receipt in the language the page was read in (its submit URL's ?lang=, never the body, never stored);
    # a one-language survey's page sends none, and costs no query more.
    asked = languages.LANGUAGE_PARAMETER in request.GET
    reading = languages.reading(request, survey) if asked else languages.Reading(None, [])
    if reading.language is not None:  # copies: the questions of parsed reports are cached per process
        reports = [replace(r, question=copy.copy(r.question)) for r in reports]
        languages.localize(None, [r.question for r in reports], reading.language)
    response = languages.render_in(reading, lambda: JsonResponse({"receipt": receipt_rows(reports)}, status=201))
    response.set_signed_cookie(
        RESPONDED_COOKIE.format(pk=survey.pk),
        "1",
        salt=RESPONDED_SALT,
        max_age=RESPONDED_MAX_AGE,
        httponly=True,
        samesite="Lax",
        secure=settings.SESSION_COOKIE_SECURE,
    )
    return response


def read_json_body(request: HttpRequest) -> bytes:
    if request.content_type != "application/json":
        raise SubmissionError(415, _("Send the submission as application/json."))
    try:
        return request.body
    except RequestDataTooBig:
        raise SubmissionError(413, _("The submission is too large.")) from None
