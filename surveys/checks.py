"""Murmur's own deployment checks, run by ``manage.py check --deploy`` beside Django's."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Tags, Warning, register


@register(Tags.security, deploy=True)
def check_mail_leaves_the_server(**_: Any) -> list[Warning]:
    """Console or in-memory mail in production would write reset and address-check links to the log."""
    if settings.DEBUG or settings.EMAIL_BACKEND.endswith(".smtp.EmailBackend"):
        return []
    return [
        Warning(
            "Mail is not sent: password-reset and address-check links would go to the log or nowhere.",
            hint="Set EMAIL_URL (smtp://user:password@host:587) or EMAIL_HOST and its companions.",
            id="murmur.W001",
        )
    ]
