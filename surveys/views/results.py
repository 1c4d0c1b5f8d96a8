"""Results readers' views: the dashboard, per-question results, exports, public results.

Owners see their surveys' results and staff see all (:func:`surveys.access.get_survey_for_results`);
everyone else gets 404. Reading results costs O(number of options) per question: estimates come
from the running tallies; only the raw-report export reads every report, streaming.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterator
from typing import Any

import numpy as np
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.messages import get_messages
from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotModified, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from ldp.advisor import Z_95
from ldp.crosstab import JointEstimate, declared_joint
from surveys.access import get_question_for_owner, get_survey_by_share_slug, get_survey_for_results
from surveys.actions import do_set_candidates
from surveys.forms import CandidatesForm
from surveys.kinds import family, kind_of, linear_summary
from surveys.models import Question, Report, Survey, asked_jointly
from surveys.replica import reads_results
from surveys.responding import tallies
from surveys.responding.ratelimits import rate_limited
from surveys.results import charts, crosstabs, integrity, trends
from surveys.results.estimates import (
    BAND_CHOICES,
    CACHE_SECONDS,
    ESTIMATE_KINDS,
    QuestionResult,
    SurveyState,
    randomization_digest,
    synthetic,
)
from surveys.series import rounds

DASHBOARD = "surveys/results.html"
#: Part of every results page's ETag: bump when the pages' templates change what they show.
PAGE_VERSION = 2


def estimate_kind(request: HttpRequest) -> str:
    kind = request.GET.get("estimate", "consistent")
    return kind if kind in ESTIMATE_KINDS else "consistent"


def band_kind(request: HttpRequest) -> str:
    """ "option" (each option's own 95 % band, the default) or "joint" (all options at once)."""
    bands = request.GET.get("bands", "option")
    return bands if bands in BAND_CHOICES else "option"


def estimate_chart(result: QuestionResult, kind: str, bands: str = "option") -> str:
    """The result's bar chart, drawn once per (randomization, tally, kind, bands, labels, language)."""
    labels = result.question.options
    parts = [randomization_digest(result.randomization), result.digest, kind, bands, _digest(json.dumps(labels))]
    key = f"murmur:chart:{charts.CHART_VERSION}:" + ":".join([*parts, get_language()])
    svg = cache.get(key)
    if svg is None:
        estimate = result.estimate(kind)  # type: ignore[arg-type]
        assert estimate is not None
        low, high = result.bands(kind, bands)  # type: ignore[arg-type]
        svg = charts.estimate_bars(labels, estimate.proportions, low, high)
        cache.set(key, svg, CACHE_SECONDS)
    return svg


def result_view(result: QuestionResult, kind: str, bands: str = "option") -> dict[str, Any]:
    """What the shared result card shows for one question (one version of its randomization)."""
    anchor = f"result-{result.question.pk}" + (f"-v{result.randomization.version}" if result.earlier else "")
    view: dict[str, Any] = {"result": result, "question": result.question, "rows": [], "chart": "", "bands": bands}
    view["anchor"] = anchor
    view["outer"] = "surveys/_result_card.html"
    card = summary_card(result)
    view["template"] = f"surveys/kinds/{card}_result.html"
    if result.n and result.enough:
        SUMMARY_CARDS[card](result, kind, view)
    return view


def summary_card(result: QuestionResult) -> str:
    """Which card shows the result: its kind's own (a declared pair's cross-tab), else its family's."""
    return kind_of(result.question.kind).result_card or result.summary


def declared_crosstab(result: QuestionResult) -> JointEstimate:
    """A declared pair's joint estimate: its mechanism's estimate over k1 k2 answers, reshaped.

    Made from the result's own estimate, so the card's cells, n and cache key all name one tally.
    """
    question = result.question
    assert question.pair_first is not None and question.pair_second is not None
    assert result.unbiased is not None
    k1, k2 = question.pair_first.k, question.pair_second.k
    return declared_joint(result.mechanism, result.unbiased, result.n, k1, k2)  # type: ignore[arg-type]


def pair_card(result: QuestionResult, kind: str, view: dict[str, Any]) -> None:
    """A declared pair: the cross-tab (heatmap, cells with bands, conditional shares) and both marginals."""
    question = result.question
    first, second = question.pair_first, question.pair_second
    assert first is not None and second is not None
    estimate, bands = declared_crosstab(result), view["bands"]
    view["first"], view["second"] = first, second
    view["rows"] = crosstabs.cell_rows(estimate, first.options, second.options, bands)
    view["conditionals"] = crosstabs.conditionals(estimate, first, second, bands)
    view["marginals"] = [
        {"question": q, "rows": crosstabs.marginal_rows(estimate, which, q.options, bands)}
        for which, q in (("first", first), ("second", second))
    ]
    name = f"pair-chart:{randomization_digest(result.randomization)}:{result.digest}"
    view["chart"] = heatmap(name, estimate, first.options, second.options, bands)


def heatmap(name: str, estimate: JointEstimate, rows: list[str], columns: list[str], bands: str) -> str:
    """A cross-tab's heatmap with the bands chosen, drawn once per (``name``: its tally, bands, labels, language)."""
    labels = _digest(json.dumps([rows, columns]))
    key = f"murmur:{name}:{charts.CHART_VERSION}:{bands}:{labels}:{get_language()}"
    svg = cache.get(key)
    if svg is None:
        low, high = crosstabs.cell_bands(estimate, bands)
        svg = charts.crosstab_heatmap(rows, columns, estimate.consistent_cells, low, high)
        cache.set(key, svg, CACHE_SECONDS)
    return svg


def shares_card(result: QuestionResult, kind: str, view: dict[str, Any]) -> None:
    """Each option's share with its band; for a rating scale also its mean (and NPS on 0-10)."""
    estimate = result.estimate(kind)  # type: ignore[arg-type]
    assert estimate is not None and result.unbiased is not None
    low, high = result.bands(kind, view["bands"])  # type: ignore[arg-type]
    view["chart"] = estimate_chart(result, kind, view["bands"])
    view["rows"] = [
        {
            "label": label,
            "estimate": estimate.proportions[i],
            "standard_error": estimate.standard_errors[i],
            "low": low[i],
            "high": high[i],
            "raw": int(result.raw_counts[i]),
        }
        for i, label in enumerate(result.question.options)
    ]
    view["summaries"] = linear_summaries(result)


def linear_summaries(result: QuestionResult) -> dict[str, dict[str, float]]:
    """A rating's mean and NPS from its unbiased shares (:func:`surveys.kinds.linear_summary`)."""
    if result.unbiased is None:
        return {}
    weights = kind_of(result.question.kind).point_weights(result.question)
    return {name: linear_summary(c, result.unbiased) for name, c in weights.items()}


def mean_card(result: QuestionResult, kind: str, view: dict[str, Any]) -> None:
    """The unbiased mean with its standard error and 95 % interval, drawn on the question's range."""
    assert result.mean is not None
    low, high = result.mean.confidence_interval(0.95)
    view["mean"] = {"value": result.mean.mean, "standard_error": result.mean.standard_error, "low": low, "high": high}
    mechanism = result.mechanism
    key = f"murmur:mean-chart:{randomization_digest(result.randomization)}:{result.digest}:{get_language()}"
    svg = cache.get(key)
    if svg is None:
        svg = charts.mean_interval(mechanism.lo, mechanism.hi, result.mean.mean, low, high)  # type: ignore[union-attr]
        cache.set(key, svg, CACHE_SECONDS)
    view["chart"] = svg
    view["synthetic"] = synthetic(result)


def text_card(result: QuestionResult, kind: str, view: dict[str, Any]) -> None:
    """Each candidate answer's estimated count and share with 95 % intervals; the ones found listed."""
    rows = view["candidates"] = candidate_rows(result)
    view["found"] = [row for row in rows if row["found"]]
    view["text_method"] = result.text.method if result.text is not None else ""
    if rows:
        columns = [(row["share"], row["share_low"], row["share_high"]) for row in rows]
        view["chart"] = bars_chart(result, "text-chart", [row["label"] for row in rows], columns)


def bars_chart(result: QuestionResult, name: str, labels: list[str], columns: list[Any], *parts: str) -> str:
    """:func:`surveys.results.charts.estimate_bars` of (share, low, high) per label, drawn once per
    (randomization, tally, ``parts``, labels, language)."""
    material = [randomization_digest(result.randomization), result.digest, *parts, _digest(json.dumps(labels))]
    key = f"murmur:{name}:{charts.CHART_VERSION}:" + ":".join([*material, get_language()])
    svg = cache.get(key)
    if svg is None:
        svg = charts.estimate_bars(labels, *np.array(columns, dtype=float).T)
        cache.set(key, svg, CACHE_SECONDS)
    return svg


def candidate_rows(result: QuestionResult) -> list[dict[str, Any]]:
    """Per candidate: count, share (count / n), standard error, 95 % interval, p-value, found."""
    text = result.text
    if text is None:
        return []
    low, high = text.interval(0.95)
    return [
        {
            "label": label,
            "count": float(text.counts[i]),
            "share": float(text.counts[i]) / text.n,
            "standard_error": float(text.standard_errors[i]),
            "low": float(low[i]),
            "high": float(high[i]),
            "share_low": float(low[i]) / text.n,
            "share_high": float(high[i]) / text.n,
            "p_value": float(text.p_values[i]),
            "found": bool(text.found[i]),
        }
        for i, label in enumerate(text.candidates)
    ]


def multi_card(result: QuestionResult, kind: str, view: dict[str, Any]) -> None:
    """Multi-select: each option's share of respondents with its band, and the mean number chosen."""
    rows = view["rows"] = multi_option_rows(result, kind, view["bands"])
    view["mean_count"] = mean_count(result)
    columns = [(row["estimate"], row["low"], row["high"]) for row in rows]
    view["chart"] = bars_chart(result, "multi-chart", [row["label"] for row in rows], columns, kind, view["bands"])


def mean_count(result: QuestionResult) -> dict[str, float]:
    """Multi-select: the mean number of options chosen, its standard error and 95 % interval (cut to [0, k])."""
    assert result.multi is not None
    low, high = result.multi.mean_count_interval(0.95)
    error = float(np.sqrt(max(result.multi.mean_count_variance, 0.0)))
    return {"value": result.multi.mean_count, "standard_error": error, "low": low, "high": high}


def multi_option_rows(result: QuestionResult, kind: str, bands: str) -> list[dict[str, Any]]:
    """Per option: its share (clipped to [0, 1] for "consistent", as estimated for "unbiased"), the
    standard error, and the 95 % band drawn: each option's own (unified intervals on [0, 1] beside
    the clipped share, estimate +/- 1.96 standard errors beside the unbiased one) or, with
    ``bands="joint"``, the bands for all options at once (:class:`ldp.multiselect.SharesEstimate`)."""
    multi = result.multi
    assert multi is not None
    errors = multi.standard_errors
    shares = multi.consistent_shares if kind == "consistent" else multi.shares
    if bands == "joint":
        low, high = multi.simultaneous
    elif kind == "consistent":
        low, high = multi.bands
    else:
        low, high = multi.shares - Z_95 * errors, multi.shares + Z_95 * errors
    return [
        {
            "label": label,
            "estimate": float(shares[i]),
            "unbiased": float(multi.shares[i]),
            "standard_error": float(errors[i]),
            "low": float(low[i]),
            "high": float(high[i]),
            "raw": int(result.raw_counts[i]),
        }
        for i, label in enumerate(result.question.options)
    ]


#: How each summary card fills it: a family's ("shares", "mean", "text" or "multi", :func:`surveys.kinds.family`)
#: or a kind's own ("pair", :attr:`surveys.kinds.QuestionKind.result_card`).
SUMMARY_CARDS = {"shares": shares_card, "mean": mean_card, "text": text_card, "multi": multi_card, "pair": pair_card}


def matrix_cards(cards: list[dict[str, Any]], kind: str, bands: str) -> list[dict[str, Any]]:
    """The result cards with each matrix's items gathered into one compact card (stacked bars and a table).

    An item's reports under an earlier version of its randomization keep their own card, after the matrix's.
    """
    grouped: list[dict[str, Any]] = []
    matrices: dict[int, dict[str, Any]] = {}
    for card in cards:
        question, result = card["question"], card["result"]
        if question.matrix_id is None:
            grouped.append(card)
            continue
        head = matrices.get(question.matrix_id)
        if head is None:
            head = matrices[question.matrix_id] = {"matrix": question.matrix, "items": [], "earlier": []}
            head |= {"outer": "surveys/_matrix_result.html", "anchor": f"matrix-{question.matrix_id}"}
            grouped.append(head)
        (head["earlier"] if result.earlier else head["items"]).append(card)
    for card in grouped:
        if card.get("matrix") is not None:
            card["chart"] = matrix_chart(card["items"], kind, bands)
    return grouped


def matrix_chart(items: list[dict[str, Any]], kind: str, bands: str) -> str:
    """Stacked bars of a matrix's items that have enough reports, drawn once per state of their tallies."""
    shown = [card["result"] for card in items if card["result"].n and card["result"].enough]
    if not shown:
        return ""
    parts = [f"{randomization_digest(r.randomization)}{r.digest}" for r in shown]
    labels = json.dumps([[r.question.text for r in shown], shown[0].question.options])
    state = _digest(":".join(parts) + labels)
    key = f"murmur:matrix-chart:{charts.CHART_VERSION}:{state}:{kind}:{bands}:{get_language()}"
    svg = cache.get(key)
    if svg is None:
        shares = np.array([r.estimate(kind).proportions for r in shown])  # type: ignore[arg-type, union-attr]
        low, high = (np.array(side) for side in zip(*(r.bands(kind, bands) for r in shown), strict=True))  # type: ignore[arg-type]
        svg = charts.matrix_bars([r.question.text for r in shown], shown[0].question.options, shares, low, high)
        cache.set(key, svg, CACHE_SECONDS)
    return svg


def over_time(survey: Survey) -> tuple[int, str, str]:
    """(responses, chart, digest) from the hourly counters; the chart is drawn once per state."""
    hourly = tallies.hourly_counts(survey)
    total = sum(count for _, count in hourly)
    if not hourly:
        return 0, "", ""
    digest = _digest(repr(hourly))
    key = f"murmur:over-time:{charts.CHART_VERSION}:{survey.pk}:{digest}:{get_language()}"
    chart = cache.get(key)
    if chart is None:
        chart = charts.responses_over_time([h for h, _ in hourly], [c for _, c in hourly])
        cache.set(key, chart, CACHE_SECONDS)
    return total, chart, digest


def dashboard_context(
    survey: Survey,
    kind: str,
    state: SurveyState | None = None,
    timeline: tuple[int, str, str] | None = None,
    bands: str = "option",
) -> dict[str, Any]:
    state = state or SurveyState.read(survey)
    responses, responses_chart, _hourly = timeline or over_time(survey)
    return {
        "survey": survey,
        "kind": kind,
        "bands": bands,
        "cards": matrix_cards([result_view(r, kind, bands) for r in state.all_results()], kind, bands),
        "responses": responses,
        "responses_chart": responses_chart,
        "signature": state.signature,
        "live": survey.status == Survey.Status.OPEN,
        "poll_seconds": settings.RESULTS_POLL_SECONDS,
    }


def trends_context(request: HttpRequest, survey: Survey) -> dict[str, Any]:
    """A recurring survey's trends (:mod:`surveys.results.trends`): per question a chart of every round's
    estimate with its 95 % interval, and the difference between two rounds (``?from=a&to=b``; by
    default the last two rounds with estimates)."""
    series = rounds.rounds_of(survey)
    if len(series) < 2:
        return {}
    found, signature = trends.series_trends(series)
    numbers = [r.round_number for r in series]
    first, second = (
        _round_choice(request, "from", numbers, numbers[-2]),
        _round_choice(request, "to", numbers, numbers[-1]),
    )
    views = []
    for trend in found:
        chart = ""
        if trend.rounds and trend.labels:
            labels = _digest(json.dumps(trend.labels))
            key = f"murmur:trend:{charts.CHART_VERSION}:{signature}:{trend.key}:{labels}:{get_language()}"
            chart = cache.get(key)
            if chart is None:
                values = np.array([r.values for r in trend.rounds])
                low = np.array([r.low for r in trend.rounds])
                high = np.array([r.high for r in trend.rounds])
                numbers_shown = [r.round_number for r in trend.rounds]
                chart = charts.trend_lines(trend.labels, numbers_shown, values, low, high, trend.percent)
                cache.set(key, chart, CACHE_SECONDS)
        views.append({"trend": trend, "chart": chart, "difference": trend.difference(first, second)})
    return {
        "trends": views,
        "trend_signature": signature,
        "round_numbers": numbers,
        "compare": (first, second),
    }


def _round_choice(request: HttpRequest, name: str, numbers: list[int], default: int) -> int:
    try:
        chosen = int(request.GET.get(name, default))
    except ValueError:
        return default
    return chosen if chosen in numbers else default


def page_etag(request: HttpRequest, survey: Survey, state: SurveyState, *parts: object) -> str:
    """An ETag for a results page: it changes whenever anything the page shows can change.

    The tallies' signature stands for every number on the page (each submission changes it);
    the rest is what else the page prints: the survey's and questions' words, the estimate kind,
    language, viewer and CSRF cookie (forms in the header carry its token). There is no
    Last-Modified: the server keeps no time finer than the hour.
    """
    questions = [(q.pk, q.position, q.text, q.options, q.mechanism, q.candidates) for q in state.questions]
    survey_fields = (survey.title, survey.description, survey.status, survey.public_results, str(survey.closes_at))
    viewer = (request.user.pk, request.COOKIES.get(settings.CSRF_COOKIE_NAME, ""), bool(request.htmx))
    material = repr((PAGE_VERSION, state.signature, questions, survey_fields, get_language(), viewer, parts))
    return f'"{_digest(material)}"'


def conditional(request: HttpRequest, etag: str, render_page: Any) -> HttpResponse:
    """304 when the client already has this ETag's page, else the page with its ETag."""
    if etag in _if_none_match(request) and not len(get_messages(request)):
        response: HttpResponse = HttpResponseNotModified()
    else:
        response = render_page()
    response["ETag"] = etag
    patch_vary_headers(response, ["Cookie", "Accept-Language", "HX-Request"])
    return response


def _if_none_match(request: HttpRequest) -> list[str]:
    header = request.headers.get("If-None-Match", "")
    return [tag.strip().removeprefix("W/") for tag in header.split(",") if tag.strip()]


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


@login_required
@require_GET
@reads_results
def survey_results(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = get_survey_for_results(request.user, survey_id)
    kind, bands = estimate_kind(request), band_kind(request)
    state = SurveyState.read(survey)
    if request.htmx and request.GET.get("since") == state.signature:
        return HttpResponse(status=204)  # nothing new: htmx keeps the page as it is
    trend = {} if request.htmx else trends_context(request, survey)

    def render_page() -> HttpResponse:
        context = dashboard_context(survey, kind, state, bands=bands) | trend
        context["choices"] = crosstabs.choices(state)
        context["crosstab_url"] = crosstab_url(survey, public=False)
        if request.htmx:
            return render(request, f"{DASHBOARD}#results-body", context)
        return render(request, DASHBOARD, context)

    parts = ("dashboard", kind, bands, trend.get("trend_signature"), trend.get("compare"))
    response = conditional(request, page_etag(request, survey, state, *parts), render_page)
    patch_cache_control(response, private=True, no_cache=True)
    return response


@login_required
@require_GET
@reads_results
def question_results(request: HttpRequest, survey_id: int, question_id: int) -> HttpResponse:
    survey = get_survey_for_results(request.user, survey_id)
    question = get_object_or_404(Question, pk=question_id, survey=survey)
    kind, bands = estimate_kind(request), band_kind(request)
    state = SurveyState.read(survey, [question])
    signature = state.signature
    if request.htmx and request.GET.get("since") == signature:
        return HttpResponse(status=204)

    def render_page() -> HttpResponse:
        context = question_page_context(request, survey, question, state, kind, bands)
        if request.htmx:
            return render(request, "surveys/question_results.html#question-body", context)
        return render(request, "surveys/question_results.html", context)

    etag = page_etag(request, survey, state, "question", question.pk, kind, bands)
    response = conditional(request, etag, render_page)
    patch_cache_control(response, private=True, no_cache=True)
    return response


def question_page_context(
    request: HttpRequest,
    survey: Survey,
    question: Question,
    state: SurveyState,
    kind: str,
    bands: str,
    candidates_form: CandidatesForm | None = None,
) -> dict[str, Any]:
    """One question's results page; a short-answer question's owner also gets its candidates form."""
    cards = [result_view(r, kind, bands) for r in state.results(question)]
    card = cards[0] if cards else {"question": question, "result": None, "anchor": f"result-{question.pk}"}
    joint = asked_jointly(list(survey.questions.all()))
    if question.pk in joint:  # no reports of its own: its card points to the pair's results
        card["pair"] = joint[question.pk][0]
        card["pair_url"] = reverse("question_results", args=[survey.pk, card["pair"].pk])
    if family(question.mechanism) == "text" and survey.owner_id == request.user.pk:
        card["candidates_form"] = candidates_form or CandidatesForm(
            initial={"candidates_text": "\n".join(question.candidates)}
        )
    context = {"survey": survey, "kind": kind, "bands": bands, "card": card, "earlier_cards": cards[1:]}
    context["signature"] = state.signature
    context["live"] = survey.status == Survey.Status.OPEN
    context["poll_seconds"] = settings.RESULTS_POLL_SECONDS
    return context


@login_required
@require_POST
def question_candidates(request: HttpRequest, survey_id: int, question_id: int) -> HttpResponse:
    """Set a short-answer question's candidate answers ("how many wrote X?"), even after reports arrived.

    Candidates are not part of the randomization: changing them only changes which strings are counted.
    """
    question = get_question_for_owner(request.user, survey_id, question_id)
    if family(question.mechanism) != "text":
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
def public_results(request: HttpRequest, slug: str) -> HttpResponse:
    """The read-only published results: estimates and charts come from the cache once drawn."""
    survey = get_survey_by_share_slug(slug)
    if not survey.public_results:
        raise Http404
    state = SurveyState.read(survey)
    timeline = over_time(survey)
    bands = band_kind(request)

    def render_page() -> HttpResponse:
        context = dashboard_context(survey, "consistent", state, timeline, bands)
        context["public"] = True
        context["choices"] = crosstabs.choices(state)
        context["crosstab_url"] = crosstab_url(survey, public=True)
        return render(request, "surveys/public_results.html", context)

    response = conditional(request, page_etag(request, survey, state, "public", timeline[2], bands), render_page)
    patch_cache_control(response, no_cache=True)
    return response


# -- cross-tabulation -------------------------------------------------------------------------

CROSSTAB = "surveys/crosstab.html"


def crosstab_context(
    survey: Survey, state: SurveyState, first_id: str, second_id: str, bands: str = "option"
) -> dict[str, Any]:
    """The selector's choices and, once two different crossable questions are chosen, their cross-tab
    with the 95 % bands chosen (each cell's own, or all cells' at once).

    An id that is not a number is a 400 with a sentence; one that is not one of the survey's
    crossable questions is a 404 (as another survey's is).
    """
    choices = crosstabs.choices(state)
    context: dict[str, Any] = {"survey": survey, "choices": choices, "first": None, "second": None, "status": 200}
    context["bands"] = bands
    if not (first_id and second_id):
        return context
    if not (first_id.isascii() and first_id.isdigit() and second_id.isascii() and second_id.isdigit()):
        context["error"], context["status"] = _("Choose two questions from the lists."), 400
        return context
    by_id = {str(q.pk): q for q in choices}
    if first_id not in by_id or second_id not in by_id:
        raise Http404
    first, second = context["first"], context["second"] = by_id[first_id], by_id[second_id]
    if first.pk == second.pk:
        context["error"], context["status"] = _("Choose two different questions."), 400
        return context
    try:
        crosstab = crosstabs.read_crosstab(state, first, second)
    except crosstabs.CrosstabError:
        context["error"], context["status"] = _("These two questions have too many options to cross."), 400
        return context
    context["crosstab"] = crosstab
    if crosstab.enough:
        assert crosstab.estimate is not None
        labels = (crosstab.first.options, crosstab.second.options)
        context["rows"] = crosstabs.cell_rows(crosstab.estimate, *labels, bands)
        context["conditionals"] = crosstabs.conditionals(crosstab.estimate, crosstab.first, crosstab.second, bands)
        context["chart"] = heatmap(f"crosstab-chart:{crosstab.digest}", crosstab.estimate, *labels, bands)
    return context


def requested_crosstab(request: HttpRequest, survey_id: int) -> dict[str, Any]:
    """:func:`crosstab_context` for the survey (if the user may read its results) and the questions asked for."""
    survey = get_survey_for_results(request.user, survey_id)
    first, second = request.GET.get("first", ""), request.GET.get("second", "")
    return crosstab_context(survey, SurveyState.read(survey), first, second, band_kind(request))


def crosstab_page(request: HttpRequest, survey: Survey, public: bool) -> HttpResponse:
    """The cross-tab page (the fragment for htmx), with an ETag naming the tallies, both questions and the bands."""
    state = SurveyState.read(survey)
    first, second, bands = request.GET.get("first", ""), request.GET.get("second", ""), band_kind(request)

    def render_page() -> HttpResponse:
        context = crosstab_context(survey, state, first, second, bands) | {"public": public, "plain": public}
        context["crosstab_url"] = crosstab_url(survey, public)
        template = f"{CROSSTAB}#crosstab-body" if request.htmx else CROSSTAB
        return render(request, template, context, status=context["status"])

    parts = ("crosstab", public, first, second, bands)
    return conditional(request, page_etag(request, survey, state, *parts), render_page)


def crosstab_url(survey: Survey, public: bool) -> str:
    """Where the cross-tab selector sends its choice: the organizer's page, or the public one."""
    if public:
        return reverse("public_crosstab", args=[survey.slug])
    return reverse("survey_crosstab", args=[survey.pk])


@login_required
@require_GET
@reads_results
def survey_crosstab(request: HttpRequest, survey_id: int) -> HttpResponse:
    """Two choice questions crossed post hoc: the selector, the joint shares and the conditional shares."""
    survey = get_survey_for_results(request.user, survey_id)
    response = crosstab_page(request, survey, public=False)
    patch_cache_control(response, private=True, no_cache=True)
    return response


@require_GET
@rate_limited("public_results", methods=("GET", "HEAD"))
@reads_results
def public_crosstab(request: HttpRequest, slug: str) -> HttpResponse:
    """The post-hoc cross-tab of a survey with published results: its estimates only (no pair table,
    no export), in plain words; like the public results page, it costs no privacy (post-processing)."""
    survey = get_survey_by_share_slug(slug)
    if not survey.public_results:
        raise Http404
    response = crosstab_page(request, survey, public=True)
    patch_cache_control(response, no_cache=True)
    return response


@login_required
@require_GET
@reads_results
def export_crosstab(request: HttpRequest, survey_id: int) -> HttpResponse:
    """A post-hoc cross-tab as JSON, with what re-estimating it needs: both randomizations and T."""
    context = requested_crosstab(request, survey_id)
    survey, crosstab = context["survey"], context.get("crosstab")
    if crosstab is None:
        return JsonResponse({"error": str(context.get("error") or _("Choose two different questions."))}, status=400)
    response = JsonResponse(crosstab_record(crosstab))
    name = f"survey-{survey.pk}-crosstab-{crosstab.first.pk}-{crosstab.second.pk}.json"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def crosstab_record(crosstab: crosstabs.Crosstab) -> dict[str, Any]:
    """The export of one cross-tab: how each question was randomized, the pair table, and the estimate."""

    def question(q: Question, r: Any) -> dict[str, Any]:
        spec = {"version": r.version, "mechanism": r.mechanism, "k": r.k, "epsilon": r.epsilon, "params": r.params}
        return {"question_id": q.pk, "question": q.text, "kind": q.kind, "options": q.options, **spec}

    record: dict[str, Any] = {
        "method": "post-hoc",
        "level": 0.95,
        "first": question(crosstab.first, crosstab.first_randomization),
        "second": question(crosstab.second, crosstab.second_randomization),
        "n": crosstab.n,
        "pair_table": crosstab.tally.table.tolist(),
        "enough": crosstab.enough,
        "expected_half_width": crosstab.expected_half_width,
    }
    estimate = crosstab.estimate
    if estimate is not None:
        conditional = estimate.conditional("first")
        joint_conditional = estimate.conditional("first", simultaneous=True)
        record |= {
            "unbiased": estimate.cells.tolist(),
            "consistent": estimate.consistent_cells.tolist(),
            "standard_error": estimate.standard_errors.tolist(),
            "low": estimate.bands.low.tolist(),
            "high": estimate.bands.high.tolist(),
            "simultaneous_low": estimate.simultaneous.low.tolist(),
            "simultaneous_high": estimate.simultaneous.high.tolist(),
            "conditional_on_first": _finite(conditional.shares),
            "conditional_low": _finite(conditional.bands.low),
            "conditional_high": _finite(conditional.bands.high),
            "conditional_simultaneous_low": _finite(joint_conditional.bands.low),
            "conditional_simultaneous_high": _finite(joint_conditional.bands.high),
            "conditional_noisy": conditional.noisy.tolist(),
        }
    return record


def _finite(values: np.ndarray) -> list[list[float | None]]:
    """NaN (an undefined conditional row) as null, which JSON can carry."""
    return [[None if np.isnan(v) else float(v) for v in row] for row in values]


# -- exports ----------------------------------------------------------------------------------

#: A matrix item's block: its id and title, and the item's place in it (0 for the first item).
MATRIX_FIELDS = ("matrix_id", "matrix_title", "matrix_item_index")


def matrix_fields(questions: list[Question]) -> dict[int, dict[str, Any]]:
    """Per matrix item (by question id), :data:`MATRIX_FIELDS`; ``questions`` in the survey's order.

    A block's items stand together in that order, so an item's place is its count among its block's.
    """
    fields: dict[int, dict[str, Any]] = {}
    counts: dict[int, int] = {}
    for question in questions:
        if question.matrix_id is not None:
            assert question.matrix is not None
            index = counts[question.matrix_id] = counts.get(question.matrix_id, -1) + 1
            fields[question.pk] = dict(
                zip(MATRIX_FIELDS, (question.matrix_id, question.matrix.title, index), strict=True)
            )
    return fields


ESTIMATE_COLUMNS = [
    "round",
    "question_id",
    "question",
    "kind",
    "version",
    "mechanism",
    "k",
    "epsilon",
    "params",
    "n",
    "option_index",
    "option",
    "raw_count",
    "unbiased",
    "standard_error",
    "unbiased_low",
    "unbiased_high",
    "consistent",
    "consistent_low",
    "consistent_high",
    "consistent_method",
    "enough",
    "expected_half_width",
    "reports_needed",
    "unbiased_band",
    "consistent_band",
    *integrity.EXPORT_FIELDS,
    "statistic",
    "p_value",
    "found",
    "found_by",
    *MATRIX_FIELDS,
]

#: How each estimate's 95 % band is made, as the page draws it (exported beside the numbers).
BAND_KINDS = {
    "unbiased": "normal",  # estimate +/- 1.96 standard errors (analytic covariance)
    "consistent": "unified",  # Feldman-Cousins intervals on [0, 1] (ldp.estimates.unified_interval)
}


def estimate_rows(survey: Survey) -> Iterator[dict[str, Any]]:
    """One row per question version and option (or summary) with reports: the page's numbers, and more.

    ``enough`` is the page's own verdict (:attr:`QuestionResult.enough`): where it is false the page
    withholds the estimate as noise, and the export says so beside the numbers. ``statistic`` says
    what a row estimates: an option's ``share``, a ``mean`` (numeric mechanisms, and ratings' shares
    summarized), or a rating's ``nps``.
    """
    state = SurveyState.read(survey)
    matrices = matrix_fields(state.questions)
    for result in state.all_results():
        if result.n:
            block = matrices.get(result.question.pk, {})
            yield from ({**row, **block} for row in SUMMARY_ROWS[summary_card(result)](result))


def _common(result: QuestionResult) -> dict[str, Any]:
    r = result.randomization
    return {
        "round": result.question.survey.round_number,
        "question_id": result.question.pk,
        "question": result.question.text,
        "kind": result.question.kind,
        "version": r.version,
        "mechanism": r.mechanism,
        "k": r.k,
        "epsilon": r.epsilon,
        "params": r.params,
        "n": result.n,
        "enough": result.enough,
        "expected_half_width": result.expected_half_width,
        "reports_needed": result.reports_needed,
    }


def share_rows(result: QuestionResult) -> Iterator[dict[str, Any]]:
    unbiased, consistent = result.unbiased, result.consistent
    if unbiased is None or consistent is None:
        return
    u_low, u_high = unbiased.confidence_interval(0.95)
    c_low, c_high = consistent.confidence_interval(0.95)
    for i, label in enumerate(result.question.options):
        yield {
            **_common(result),
            "statistic": "share",
            "option_index": i,
            "option": label,
            "raw_count": int(result.raw_counts[i]),
            "unbiased": float(unbiased.proportions[i]),
            "standard_error": float(unbiased.standard_errors[i]),
            "unbiased_low": float(u_low[i]),
            "unbiased_high": float(u_high[i]),
            "consistent": float(consistent.proportions[i]),
            "consistent_low": float(c_low[i]),
            "consistent_high": float(c_high[i]),
            "consistent_method": consistent.method,
            "unbiased_band": BAND_KINDS["unbiased"],
            "consistent_band": BAND_KINDS["consistent"] if consistent.bands is not None else "normal",
            **integrity.export_fields(result.integrity, i),
        }
    for statistic, value in linear_summaries(result).items():
        yield {**_common(result), **_summary_columns(statistic, value)}


def mean_rows(result: QuestionResult) -> Iterator[dict[str, Any]]:
    assert result.mean is not None
    low, high = result.mean.confidence_interval(0.95)
    value = {"value": result.mean.mean, "standard_error": result.mean.standard_error, "low": low, "high": high}
    yield {**_common(result), **_summary_columns("mean", value)}


def _summary_columns(statistic: str, value: dict[str, float]) -> dict[str, Any]:
    """A mean's or NPS's row: the unbiased columns hold it; option and consistent columns stay empty."""
    return {
        "statistic": statistic,
        "unbiased": value["value"],
        "standard_error": value["standard_error"],
        "unbiased_low": value["low"],
        "unbiased_high": value["high"],
        "unbiased_band": BAND_KINDS["unbiased"],
    }


def text_rows(result: QuestionResult) -> Iterator[dict[str, Any]]:
    """One row per candidate answer: its estimated count (the unbiased columns), p-value and finding."""
    for i, row in enumerate(candidate_rows(result)):
        yield {
            **_common(result),
            "statistic": "count",
            "option_index": i,
            "option": row["label"],
            "unbiased": row["count"],
            "standard_error": row["standard_error"],
            "unbiased_low": row["low"],
            "unbiased_high": row["high"],
            "unbiased_band": BAND_KINDS["unbiased"],
            "p_value": row["p_value"],
            "found": row["found"],
            "found_by": result.text.method if result.text is not None else "",
        }


def multi_rows(result: QuestionResult) -> Iterator[dict[str, Any]]:
    """Multi-select: one row per option (its share of respondents, unbiased and clipped, each with its
    own band), then the mean number of options chosen (statistic ``mean_count``)."""
    if result.multi is None:
        return
    unbiased = multi_option_rows(result, "unbiased", "option")
    consistent = multi_option_rows(result, "consistent", "option")
    for i, (u, c) in enumerate(zip(unbiased, consistent, strict=True)):
        yield {
            **_common(result),
            "statistic": "share",
            "option_index": i,
            "option": u["label"],
            "raw_count": u["raw"],
            "unbiased": u["estimate"],
            "standard_error": u["standard_error"],
            "unbiased_low": u["low"],
            "unbiased_high": u["high"],
            "consistent": c["estimate"],
            "consistent_low": c["low"],
            "consistent_high": c["high"],
            "consistent_method": "clip",
            "unbiased_band": BAND_KINDS["unbiased"],
            "consistent_band": BAND_KINDS["consistent"],
        }
    yield {**_common(result), **_summary_columns("mean_count", mean_count(result))}


def pair_rows(result: QuestionResult) -> Iterator[dict[str, Any]]:
    """A declared pair: each combination's share (``share`` rows, option "A × B"), then each question's
    marginal shares derived from them (``first_share``, ``second_share``; normal bands)."""
    yield from share_rows(result)
    estimate = declared_crosstab(result)
    question = result.question
    for which, member in (("first", question.pair_first), ("second", question.pair_second)):
        assert member is not None
        for i, row in enumerate(crosstabs.marginal_rows(estimate, which, member.options)):
            yield {
                **_common(result),
                "statistic": f"{which}_share",
                "option_index": i,
                "option": row["label"],
                "unbiased": row["estimate"],
                "standard_error": row["standard_error"],
                "unbiased_low": row["low"],
                "unbiased_high": row["high"],
                "unbiased_band": BAND_KINDS["unbiased"],
            }


#: How each summary card ("shares", "mean", "text", "multi" or "pair") becomes rows of the estimates export.
SUMMARY_ROWS = {"shares": share_rows, "mean": mean_rows, "text": text_rows, "multi": multi_rows, "pair": pair_rows}


@login_required
@require_GET
@reads_results
def export_estimates(request: HttpRequest, survey_id: int, fmt: str) -> HttpResponse:
    survey = get_survey_for_results(request.user, survey_id)
    rows = list(estimate_rows(survey))
    if fmt == "json":
        payload = {
            "survey": survey.title,
            "round": survey.round_number,
            "level": 0.95,
            "estimates": rows,
            "text_tallies": text_tallies(survey),
            "multi_select_tallies": multi_select_tallies(survey),
            "declared_pairs": declared_pairs(survey),
        }
        response: HttpResponse = JsonResponse(payload)
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=ESTIMATE_COLUMNS)
        writer.writeheader()
        writer.writerows({**row, "params": json.dumps(row["params"])} for row in rows)
        response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="survey-{survey.pk}-estimates.{fmt}"'
    return response


def text_tallies(survey: Survey) -> list[dict[str, Any]]:
    """Free-text randomizations' sufficient statistics, enough to re-estimate any candidate's count.

    ``per_row`` counts the reports per sketch row (RAPPOR: per cohort); ``cells`` is, per row, the
    reports with +1 at each cell (text-cms), the signed bits per index (text-hcms) or the set bits
    per Bloom bit (RAPPOR): :class:`ldp.textreports.TextReports`'s flat tally, reshaped.
    """
    state = SurveyState.read(survey)
    records = []
    for question in state.questions:
        for randomization in state.randomizations.get(question.pk, []):
            mechanism = randomization.build_mechanism()
            tally = state.tallies[randomization.pk]
            if family(randomization.mechanism) != "text" or not tally.n:
                continue
            rows = mechanism.rows  # type: ignore[union-attr]
            records.append(
                {
                    "question_id": question.pk,
                    "version": randomization.version,
                    "mechanism": randomization.mechanism,
                    "epsilon": randomization.epsilon,
                    "params": randomization.params,
                    "n": tally.n,
                    "per_row": tally.counts[:rows].tolist(),
                    "cells": tally.counts[rows:].reshape(rows, -1).tolist(),
                }
            )
    return records


def multi_select_tallies(survey: Survey) -> list[dict[str, Any]]:
    """Multi-select randomizations' tallies, enough to re-estimate every share and the mean number chosen.

    ``counts`` is the mechanism's tally (:mod:`ldp.multiselect`): per option, the reports with its
    bit set (set-sue, set-oue); per item of the k options then the l padding items, the reports naming
    it (padding-krr) or hashing to their value from it (padding-olh). ``max_choices`` is l.
    """
    state = SurveyState.read(survey)
    records = []
    for question in state.questions:
        for randomization in state.randomizations.get(question.pk, []):
            tally = state.tallies[randomization.pk]
            if family(randomization.mechanism) != "multi" or not tally.n:
                continue
            records.append(
                {
                    "question_id": question.pk,
                    "version": randomization.version,
                    "mechanism": randomization.mechanism,
                    "k": randomization.k,
                    "max_choices": randomization.params["max_choices"],
                    "epsilon": randomization.epsilon,
                    "params": randomization.params,
                    "n": tally.n,
                    "counts": tally.counts.tolist(),
                }
            )
    return records


def declared_pairs(survey: Survey) -> list[dict[str, Any]]:
    """Declared pairs' sufficient statistics: enough to re-estimate the joint cells and both marginals.

    ``counts`` is the pair mechanism's tally over k1 k2 answers (answer = first * k2 + second).
    """
    state = SurveyState.read(survey)
    records = []
    for question in state.questions:
        if question.pair_first is None or question.pair_second is None:
            continue
        for randomization in state.randomizations.get(question.pk, []):
            tally = state.tallies[randomization.pk]
            if not tally.n:
                continue
            records.append(
                {
                    "question_id": question.pk,
                    "first_question_id": question.pair_first.pk,
                    "second_question_id": question.pair_second.pk,
                    "first_options": question.pair_first.options,
                    "second_options": question.pair_second.options,
                    "k1": question.pair_first.k,
                    "k2": question.pair_second.k,
                    "version": randomization.version,
                    "mechanism": randomization.mechanism,
                    "k": randomization.k,
                    "epsilon": randomization.epsilon,
                    "params": randomization.params,
                    "n": tally.n,
                    "counts": tally.counts.tolist(),
                }
            )
    return records


def randomization_records(survey: Survey) -> list[dict[str, Any]]:
    """Every randomization of the survey's questions; ``memo`` names the layers of a recurring
    survey's memoized reports (:data:`surveys.series.memoization.MEMO_LAYERS`), empty for one-layer reports."""
    records = []
    questions = list(survey.questions.select_related("matrix"))
    matrices = matrix_fields(questions)
    for question in questions:
        block = matrices.get(question.pk, dict.fromkeys(MATRIX_FIELDS))
        for r in question.randomizations.all():
            spec = r.build_mechanism().client_spec()
            memo = rounds.memo_block(survey, question, spec, r.memo_gamma)
            records.append(
                {
                    "round": survey.round_number,
                    "question_id": question.pk,
                    "memo": memo["layers"] if memo else "",
                    "memo_gamma": memo.get("gamma") if memo else None,
                    "question": question.text,
                    "kind": question.kind,
                    "unit": question.unit,
                    "options": question.options,
                    "version": r.version,
                    "mechanism": r.mechanism,
                    "k": r.k,
                    "epsilon": r.epsilon,
                    "params": r.params,
                    "client_spec": spec,
                    # A declared pair: the two questions whose answers it randomizes as first * k2 + second.
                    "pair": [question.pair_first_id, question.pair_second_id] if question.pair_first_id else None,
                    **block,  # a matrix item's block and place in it (null for other questions)
                }
            )
    return records


def report_records(survey: Survey) -> Iterator[dict[str, Any]]:
    """Every stored report, decoded to its JSON form, streamed.

    Ordered by the submissions' random ids, so the order says nothing about arrival.
    """
    mechanisms: dict[int, Any] = {}
    reports = (
        Report.objects.filter(submission__survey=survey)
        .order_by("submission_id", "question_id")
        .values_list("submission_id", "submission__received_hour", "question_id", "randomization_id", "packed")
    )
    versions = {r.pk: r for q in survey.questions.all() for r in q.randomizations.all()}
    for submission_id, hour, question_id, randomization_id, packed in reports.iterator(chunk_size=5000):
        randomization = versions[randomization_id]
        if randomization_id not in mechanisms:
            mechanisms[randomization_id] = randomization.build_mechanism()
        yield {
            "round": survey.round_number,
            "submission": submission_id,
            "received_hour": hour.isoformat(),
            "question_id": question_id,
            "version": randomization.version,
            "report": mechanisms[randomization_id].unpack_report(bytes(packed)),
        }


@login_required
@require_GET
def export_reports(request: HttpRequest, survey_id: int, fmt: str) -> StreamingHttpResponse:
    survey = get_survey_for_results(request.user, survey_id)
    if fmt == "json":
        stream = _json_report_stream(survey)
        content_type = "application/json"
    else:
        stream = _csv_report_stream(survey)
        content_type = "text/csv; charset=utf-8"
    response = StreamingHttpResponse(stream, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="survey-{survey.pk}-reports.{fmt}"'
    return response


def _json_report_stream(survey: Survey) -> Iterator[str]:
    head = {"survey": survey.title, "round": survey.round_number, "randomizations": randomization_records(survey)}
    yield json.dumps(head)[:-1] + ', "reports": ['
    for i, record in enumerate(report_records(survey)):
        yield ("," if i else "") + json.dumps(record, separators=(",", ":"))
    yield "]}"


def _csv_report_stream(survey: Survey) -> Iterator[str]:
    versions = {(r["question_id"], r["version"]): r for r in randomization_records(survey)}
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(
        [
            "round",
            "submission",
            "received_hour",
            "question_id",
            "version",
            "mechanism",
            "k",
            "epsilon",
            "params",
            "report",
            *MATRIX_FIELDS,
        ]
    )
    for record in report_records(survey):
        r = versions[(record["question_id"], record["version"])]
        writer.writerow(
            [
                record["round"] or "",
                record["submission"],
                record["received_hour"],
                record["question_id"],
                record["version"],
                r["mechanism"],
                r["k"],
                r["epsilon"],
                json.dumps(r["params"]),
                json.dumps(record["report"], separators=(",", ":")),
                *("" if r[name] is None else r[name] for name in MATRIX_FIELDS),
            ]
        )
        if buffer.tell() > 64_000:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


@login_required
@require_GET
@reads_results
def export_synthetic(request: HttpRequest, survey_id: int, question_id: int, version: int) -> HttpResponse:
    """Modips synthetic records of one numeric question version as CSV (``record, value``).

    Derived from the randomized reports only (post-processing: no further privacy cost); 404 where
    the page shows none (too few reports, one-bit mechanisms, categorical questions).
    """
    survey = get_survey_for_results(request.user, survey_id)
    question = get_object_or_404(Question, pk=question_id, survey=survey)
    state = SurveyState.read(survey, [question])
    made = next((synthetic(r) for r in state.results(question) if r.randomization.version == version), None)
    if made is None:
        raise Http404
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["record", "value"])
    writer.writerows((i, repr(float(v))) for i, v in enumerate(made.records, start=1))
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    name = f"survey-{survey.pk}-question-{question.pk}-v{version}-synthetic.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
