"""Typed requests: Django's HttpRequest with django-htmx's ``request.htmx``."""

from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails
