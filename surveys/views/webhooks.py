"""Organizers' webhooks of a survey: add one (its secret shown once), send a test, read the delivery
log, switch one off or delete it. Only the survey's owner reaches them (:mod:`surveys.access`)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from surveys.access import get_survey_for_owner
from surveys.forms.integrations import WebhookForm
from surveys.integrations import Webhook
from surveys.models import Survey
from surveys.webhooks import deliver

PAGE = "surveys/webhooks.html"
#: Deliveries the log shows per webhook.
LOG_LENGTH = 20


def page_context(survey: Survey, **extra: Any) -> dict[str, Any]:
    hooks = [
        {"webhook": hook, "deliveries": list(hook.deliveries.all()[:LOG_LENGTH])} for hook in survey.webhooks.all()
    ]
    return {"survey": survey, "hooks": hooks, "form": WebhookForm(), "new_secret": "", **extra}


@login_required
@require_http_methods(["GET", "POST"])
def webhooks(request: HttpRequest, survey_id: int) -> HttpResponse:
    """GET: the survey's webhooks and their logs. POST: add one and show its secret, once."""
    survey = get_survey_for_owner(request.user, survey_id)
    if request.method == "GET":
        return render(request, PAGE, page_context(survey))
    form = WebhookForm(request.POST)
    if not form.is_valid():
        return render(request, PAGE, page_context(survey, form=form), status=400)
    hook = Webhook.objects.create(
        survey=survey, url=form.cleaned_data["url"], min_new_reports=form.cleaned_data["min_new_reports"]
    )
    response = render(request, PAGE, page_context(survey, new_secret=hook.secret))
    response["Cache-Control"] = "no-store"  # the secret is shown in this response only
    return response


def _webhook(request: HttpRequest, survey_id: int, webhook_id: int) -> Webhook:
    survey = get_survey_for_owner(request.user, survey_id)
    return get_object_or_404(Webhook, pk=webhook_id, survey=survey)


@login_required
@require_POST
def webhook_test(request: HttpRequest, survey_id: int, webhook_id: int) -> HttpResponse:
    """Post a signed test summary now (marked ``"event": "test"``); it counts for nothing."""
    delivery = deliver(_webhook(request, survey_id, webhook_id), test=True)
    if delivery.ok:
        messages.success(request, _("The test summary was delivered."))
    else:
        messages.error(request, _("The test summary was not delivered: %(error)s") % {"error": delivery.error})
    return redirect("webhooks", survey_id)


@login_required
@require_POST
def webhook_toggle(request: HttpRequest, survey_id: int, webhook_id: int) -> HttpResponse:
    hook = _webhook(request, survey_id, webhook_id)
    hook.active = not hook.active
    hook.save(update_fields=["active"])
    return redirect("webhooks", survey_id)


@login_required
@require_POST
def webhook_delete(request: HttpRequest, survey_id: int, webhook_id: int) -> HttpResponse:
    _webhook(request, survey_id, webhook_id).delete()
    messages.success(request, _("The webhook is deleted."))
    return redirect("webhooks", survey_id)
