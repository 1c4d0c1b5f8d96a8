"""Two choice questions crossed post hoc: the organizer's page, the public one, and the JSON export."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from surveys.access import get_survey_by_share_slug, get_survey_for_results
from surveys.http import HtmxHttpRequest
from surveys.kinds.pair import heatmap
from surveys.models import Survey
from surveys.replica import reads_results
from surveys.responding.ratelimits import rate_limited
from surveys.results import crosstabs, pair_counts, snapshots, stamps
from surveys.results.estimates import SurveyState
from surveys.results.exports import crosstab_record
from surveys.sampling import pool_of
from surveys.views.branching import among_asked_view
from surveys.views.reading import band_kind, conditional, page_etag

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
    pool = pool_of(survey, [q.pk for q in state.questions])
    if pool is not None and (first.pk in pool or second.pk in pool):
        # Each respondent answers only m of the pool: most reports of a pooled question are fakes,
        # whose cross with another question's reports says nothing (surveys.sampling).
        context["error"] = _(
            "A question asked of only some respondents, drawn at random, cannot be crossed: most of its "
            "reports are fakes. Its own card has its corrected shares."
        )
        context["status"] = 400
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
        context["among_asked"] = among_asked_view(crosstab.estimate, crosstab.first, crosstab.second)
    return context


def requested_crosstab(request: HtmxHttpRequest, survey_id: int) -> dict[str, Any]:
    """:func:`crosstab_context` for the survey (if the user may read its results) and the questions asked for."""
    survey = get_survey_for_results(request.user, survey_id)
    first, second = request.GET.get("first", ""), request.GET.get("second", "")
    state = SurveyState.read(survey, live=True)
    pair_counts.keep_fresh(survey, state.version)
    return crosstab_context(survey, state, first, second, band_kind(request))


def crosstab_page(request: HtmxHttpRequest, survey: Survey, public: bool) -> HttpResponse:
    """The cross-tab page (the fragment for htmx), with an ETag naming the tallies, the pair counts'
    last count, both questions and the bands. The pair table comes from the stored counts
    (:mod:`surveys.results.pair_counts`), brought up to date by a job, never by this request."""
    state = SurveyState.read(survey, live=True)
    counted = pair_counts.keep_fresh(survey, state.version)
    first, second, bands = request.GET.get("first", ""), request.GET.get("second", ""), band_kind(request)

    def render_page() -> HttpResponse:
        context = crosstab_context(survey, state, first, second, bands) | {"public": public, "plain": public}
        context["crosstab_url"] = crosstab_url(survey, public)
        template = f"{CROSSTAB}#crosstab-body" if request.htmx else CROSSTAB
        return render(request, template, context, status=context["status"])

    parts = ("crosstab", public, first, second, bands, counted)
    response = conditional(request, page_etag(request, survey, stamps.of_state(state), *parts), render_page)
    snapshots.publish(survey, state.snapshot)
    return response


def crosstab_url(survey: Survey, public: bool) -> str:
    """Where the cross-tab selector sends its choice: the organizer's page, or the public one."""
    if public:
        return reverse("public_crosstab", args=[survey.slug])
    return reverse("survey_crosstab", args=[survey.pk])


@login_required
@require_GET
@reads_results
def survey_crosstab(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    """Two choice questions crossed post hoc: the selector, the joint shares and the conditional shares."""
    survey = get_survey_for_results(request.user, survey_id)
    response = crosstab_page(request, survey, public=False)
    patch_cache_control(response, private=True, no_cache=True)
    return response


@require_GET
@rate_limited("public_results", methods=("GET", "HEAD"))
@reads_results
def public_crosstab(request: HtmxHttpRequest, slug: str) -> HttpResponse:
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
def export_crosstab(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    """A post-hoc cross-tab as JSON, with what re-estimating it needs: both randomizations and T."""
    context = requested_crosstab(request, survey_id)
    survey, crosstab = context["survey"], context.get("crosstab")
    if crosstab is None:
        return JsonResponse({"error": str(context.get("error") or _("Choose two different questions."))}, status=400)
    response = JsonResponse(crosstab_record(crosstab))
    name = f"survey-{survey.pk}-crosstab-{crosstab.first.pk}-{crosstab.second.pk}.json"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
