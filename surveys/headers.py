"""Response headers Django's SecurityMiddleware does not set: Content-Security-Policy and
Permissions-Policy (Django 5.2 has no CSP support of its own).

The policy allows scripts, styles, images and connections from this origin only, and no inline
script or style at all: the answer page's JavaScript does the privacy-critical randomization, so
no injected markup may run code or restyle it. Templates therefore carry no ``<script>`` body,
``style=`` or ``on*=`` attribute; data for scripts travels in ``json_script`` blocks and
``data-*`` attributes, htmx is told not to inject its indicator styles or evaluate code, and
charts' SVG uses presentation attributes (surveys/results/charts.py). ``tests/browser`` fails on any CSP
violation the browser reports.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse


class SecurityHeadersMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", settings.CONTENT_SECURITY_POLICY)
        response.headers.setdefault("Permissions-Policy", settings.PERMISSIONS_POLICY)
        return response
