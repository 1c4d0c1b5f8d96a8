"""Organizers' views of recurring surveys: make a survey recurring, open its next round.

Both load the survey through :mod:`surveys.access` (someone else's survey is a 404) and redirect
back to the builder, the new round's after opening one.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from surveys.access import get_survey_for_owner
from surveys.actions import LifecycleError
from surveys.series import rounds


@login_required
@require_POST
def survey_recurrence(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = get_survey_for_owner(request.user, survey_id)
    try:
        rounds.do_make_recurring(survey, request.POST.get("recurrence", ""))
    except LifecycleError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, _("This survey recurs. Each round has its own link and its own results."))
    return redirect(survey)


@login_required
@require_POST
def survey_next_round(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = get_survey_for_owner(request.user, survey_id)
    try:
        new_round = rounds.do_open_next_round(survey)
    except LifecycleError as error:
        messages.error(request, str(error))
        return redirect(survey)
    messages.success(
        request,
        _("Round %(round)s is open at its own link; the previous round is closed.") % {"round": new_round.round_number},
    )
    return redirect(new_round)
