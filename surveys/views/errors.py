"""Error pages that Django does not render from a template name alone.

403, 404 and 500 use Django's default handlers with ``templates/403.html``, ``404.html`` and
``500.html``. A CSRF failure gets its own page: it tells a visitor what to do (reload, enable
cookies), never why the check failed.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    # ``reason`` is Django's diagnostic; it stays in the server log, not on the page.
    return render(request, "403_csrf.html", status=403)
