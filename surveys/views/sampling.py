"""The builder's question sampling: "Ask each respondent m of these q questions" (:mod:`surveys.sampling`).

The panel (``templates/surveys/_sampling.html``) is drawn on the builder page by the
``sampling_panel`` tag (:mod:`surveys.templatetags.sampling`); its form posts here. Saving re-plans
the budget, so the pooled questions get the epsilon' the total allows.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from surveys import actions
from surveys.access import get_survey_for_owner
from surveys.forms.sampling import SamplingForm
from surveys.models import Report, Survey
from surveys.sampling import QuestionSample, pool_of


def sampling_frozen(survey: Survey) -> bool:
    """Whether the survey has reports: their meaning depends on m / q, so the pool is kept as it is."""
    return Report.objects.filter(survey=survey).exists()


@transaction.atomic
def do_set_sampling(survey: Survey, pool: tuple[list[int], int] | None) -> None:
    """Store the survey's pool and m (None: no sampling) and re-plan its budget."""
    QuestionSample.objects.filter(survey=survey).delete()
    if pool is not None:
        QuestionSample.objects.create(survey=survey, questions=pool[0], size=pool[1])
    survey._state.fields_cache.pop("question_sample", None)  # the next pool_of reads the new pool
    actions.replan_budget(survey)


@login_required
@require_POST
def survey_sampling(request: HttpRequest, survey_id: int) -> HttpResponse:
    """Save which questions are sampled and how many each respondent answers."""
    survey = get_survey_for_owner(request.user, survey_id)
    questions = list(survey.questions.all())
    form = SamplingForm(request.POST, questions=questions)
    if sampling_frozen(survey):
        messages.error(request, _("The survey has reports: its question sampling can no longer change."))
    elif form.is_valid():
        do_set_sampling(survey, form.cleaned_data["pool"])
        if form.cleaned_data["pool"] is None:
            messages.success(request, _("Every respondent is asked every question."))
        else:
            chosen, size = form.cleaned_data["pool"]
            messages.success(
                request,
                _("Each respondent is asked %(m)s of the %(q)s pooled questions.") % {"m": size, "q": len(chosen)},
            )
    else:
        messages.error(request, " ".join(str(e) for errors in form.errors.values() for e in errors))
    return redirect(f"{survey.get_absolute_url()}#sampling")


def panel_context(survey: Survey) -> dict[str, Any]:
    """What the builder's sampling panel shows: the form at the stored pool, and whether it is frozen."""
    questions = list(survey.questions.all())
    pool = pool_of(survey, [q.pk for q in questions])
    initial = {"questions": [str(q) for q in pool.questions], "size": pool.m} if pool else {}
    form = SamplingForm(initial=initial, questions=questions)
    frozen = sampling_frozen(survey)
    return {"survey": survey, "sampling_form": form, "pool": pool, "frozen": frozen}
