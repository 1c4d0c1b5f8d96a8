"""The results pages: a survey's dashboard, one question's page, its candidate answers, the public page.

Owners see their surveys' results and staff see all (:func:`surveys.access.read_access`, the
rule of :func:`~surveys.access.get_survey_for_results` from the cache); everyone else gets 404.
Reading results costs O(number of options) per question: estimates come
from the running tallies, and every page answers 304 while its ETag stands.
"""

from __future__ import annotations

import functools
import json
from typing import Any, cast

import numpy as np
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from surveys.access import (
    get_question_for_owner,
    get_survey_by_share_slug,
    read_access,
)
from surveys.actions import do_set_candidates
from surveys.forms.candidates import CandidatesForm
from surveys.http import HtmxHttpRequest
from surveys.kinds import summary_of
from surveys.models import Question, Survey, asked_jointly
from surveys.replica import reads_results
from surveys.responding import tallies
from surveys.responding.ratelimits import rate_limited
from surveys.results import charts, crosstabs, snapshots, stamps, trends
from surveys.results.asked import asked_note
from surveys.results.cards import cached_chart, matrix_cards, responses_timeline, result_view, short_digest
from surveys.results.estimates import SurveyState
from surveys.series import rounds
from surveys.views.crosstab import crosstab_url
from surveys.views.reading import band_kind, conditional, estimate_kind, page_etag, rendered_once

DASHBOARD = "surveys/results.html"


def with_asked(view: dict[str, Any], state: SurveyState) -> dict[str, Any]:
    """The card's view with its branched question's note (:func:`surveys.results.asked.asked_note`)."""
    view["asked"] = asked_note(state, view["question"])
    return view


def over_time(survey: Survey, state: SurveyState | None = None) -> tuple[int, str, str]:
    """(responses, chart, digest) from the hourly counters (as the state's snapshot read them, if it
    has one): :func:`surveys.results.cards.responses_timeline`."""
    snapshot = state.snapshot if state is not None else None
    hourly = snapshot.hourly if snapshot is not None else tallies.hourly_counts(survey)
    return responses_timeline(survey.pk, hourly)


def dashboard_context(
    survey: Survey,
    kind: str,
    state: SurveyState | None = None,
    timeline: tuple[int, str, str] | None = None,
    bands: str = "option",
) -> dict[str, Any]:
    state = state or SurveyState.read(survey)
    responses, responses_chart, _hourly = timeline or over_time(survey, state)
    return {
        "survey": survey,
        "kind": kind,
        "bands": bands,
        "cards": matrix_cards(
            [with_asked(result_view(r, kind, bands), state) for r in state.all_results()], kind, bands
        ),
        "responses": responses,
        "responses_chart": responses_chart,
        "signature": state.signature,
        "snapshot": state.snapshot,
        "live": survey.status == Survey.Status.OPEN,
        "poll_seconds": settings.RESULTS_POLL_SECONDS,
    }


def trends_context(request: HtmxHttpRequest, survey: Survey) -> dict[str, Any]:
    """A recurring survey's trends (:mod:`surveys.results.trends`): per question a chart of every round's
    estimate with its 95 % interval, and the difference between two rounds (``?from=a&to=b``; by
    default the last two rounds with estimates)."""
    series = rounds.rounds_of(survey)
    if len(series) < 2:
        return {}
    found, signature = trends.series_trends(series)
    numbers = cast(list[int], [r.round_number for r in series])  # every round of a series has its number
    first, second = (
        _round_choice(request, "from", numbers, numbers[-2]),
        _round_choice(request, "to", numbers, numbers[-1]),
    )
    views = []
    for trend in found:
        chart = ""
        if trend.rounds and trend.labels:
            parts = [signature, trend.key, short_digest(json.dumps(trend.labels))]
            chart = cached_chart("trend", parts, functools.partial(trend_chart, trend))
        views.append({"trend": trend, "chart": chart, "difference": trend.difference(first, second)})
    return {
        "trends": views,
        "trend_signature": signature,
        "round_numbers": numbers,
        "compare": (first, second),
    }


