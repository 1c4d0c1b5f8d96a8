"""The organizer's analysis of randomized answers by questions asked directly (regression and
weighting, :mod:`surveys.results.analysis`), its JSON export, and the builder's sample-size page
(:mod:`ldp.power`)."""

from __future__ import annotations

import math
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from ldp.direct import DirectAnswer
from ldp.power import regression_sample_size, two_shares_sample_size
from surveys.access import get_survey_for_owner, get_survey_for_results
from surveys.forms.analysis import AnalysisForm, PowerForm
from surveys.http import HtmxHttpRequest
from surveys.kinds.designs import SMALL_GROUP, regression_channel
from surveys.models import Survey
from surveys.results import analysis

ANALYSIS = "surveys/analysis.html"


def analysis_context(survey: Survey, params: Any) -> dict[str, Any]:
    """The form and, once an outcome and direct questions are chosen, the regression table and, where
    margins are given, the weighted estimate; ``record`` is the export's content."""
    choices = analysis.choices(survey)
    form = AnalysisForm(params or None, choices=choices)
    context: dict[str, Any] = {"survey": survey, "form": form, "choices": choices, "small_group": SMALL_GROUP}
    if not params or not form.is_valid():
        return context
    outcome = form.by_id[form.cleaned_data["outcome"]]
    covariates = [form.by_id[pk] for pk in form.cleaned_data["covariates"]]
    data = analysis.collect(outcome, covariates)
    context["data"] = data
    table = weights = None
    try:
        table = analysis.regression(data)
    except analysis.AnalysisError:
        context["regression_error"] = _(
            "Too few respondents answered these questions (in groups of at least %(n)s) to fit the regression."
        ) % {"n": SMALL_GROUP}
    margins = form.cleaned_data["margins"]
    if margins:
        weighted = [q for q in covariates if q.pk in margins]
        weighted_data = analysis.collect(outcome, weighted)
        try:
            weights = analysis.weighting(weighted_data, [margins[q.pk] for q in weighted])
        except analysis.AnalysisError:
            context["weighting_error"] = _(
                "These margins cannot be met by the respondents in groups of at least %(n)s: check them."
            ) % {"n": SMALL_GROUP}
    context |= {"table": table, "weights": weights, "record": analysis.record(data, table, weights)}
    return context


@login_required
@require_GET
def survey_analysis(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    survey = get_survey_for_results(request.user, survey_id)
    context = analysis_context(survey, request.GET)
    context["query"] = request.GET.urlencode()
    return render(request, ANALYSIS, context)


@login_required
@require_GET
def export_analysis(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    """The analysis as JSON (the same choices in the query string as the page)."""
    survey = get_survey_for_results(request.user, survey_id)
    context = analysis_context(survey, request.GET)
    if "record" not in context:
        return JsonResponse({"error": _("Choose a randomized question and questions asked directly.")}, status=400)
    response = JsonResponse(context["record"], json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'attachment; filename="survey-{survey.pk}-analysis.json"'
    return response


def coefficient_sample_size(mechanism: Any, a: float, b: float) -> int:
    """Respondents in all (two equal groups) to detect the logistic regression's group coefficient
    logit(b) - logit(a) of a yes / no question's first option (:func:`ldp.power.regression_sample_size`)."""

    def logit(p: float) -> float:
        return math.log(p / (1 - p))

    beta = [[logit(a)], [logit(b) - logit(a)]]
    return regression_sample_size(mechanism, [[1, 0], [1, 1]], [0.5, 0.5], beta)


@login_required
@require_GET
def survey_power(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    """Respondents per group (or per round) to detect a difference between two shares with 80 % power
    at the 5 % level (:func:`ldp.power.two_shares_sample_size`), beside a question asked directly."""
    survey = get_survey_for_owner(request.user, survey_id)
    questions = [q for q in survey.questions.all() if math.isfinite(q.epsilon) and q.k >= 2]
    questions = [q for q in questions if regression_channel(q.build_mechanism()) is not None]
    form = PowerForm(request.GET or None, questions=questions)
    context: dict[str, Any] = {"survey": survey, "form": form, "questions": questions}
    if request.GET and form.is_valid():
        question = next(q for q in questions if q.pk == form.cleaned_data["question"])
        a, b = form.cleaned_data["share_a"] / 100, form.cleaned_data["share_b"] / 100
        mechanism = question.build_mechanism()
        context |= {
            "question": question,
            "needed": two_shares_sample_size(mechanism, a, b),
            "needed_direct": two_shares_sample_size(DirectAnswer(k=question.k), a, b),
            "needed_regression": coefficient_sample_size(mechanism, a, b) if question.k == 2 else None,
            "share_a": a,
            "share_b": b,
        }
    return render(request, "surveys/power.html", context)
