"""The real URLs plus views that fail on purpose, for the error-page tests only."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.urls import path

from config.urls import urlpatterns as real_urlpatterns

SECRET = "hunter2-in-the-traceback"


def fail(request: HttpRequest) -> HttpResponse:
    raise RuntimeError(f"database password is {SECRET}")


def forbid(request: HttpRequest) -> HttpResponse:
    raise PermissionDenied(f"internal reason {SECRET}")


urlpatterns = [path("test-500/", fail), path("test-403/", forbid), *real_urlpatterns]
