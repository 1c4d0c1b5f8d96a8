"""Small readers of environment variables that refuse values they do not understand."""

from __future__ import annotations

import ipaddress
import os
from typing import NamedTuple
from urllib.parse import parse_qsl, unquote, urlsplit

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
    """A cache from a URL: ``locmem://`` (this process only), ``db://table`` (a table on the primary
    database, shared by every worker and server) or ``redis://host:port/db`` (shared)."""
    url = os.getenv(name, default).strip()
    # Every key starts with this (``CACHE_KEY_PREFIX``, "murmur"): benchmarks give each run its own.
    prefix = os.getenv("CACHE_KEY_PREFIX", "murmur")
    if url.startswith(("redis://", "rediss://", "unix://")):
        return {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url, "KEY_PREFIX": prefix}
    if url.startswith("locmem://"):
        return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": url[9:] or "murmur"}
    if url.startswith("db://"):
        # surveys/migrations/0015 creates the default table; another needs `manage.py createcachetable`.
        return {"BACKEND": "surveys.cache.DatabaseCache", "LOCATION": url[5:] or "murmur_cache", "KEY_PREFIX": prefix}
    raise ImproperlyConfigured(f"{name} must be locmem://, db://table or redis://host:port/db, got {url!r}")


Network = ipaddress.IPv4Network | ipaddress.IPv6Network
#: What ``BEHIND_PROXY=true`` means: any peer may set the forwarded headers (``check --deploy`` refuses it).
ANY_PEER: list[Network] = [ipaddress.ip_network("0.0.0.0/0"), ipaddress.ip_network("::/0")]


def envproxies(name: str, default: str) -> list[Network]:
    """The reverse proxies whose forwarded headers are believed: addresses or networks joined by
    commas (``10.0.0.0/8,127.0.0.1``); ``false`` for none; ``true`` for any peer (refused by
    ``check --deploy``: a client that reaches the app directly could then choose its address)."""
    value = os.getenv(name, default).strip()
    if value.lower() in _FALSE:
        return []
    if value.lower() in _TRUE:
        return list(ANY_PEER)
    networks = []
    for item in envlist(name, default):
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"{name} must be false or the proxies' addresses or networks (10.0.0.0/8,127.0.0.1), got {item!r}"
            ) from None
    return networks


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


class EmailSettings(NamedTuple):
    backend: str
    host: str
    port: int
    user: str
    password: str
    use_tls: bool
    use_ssl: bool


_SMTP = "django.core.mail.backends.smtp.EmailBackend"
_BACKENDS = {
    "console": "django.core.mail.backends.console.EmailBackend",
    "locmem": "django.core.mail.backends.locmem.EmailBackend",
}


def envemail() -> EmailSettings:
    """Outgoing mail from ``EMAIL_URL``, else from Django's ``EMAIL_HOST``... variables, else the console.

    ``EMAIL_URL``: ``smtp://user:password@host:587`` (STARTTLS unless ``?tls=false``),
    ``smtps://user:password@host:465`` (TLS from the start), ``console://`` or ``locmem://``;
    user and password are percent-encoded. Without it, ``EMAIL_HOST`` (with ``EMAIL_PORT``, 587;
    ``EMAIL_HOST_USER``, ``EMAIL_HOST_PASSWORD``, ``EMAIL_USE_TLS``, true; ``EMAIL_USE_SSL``, false)
    selects SMTP; with neither, ``EMAIL_BACKEND`` or the console backend.
    """
    url = os.getenv("EMAIL_URL", "").strip()
    if url:
        parts = urlsplit(url)
        if parts.scheme in _BACKENDS:
            return EmailSettings(_BACKENDS[parts.scheme], "", 25, "", "", False, False)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ImproperlyConfigured(f"EMAIL_URL must be smtp://, smtps://, console:// or locmem://, got {url!r}")
        ssl = parts.scheme == "smtps"
        query = {key: value.lower() for key, value in parse_qsl(parts.query)}
        if query.get("tls", "true") not in _TRUE | _FALSE:
            raise ImproperlyConfigured(f"EMAIL_URL's tls must be true or false, got {query['tls']!r}")
        return EmailSettings(
            _SMTP,
            parts.hostname,
            parts.port or (465 if ssl else 587),
            unquote(parts.username or ""),
            unquote(parts.password or ""),
            not ssl and query.get("tls", "true") in _TRUE,
            ssl,
        )
    if os.getenv("EMAIL_HOST"):
        return EmailSettings(
            _SMTP,
            os.environ["EMAIL_HOST"],
            envint("EMAIL_PORT", "587"),
            os.getenv("EMAIL_HOST_USER", ""),
            os.getenv("EMAIL_HOST_PASSWORD", ""),
            envbool("EMAIL_USE_TLS", "true"),
            envbool("EMAIL_USE_SSL", "false"),
        )
    return EmailSettings(os.getenv("EMAIL_BACKEND", _BACKENDS["console"]), "localhost", 25, "", "", False, False)
