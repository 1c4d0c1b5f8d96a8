"""Error pages that Django does not render from a template name alone.

403, 404 and 500 use Django's default handlers with ``templates/403.html``, ``404.html`` and
``500.html``; under DEBUG, :class:`StyledErrorPagesMiddleware` shows those too. A CSRF failure
gets its own page: it tells a visitor what to do (reload, enable cookies), never why the check
failed.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
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


#: What Django's technical 404 and 500 pages (``django.views.debug``) carry and Murmur's never do.
TECHNICAL_PAGE_MARK = b'<meta name="robots" content="NONE,NOARCHIVE">'


class StyledErrorPagesMiddleware:
    """Under DEBUG too, a visitor gets Murmur's styled, translated 404 and 500 pages.

    With DEBUG on (``make run``) Django answers a missing page with its technical 404, in English and
    listing every URL pattern, and an error with its traceback page. This swaps either for
    ``templates/404.html`` or ``500.html``, as production shows them; the traceback still goes to the
    console log (``django.request``). Without DEBUG it does nothing: Django's handlers already render
    those templates. It sits after ``LocaleMiddleware``, so the page is in the visitor's language.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if settings.DEBUG and response.status_code in (404, 500) and technical(response):
            return render(request, f"{response.status_code}.html", status=response.status_code)
        return response


def technical(response: HttpResponse) -> bool:
    """Whether the response is one of Django's technical debug pages."""
    if response.streaming or not response.get("Content-Type", "").startswith("text/html"):
        return False
    return TECHNICAL_PAGE_MARK in response.content[:2000]
