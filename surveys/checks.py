"""Murmur's own deployment checks, run by ``manage.py check --deploy`` beside Django's."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register


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


#: Caches that are one process's own: each worker would count its own rate limits.
PER_PROCESS_CACHES = (
    "django.core.cache.backends.locmem.LocMemCache",
    "django.core.cache.backends.dummy.DummyCache",
)


@register(Tags.security, Tags.caches, deploy=True)
def check_limits_are_shared(**_: Any) -> list[Error]:
    """Rate limits are counted in the cache: a per-process cache multiplies them by the workers."""
    backend = settings.CACHES.get("default", {}).get("BACKEND", "")
    if settings.DEBUG or backend not in PER_PROCESS_CACHES:
        return []
    return [
        Error(
            "The cache is this process's own: every worker would count its own rate limits.",
            hint="Leave CACHE_URL unset (the database cache) or set it to redis://host:6379/0.",
            id="murmur.E001",
        )
    ]


@register(Tags.security, deploy=True)
def check_proxies_are_named(**_: Any) -> list[Error]:
    """BEHIND_PROXY=true believes X-Forwarded-For from any peer: a client could pick its address."""
    if not any(network.prefixlen == 0 for network in settings.TRUSTED_PROXIES):
        return []
    return [
        Error(
            "BEHIND_PROXY trusts every peer: a client that reaches the app directly could choose the "
            "address its rate limits and login throttle count.",
            hint="Set BEHIND_PROXY to the proxies' addresses or networks, e.g. 10.0.0.0/8,127.0.0.1.",
            id="murmur.E002",
        )
    ]
