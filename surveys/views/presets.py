"""The builder's templates: a ready question for a sensitive topic fills the add-question form."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.views.decorators.http import require_GET

from surveys.access import get_survey_for_owner
from surveys.forms.question import QuestionForm
from surveys.http import HtmxHttpRequest
from surveys.presets import preset
from surveys.views.author import render_builder


@login_required
@require_GET
def question_preset(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    """The add-question form filled from a template (:mod:`surveys.presets`); nothing is saved."""
    survey = get_survey_for_owner(request.user, survey_id)
    chosen = preset(request.GET.get("preset", ""))
    if chosen is None:
        raise Http404
    form = QuestionForm(survey=survey, initial=chosen.initial())
    return render_builder(request, survey, "add-question", {"add_form": form, "preset": chosen})
