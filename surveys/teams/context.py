"""Template context: whether the login page offers single sign-on, and under which name."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest


def single_sign_on(request: HttpRequest) -> dict[str, Any]:
    if not getattr(settings, "OIDC_ENABLED", False):
        return {}
    return {"single_sign_on": {"provider": settings.OIDC_PROVIDER_NAME}}