def trend_chart(trend: trends.Trend) -> str:
    """A trend's lines: each round's estimate with its 95 % interval."""
    values = np.array([r.values for r in trend.rounds])
    low = np.array([r.low for r in trend.rounds])
    high = np.array([r.high for r in trend.rounds])
    numbers_shown = [r.round_number for r in trend.rounds]
    return charts.trend_lines(trend.labels, numbers_shown, values, low, high, trend.percent)


def _round_choice(request: HtmxHttpRequest, name: str, numbers: list[int], default: int) -> int:
    try:
        chosen = int(request.GET.get(name, default))
    except ValueError:
        return default
    return chosen if chosen in numbers else default


@login_required
@require_GET
@reads_results
def survey_results(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    survey, granted, found = read_access(request.user, survey_id, also=stamps.keys_of(survey_id))
    kind, bands = estimate_kind(request), band_kind(request)
    stamp = stamps.read(survey, found=found)  # O(1): the poll and the 304 need nothing else
    if request.htmx and request.GET.get("since") == stamp.signature:
        snapshots.publish(survey, stamp.snapshot)
        return HttpResponse(status=204)  # nothing new: htmx keeps the page as it is
    trend = {} if request.htmx else trends_context(request, survey)

    def render_page(csrf_token: str, freshness: str | None, can_export: bool, can_edit: bool) -> HttpResponse:
        state = stamps.state_of(survey, stamp)
        context = dashboard_context(survey, kind, state, bands=bands) | trend
        context["choices"] = crosstabs.choices(state)
        context["crosstab_url"] = crosstab_url(survey, public=False)
        context |= {"csrf_token": csrf_token, "freshness": freshness, "can_export": can_export, "can_edit": can_edit}
        if request.htmx:
            return render(request, f"{DASHBOARD}#results-body", context)
        return render(request, DASHBOARD, context)

    parts = ("dashboard", kind, bands, trend.get("trend_signature"), trend.get("compare"), request.get_full_path())
    return readers_page(request, survey, stamp, granted, parts, render_page)


@login_required
@require_GET
@reads_results
def question_results(request: HtmxHttpRequest, survey_id: int, question_id: int) -> HttpResponse:
    survey, granted, found = read_access(request.user, survey_id, also=stamps.keys_of(survey_id))
    question = get_object_or_404(Question, pk=question_id, survey=survey)
    kind, bands = estimate_kind(request), band_kind(request)
    stamp = stamps.read(survey, question.pk, found=found)
    if request.htmx and request.GET.get("since") == stamp.signature:
        snapshots.publish(survey, stamp.snapshot)
        return HttpResponse(status=204)

    def render_page(csrf_token: str, freshness: str | None, can_export: bool, can_edit: bool) -> HttpResponse:
        state = SurveyState.read(survey, [question], live=True, snapshot=stamp.snapshot)
        context = question_page_context(request, survey, question, state, kind, bands)
        context |= {"csrf_token": csrf_token, "freshness": freshness, "can_export": can_export, "can_edit": can_edit}
        if request.htmx:
            return render(request, "surveys/question_results.html#question-body", context)
        return render(request, "surveys/question_results.html", context)

    parts = ("question", question.pk, kind, bands, request.get_full_path())
    return readers_page(request, survey, stamp, granted, parts, render_page)


def readers_page(
    request: HtmxHttpRequest,
    survey: Survey,
    stamp: stamps.Stamp,
    granted: frozenset[str],
    parts: tuple[object, ...],
    render_page: Any,
) -> HttpResponse:
    """An organizer's results page: 304 while its ETag stands, else rendered once per snapshot
    (:func:`~surveys.views.reading.rendered_once`) by ``render_page(csrf_token, freshness,
    can_export, can_edit)``, then published as drawn.

    ``granted``: what the reader may do on the survey (:func:`surveys.access.read_access`).
    ``can_export``: whether they may download the raw reports (viewers read results, not reports);
    ``can_edit``: whether they may open the builder (not viewers, nor staff). The page offers only
    links its reader may follow, so both are part of its ETag (a changed role never gets a 304 of the
    old role's page) and of the shared rendering's key.
    """
    can_export, can_edit = "export" in granted, "edit" in granted
    parts = (*parts, can_export, can_edit)
    draw = functools.partial(render_page, can_export=can_export, can_edit=can_edit)
    response = conditional(
        request, page_etag(request, survey, stamp, *parts), lambda: rendered_once(request, survey, stamp, parts, draw)
    )
    snapshots.publish(survey, stamp.snapshot)  # drawn: every reader may now have these numbers
    patch_cache_control(response, private=True, no_cache=True)
    return response


def question_page_context(
    request: HtmxHttpRequest,
    survey: Survey,
    question: Question,
    state: SurveyState,
    kind: str,
    bands: str,
    candidates_form: CandidatesForm | None = None,
) -> dict[str, Any]:
    """One question's results page; a short-answer question's owner also gets its candidates form."""
    cards = [with_asked(result_view(r, kind, bands), state) for r in state.results(question)]
    card: dict[str, Any] = (
        cards[0] if cards else {"question": question, "result": None, "anchor": f"result-{question.pk}"}
    )
    joint = asked_jointly(list(survey.questions.all()))
    if question.pk in joint:  # no reports of its own: its card points to the pair's results
        card["pair"] = joint[question.pk][0]
        card["pair_url"] = reverse("question_results", args=[survey.pk, card["pair"].pk])
    if summary_of(question.mechanism).queries_candidates and survey.owner_id == request.user.pk:
        card["candidates_form"] = candidates_form or CandidatesForm(
            initial={"candidates_text": "\n".join(question.candidates)}
        )
    context = {"survey": survey, "kind": kind, "bands": bands, "card": card, "earlier_cards": cards[1:]}
    context["signature"] = state.signature
    context["snapshot"] = state.snapshot
    context["live"] = survey.status == Survey.Status.OPEN
    context["poll_seconds"] = settings.RESULTS_POLL_SECONDS
    return context


@login_required
@require_POST
def question_candidates(request: HtmxHttpRequest, survey_id: int, question_id: int) -> HttpResponse:
    """Set a short-answer question's candidate answers ("how many wrote X?"), even after reports arrived.

    Candidates are not part of the randomization: changing them only changes which strings are counted.
    """
    question = get_question_for_owner(request.user, survey_id, question_id)
    if not summary_of(question.mechanism).queries_candidates:
        raise Http404
    form = CandidatesForm(request.POST)
    if not form.is_valid():
        state = SurveyState.read(question.survey, [question])
        context = question_page_context(
            request, question.survey, question, state, estimate_kind(request), band_kind(request), form
        )
        return render(request, "surveys/question_results.html", context, status=400)
    do_set_candidates(question, form.cleaned_data["candidates_text"])
    messages.success(request, _("Candidate answers saved."))
    return redirect("question_results", survey_id, question_id)


@require_GET
@rate_limited("public_results", methods=("GET", "HEAD"))
@reads_results
def public_results(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The read-only published results: estimates and charts come from the cache once drawn."""
    survey = get_survey_by_share_slug(slug)
    if not survey.public_results:
        raise Http404
    stamp = stamps.read(survey)
    bands = band_kind(request)

    def render_page(csrf_token: str, freshness: str | None) -> HttpResponse:
        state = stamps.state_of(survey, stamp)
        context = dashboard_context(survey, "consistent", state, bands=bands)
        context["public"] = True
        context["choices"] = crosstabs.choices(state)
        context["crosstab_url"] = crosstab_url(survey, public=True)
        context |= {"csrf_token": csrf_token, "freshness": freshness}
        return render(request, "surveys/public_results.html", context)

    parts = ("public", bands, request.get_full_path())  # the hourly counts: in the stamp's words
    response = conditional(
        request,
        page_etag(request, survey, stamp, *parts),
        lambda: rendered_once(request, survey, stamp, parts, render_page),
    )
    snapshots.publish(survey, stamp.snapshot)
    patch_cache_control(response, no_cache=True)
    return response
