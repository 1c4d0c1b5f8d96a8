"""Error pages that Django does not render from a template name alone.

403, 404 and 500 use Django's default handlers with ``templates/403.html``, ``404.html`` and
``500.html``. A CSRF failure gets its own page: it tells a visitor what to do (reload, enable
cookies), never why the check failed.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    # ``reason`` is Django's diagnostic; it stays in the server log, not on the page.
    if request.content_type == "application/json":
        # The submit API answers every refusal in JSON, this one too.
        message = _("This page expired for your security. Reload it and answer again.")
        return JsonResponse({"error": message}, status=403)
    return render(request, "403_csrf.html", status=403)
