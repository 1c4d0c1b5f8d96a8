"""Organizers' personal access tokens for the organizer API: make one (shown once), revoke one.

Only a keyed hash of each token is stored (:mod:`surveys.integrations`), so a new token appears in
the response that made it and never again; a revoked token is refused from the next request on.
"""

from __future__ import annotations

from typing import cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from surveys.forms.integrations import ApiTokenForm
from surveys.integrations import ApiToken, new_token, token_hash

PAGE = "surveys/api_tokens.html"


@login_required
@require_http_methods(["GET", "POST"])
def api_tokens(request: HttpRequest) -> HttpResponse:
    """GET: the owner's tokens. POST: make one and show it, once."""
    owner = cast(User, request.user)  # login_required: never AnonymousUser
    form = ApiTokenForm(request.POST or None)
    new = ""
    status = 200
    if request.method == "POST":
        if form.is_valid():
            new = new_token()
            ApiToken.objects.create(
                owner=owner,
                name=form.cleaned_data["name"],
                scope=form.cleaned_data["scope"],
                prefix=new[:8],
                token_hash=token_hash(new),
            )
            form = ApiTokenForm()
        else:
            status = 400
    context = {"tokens": ApiToken.objects.filter(owner=owner), "form": form, "new_token": new}
    response = render(request, PAGE, context, status=status)
    if new:
        response["Cache-Control"] = "no-store"  # the token exists only in this response
    return response


@login_required
@require_POST
def api_token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    token = get_object_or_404(ApiToken, pk=token_id, owner=request.user, revoked_at__isnull=True)
    token.revoked_at = timezone.now()
    token.save(update_fields=["revoked_at"])
    messages.success(request, _("Token “%(name)s” is revoked: it no longer works.") % {"name": token.name})
    return redirect("api_tokens")
