"""Organizers' invitation page: single-use links made or mailed, counts, reminders.

Only the owner reaches it (``surveys.access``). New links are shown in the response that made
them and never again: the server keeps only their keyed hashes (``surveys.responding.invitations``).
"""

from __future__ import annotations

from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods, require_POST

from surveys.access import get_survey_for_owner
from surveys.accounts import may_publish
from surveys.forms.invitations import InvitationEmailsForm, InvitationLinksForm
from surveys.models import Survey
from surveys.responding import invitations

PAGE = "surveys/invitations.html"


def page_context(request: HttpRequest, survey: Survey, **extra: Any) -> dict[str, Any]:
    return {
        "survey": survey,
        "counts": invitations.counts(survey),
        "links_form": InvitationLinksForm(),
        "emails_form": InvitationEmailsForm(),
        "new_links": [],
        **extra,
    }


def share_url(request: HttpRequest, survey: Survey) -> str:
    return request.build_absolute_uri(survey.get_share_url())


@login_required
@require_http_methods(["GET", "POST"])
def invitation_links(request: HttpRequest, survey_id: int) -> HttpResponse:
    """GET: the page. POST: make N links and show them, once."""
    survey = get_survey_for_owner(request.user, survey_id)
    if request.method == "GET":
        return render(request, PAGE, page_context(request, survey))
    form = InvitationLinksForm(request.POST)
    if not form.is_valid():
        return render(request, PAGE, page_context(request, survey, links_form=form), status=400)
    links = invitations.create_links(survey, share_url(request, survey), form.cleaned_data["count"])
    response = render(request, PAGE, page_context(request, survey, new_links=links))
    # The links exist only in this response: no cache may keep a copy.
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def invitation_emails(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = get_survey_for_owner(request.user, survey_id)
    if not may_publish(cast(User, request.user)):  # login_required: never AnonymousUser
        return refuse_unconfirmed(request, survey)
    form = InvitationEmailsForm(request.POST)
    if not form.is_valid():
        return render(request, PAGE, page_context(request, survey, emails_form=form), status=400)
    sent = invitations.invite_addresses(survey, share_url(request, survey), form.cleaned_data["emails"])
    skipped = len(form.cleaned_data["emails"]) - sent
    messages.success(
        request,
        ngettext(
            "Made %(count)s invitation; its mail is on its way.",
            "Made %(count)s invitations; their mail is on its way.",
            sent,
        )
        % {"count": sent},
    )
    if skipped:
        messages.info(
            request,
            ngettext(
                "%(count)s address was already invited and was skipped.",
                "%(count)s addresses were already invited and were skipped.",
                skipped,
            )
            % {"count": skipped},
        )
    return redirect("invitations", survey.pk)


@login_required
@require_POST
def invitation_reminders(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = get_survey_for_owner(request.user, survey_id)
    if not may_publish(cast(User, request.user)):  # login_required: never AnonymousUser
        return refuse_unconfirmed(request, survey)
    sent = invitations.remind_unused(survey, share_url(request, survey))
    messages.success(
        request,
        ngettext(
            "%(count)s reminder with a new link is on its way.",
            "%(count)s reminders with new links are on their way.",
            sent,
        )
        % {"count": sent},
    )
    return redirect("invitations", survey.pk)


def refuse_unconfirmed(request: HttpRequest, survey: Survey) -> HttpResponse:
    """Murmur mails no one for an account whose own address is unconfirmed (no spam relay)."""
    messages.error(request, _("Confirm your email address before Murmur mails invitations for you."))
    return redirect("invitations", survey.pk)
