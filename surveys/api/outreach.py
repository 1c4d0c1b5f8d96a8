"""The organizer API's invitations and webhooks (registered on :data:`surveys.api.routes.router`)."""

from __future__ import annotations

from typing import Any

from django.forms.models import model_to_dict
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from ninja import Status
from ninja.errors import HttpError

from surveys.access import get_survey_for_owner
from surveys.accounts import may_publish
from surveys.api import schemas
from surveys.api.auth import read_token, write_token
from surveys.api.routes import ERRORS, FormRefused, form_data, id_path, router, token_owner
from surveys.forms.integrations import WebhookForm
from surveys.forms.invitations import InvitationEmailsForm
from surveys.integrations import Webhook
from surveys.models import Survey
from surveys.responding import invitations
from surveys.views.webhooks import LOG_LENGTH
from surveys.webhooks import deliver

# -- invitations ------------------------------------------------------------------------------


def _share_url(request: HttpRequest, survey: Survey) -> str:
    return request.build_absolute_uri(survey.get_share_url())


def _may_mail(request: HttpRequest) -> None:
    if not may_publish(token_owner(request)):
        raise HttpError(403, "Confirm your email address before Murmur mails invitations for you.")


@router.get(
    "/surveys/{survey_id}/invitations",
    response={200: schemas.InvitationCounts, **ERRORS},
    auth=read_token,
    tags=["invitations"],
)
def invitation_counts(request: HttpRequest, survey_id: int = id_path()) -> Any:
    """How many invitations there are, used and unused: never their links, which Murmur does not keep."""
    return invitations.counts(get_survey_for_owner(token_owner(request), survey_id))


@router.post(
    "/surveys/{survey_id}/invitations/links",
    response={201: schemas.InvitationLinksOut, **ERRORS},
    auth=write_token,
    tags=["invitations"],
)
def create_invitation_links(
    request: HttpRequest, response: HttpResponse, body: schemas.InvitationLinksIn, survey_id: int = id_path()
) -> Any:
    """Make single-use links; they are in this response only (``Cache-Control: no-store``)."""
    survey = get_survey_for_owner(token_owner(request), survey_id)
    links = invitations.create_links(survey, _share_url(request, survey), body.count)
    response["Cache-Control"] = "no-store"
    return Status(201, {"links": [link.url for link in links]})


@router.post(
    "/surveys/{survey_id}/invitations/emails",
    response={201: schemas.Sent, 502: schemas.Error, **ERRORS},
    auth=write_token,
    tags=["invitations"],
)
def mail_invitations(request: HttpRequest, body: schemas.InvitationEmailsIn, survey_id: int = id_path()) -> Any:
    """Mail each new address its own link (addresses already invited are skipped)."""
    survey = get_survey_for_owner(token_owner(request), survey_id)
    _may_mail(request)
    form = InvitationEmailsForm({"emails": "\n".join(body.emails)})
    if not form.is_valid():
        raise FormRefused(form)
    try:
        sent = invitations.invite_addresses(survey, _share_url(request, survey), form.cleaned_data["emails"])
    except OSError:
        return Status(502, {"detail": "The mail server did not accept the invitations; none were made.", "fields": {}})
    return Status(201, {"sent": sent})


@router.post(
    "/surveys/{survey_id}/invitations/reminders",
    response={200: schemas.Sent, 502: schemas.Error, **ERRORS},
    auth=write_token,
    tags=["invitations"],
)
def remind_invitations(request: HttpRequest, survey_id: int = id_path()) -> Any:
    """Mail a fresh link to every unused invitation with an address (the old link stops working)."""
    survey = get_survey_for_owner(token_owner(request), survey_id)
    _may_mail(request)
    try:
        sent = invitations.remind_unused(survey, _share_url(request, survey))
    except OSError:
        return Status(
            502, {"detail": "The mail server did not accept the reminders; nothing was changed.", "fields": {}}
        )
    return {"sent": sent}


# -- webhooks ---------------------------------------------------------------------------------


def webhook_out(hook: Webhook) -> dict[str, Any]:
    values = model_to_dict(hook, fields=["url", "min_new_reports", "active"])
    deliveries = [
        model_to_dict(d, exclude=["id", "webhook"]) | {"hour": d.hour} for d in hook.deliveries.all()[:LOG_LENGTH]
    ]
    state = {"failures": hook.failures, "retry_after": hook.retry_after, "sent_hour": hook.sent_hour}
    return values | state | {"id": hook.pk, "deliveries": deliveries}


def _hook(request: HttpRequest, survey_id: int, webhook_id: int) -> Webhook:
    survey = get_survey_for_owner(token_owner(request), survey_id)
    return get_object_or_404(Webhook, pk=webhook_id, survey=survey)


@router.get(
    "/surveys/{survey_id}/webhooks",
    response={200: list[schemas.WebhookOut], **ERRORS},
    auth=read_token,
    tags=["webhooks"],
)
def list_webhooks(request: HttpRequest, survey_id: int = id_path()) -> Any:
    """The survey's webhooks with their latest deliveries (never their secrets)."""
    return [webhook_out(hook) for hook in get_survey_for_owner(token_owner(request), survey_id).webhooks.all()]


@router.post(
    "/surveys/{survey_id}/webhooks",
    response={201: schemas.NewWebhookOut, **ERRORS},
    auth=write_token,
    tags=["webhooks"],
)
def add_webhook(
    request: HttpRequest, response: HttpResponse, body: schemas.WebhookIn, survey_id: int = id_path()
) -> Any:
    """Register an HTTPS address for batched, signed summaries; the secret is in this response only."""
    survey = get_survey_for_owner(token_owner(request), survey_id)
    form = WebhookForm(form_data(body.dict()))
    if not form.is_valid():
        raise FormRefused(form)
    hook = Webhook.objects.create(
        survey=survey, url=form.cleaned_data["url"], min_new_reports=form.cleaned_data["min_new_reports"]
    )
    response["Cache-Control"] = "no-store"
    return Status(201, webhook_out(hook) | {"secret": hook.secret})


@router.post(
    "/surveys/{survey_id}/webhooks/{webhook_id}/test",
    response={200: schemas.DeliveryOut, **ERRORS},
    auth=write_token,
    tags=["webhooks"],
)
def test_webhook(request: HttpRequest, survey_id: int = id_path(), webhook_id: int = id_path()) -> Any:
    """Post a signed test summary now (``"event": "test"``); the delivery, delivered or not."""
    delivery = deliver(_hook(request, survey_id, webhook_id), test=True)
    return model_to_dict(delivery, exclude=["id", "webhook"]) | {"hour": delivery.hour}


@router.delete(
    "/surveys/{survey_id}/webhooks/{webhook_id}", response={204: None, **ERRORS}, auth=write_token, tags=["webhooks"]
)
def delete_webhook(request: HttpRequest, survey_id: int = id_path(), webhook_id: int = id_path()) -> Any:
    _hook(request, survey_id, webhook_id).delete()
    return Status(204, None)
