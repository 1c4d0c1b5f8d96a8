"""Small readers of environment variables that refuse values they do not understand."""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def envbool(name: str, default: str) -> bool:
    """A boolean setting: 1/true/yes/on or 0/false/no/off (case-insensitive)."""
    value = os.getenv(name, default).strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {value!r}")


def envint(name: str, default: str) -> int:
    """A whole-number setting."""
    value = os.getenv(name, default)
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from None


def envlist(name: str, default: str) -> list[str]:
    """A comma-separated list; blanks are dropped."""
    return [item.strip() for item in os.getenv(name, default).split(",") if item.strip()]


def envcache(name: str, default: str) -> dict[str, object]:
    """A cache from a URL: ``locmem://`` (this process only) or ``redis://host:port/db`` (shared)."""
    url = os.getenv(name, default).strip()
    if url.startswith(("redis://", "rediss://", "unix://")):
        return {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url, "KEY_PREFIX": "murmur"}
    if url.startswith("locmem://"):
        return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": url[9:] or "murmur"}
    raise ImproperlyConfigured(f"{name} must be locmem:// or redis://host:port/db, got {url!r}")


_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def envrates(name: str, default: str) -> list[tuple[int, int]]:
    """Rate limits as ``count/period`` joined by commas: ``"30/m,300/h"`` -> [(30, 60), (300, 3600)].

    A period is s, m, h or d, optionally with a number before it (``"5/10m"``).
    """
    rates = []
    for item in envlist(name, default):
        count, _, period = item.partition("/")
        number, unit = period[:-1] or "1", period[-1:]
        if not (count.isdigit() and number.isdigit() and unit in _PERIODS and int(count) > 0 and int(number) > 0):
            raise ImproperlyConfigured(f"{name} must look like 30/m,300/h (count/period, s m h d), got {item!r}")
        rates.append((int(count), int(number) * _PERIODS[unit]))
    return rates
