"""Organizers' account pages beyond Django's auth views: confirming the email address given at
sign-up, and sending the confirmation link again."""

from __future__ import annotations

from typing import cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from surveys import accounts
from surveys.responding.ratelimits import rate_limited


@require_GET
def confirm_email(request: HttpRequest, token: str) -> HttpResponse:
    user = accounts.confirm_email(token)
    if user is None:
        return render(request, "registration/confirm_email_invalid.html", status=400)
    messages.success(request, _("Your email address is confirmed. You can open surveys now."))
    return redirect("survey_list" if request.user == user else "login")


@login_required
@require_POST
@rate_limited("mail")
def resend_confirmation(request: HttpRequest) -> HttpResponse:
    user = cast(User, request.user)  # login_required: never AnonymousUser
    if accounts.email_unconfirmed(user):
        accounts.send_confirmation(request, user)
        messages.success(request, _("We sent the link again to %(email)s.") % {"email": user.email})
    return redirect("survey_list")
