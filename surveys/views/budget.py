"""The builder's budget panel: the survey's total epsilon and expected respondents, planned live.

Changing either redraws the plan (:func:`surveys.budget_panel.panel`) without saving: each question's
share and its expected 95 % half-width, and what the expected respondents will let the organizer
learn. Saving re-plans the questions (:func:`surveys.actions.do_save_settings`). Opening a survey
whose every estimate is expected wider than :data:`surveys.budget.UNREADABLE` asks for a confirmation.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from surveys import actions, budget_panel
from surveys.access import get_survey_for_owner
from surveys.forms.survey import BudgetForm
from surveys.http import HtmxHttpRequest
from surveys.models import Survey

BUILDER = "surveys/survey_detail.html"


def draft_panel(survey: Survey, form: BudgetForm) -> budget_panel.Panel:
    """The panel at the form's draft total and respondents where they are valid, else at the survey's."""
    form.is_valid()
    cleaned = getattr(form, "cleaned_data", {})
    total = cleaned.get("epsilon_cap", "")
    return budget_panel.panel(survey, total=total, respondents=cleaned.get("expected_respondents"))


@login_required
@require_POST
def budget_preview(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    """The plan at the panel's draft values (htmx, on every change); saves nothing."""
    survey = get_survey_for_owner(request.user, survey_id)
    form = BudgetForm(request.POST, instance=survey)
    panel = draft_panel(survey, form)
    survey.refresh_from_db()  # the ModelForm wrote the draft onto the instance
    return render(request, f"{BUILDER}#budget-plan", {"survey": survey, "panel": panel, "budget_form": form})


@login_required
@require_POST
def budget_save(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    """Save the total and the expected respondents, and re-plan every planned question."""
    survey = get_survey_for_owner(request.user, survey_id)
    form = BudgetForm(request.POST, instance=survey)
    if form.is_valid():
        actions.do_save_settings(form)
        messages.success(request, _("Budget plan saved."))
    else:
        messages.error(request, " ".join(str(e) for errors in form.errors.values() for e in errors))
    if request.htmx:
        # Every planned question's ε, mechanism and error may change: reload the builder.
        return HttpResponseClientRedirect(survey.get_absolute_url())
    return redirect(survey)


def budget_context(survey: Survey) -> dict[str, Any]:
    """What the panel and the status box need: the plan at the survey's own settings."""
    return {"panel": budget_panel.panel(survey), "budget_form": BudgetForm(instance=survey)}


def needs_confirmation(request: HtmxHttpRequest, survey: Survey) -> bool:
    """Whether opening must first be confirmed: every estimate too wide, and no confirmation posted."""
    return request.POST.get("unreadable_ok") != "1" and budget_panel.panel(survey).all_unreadable
