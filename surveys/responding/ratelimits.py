"""Rate limits and login throttling, on counters in Django's cache.

The cache is local memory by default (one process) and Redis when ``CACHE_URL``/``REDIS_URL`` is
set, so that several app servers share the counters. A counter is keyed by what it limits, the
window's length and a *keyed hash* of the client: HMAC-SHA256 (``salted_hmac`` with
``SECRET_KEY``) of the client's IP address, or of its /64 network for IPv6, where one subscriber
holds the whole /64. No address is stored in the clear, and a counter expires when its window
ends: nothing outlives the window it limits.

A window opens at a client's first counted request and lasts ``seconds``; the client may make
``count`` requests in it. (Fixed clock-aligned windows would let a client send 2 x count across a
boundary, and make tests depend on the time of day.) Limits are set per name in
``settings.RATE_LIMITS`` (``config.env.envrates``: ``"30/m,300/h"``) and switched off all at once
with ``RATE_LIMITS=false`` (benchmarks, tests that post thousands of times).

Logins count *failures* separately by account and by client (``settings.LOGIN_FAILURES``): after
that many wrong passwords in a row for one username, or from one client within the window, every
further attempt is answered 429 before any password is checked, so the attacker learns nothing
from it. A successful login clears its account's count, not its client's: otherwise one valid
account would let a client try passwords on all the others.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.crypto import salted_hmac
from django.utils.translation import ngettext_lazy

Rate = tuple[int, int]  # (count, seconds)
View = Callable[..., HttpResponse]


def client_address(request: HttpRequest) -> str:
    """The client's address: the peer's, or behind a trusted proxy (``BEHIND_PROXY``) the last
    ``X-Forwarded-For`` entry, the one the proxy itself appended. IPv6 is cut to its /64."""
    address = request.META.get("REMOTE_ADDR", "")
    if settings.BEHIND_PROXY:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")[-1].strip()
        address = forwarded or address
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:64]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def keyed_hash(*parts: str) -> str:
    """A keyed hash of the parts: stable for a SECRET_KEY, useless without it."""
    return salted_hmac("murmur.ratelimits", "\x1f".join(parts), algorithm="sha256").hexdigest()[:32]


def client_key(request: HttpRequest, *scope: str) -> str:
    return keyed_hash(client_address(request), *scope)


def hit(name: str, subject: str, rates: Iterable[Rate], now: float | None = None) -> int | None:
    """Count one request of ``subject`` against ``rates``; the seconds to wait if over any, else None."""
    now = time.time() if now is None else now
    rates = list(rates)
    if not rates:
        return None
    keys = [f"rl:{name}:{seconds}:{subject}" for _, seconds in rates]
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        return _hit_redis(backend, keys, rates)
    wait = None
    for key, (count, seconds) in zip(keys, rates, strict=True):
        if _increment(key, seconds, now) > count:
            wait = max(wait or 0, _seconds_left(key, seconds, now))
    return wait


def _hit_redis(backend: RedisCache, keys: list[str], rates: list[Rate]) -> int | None:
    """The same count in one round trip: INCR, EXPIRE NX (only a new key gets its window), TTL."""
    names = [backend.make_and_validate_key(key) for key in keys]
    pipeline = backend._cache.get_client(names[0], write=True).pipeline(transaction=False)
    for name, (_, seconds) in zip(names, rates, strict=True):
        pipeline.incr(name).expire(name, seconds, nx=True).ttl(name)
    results = pipeline.execute()
    waits = [max(1, int(results[3 * i + 2])) for i, (count, _) in enumerate(rates) if int(results[3 * i]) > count]
    return max(waits) if waits else None


def _increment(key: str, seconds: int, now: float) -> int:
    """Add one to the window's count; open a window (count 1, expiring in ``seconds``) if none is."""
    try:
        return int(cache.incr(key))  # the common case: one operation
    except ValueError:  # no open window
        pass
    if not cache.add(key, 1, timeout=seconds):  # another request opened it meanwhile
        return int(cache.incr(key))
    cache.set(f"{key}:opened", now, timeout=seconds)
    return 1


def _seconds_left(key: str, seconds: int, now: float) -> int:
    opened = cache.get(f"{key}:opened", now)
    return max(1, math.ceil(opened + seconds - now))


def rates_for(name: str) -> list[Rate]:
    return list(settings.RATE_LIMITS.get(name, ()))


def too_many_requests(request: HttpRequest, wait: int, message: str, *, as_json: bool = False) -> HttpResponse:
    """429 with ``Retry-After``: the styled, translated page, or a JSON error for the submit API."""
    if as_json:
        response: HttpResponse = JsonResponse({"error": message, "retry_after": wait}, status=429)
    else:
        response = render(request, "429.html", {"message": message}, status=429)
    response["Retry-After"] = str(wait)
    return response


#: The 429 sentences, each with the wait in whole minutes (rounded up).
WAIT = ngettext_lazy(
    "Too many requests from your network in a short time. Please wait about %(minutes)s minute and try again.",
    "Too many requests from your network in a short time. Please wait about %(minutes)s minutes and try again.",
    "minutes",
)
SUBMIT_WAIT = ngettext_lazy(
    "Too many responses from your network in a short time. Wait about %(minutes)s minute and send again.",
    "Too many responses from your network in a short time. Wait about %(minutes)s minutes and send again.",
    "minutes",
)
LOGIN_WAIT = ngettext_lazy(
    "Too many wrong passwords in a row for this account or from your network. To protect "
    "the account, logging in is paused for about %(minutes)s minute.",
    "Too many wrong passwords in a row for this account or from your network. To protect "
    "the account, logging in is paused for about %(minutes)s minutes.",
    "minutes",
)


def in_minutes(message: Any, wait: int) -> str:
    return str(message % {"minutes": max(1, math.ceil(wait / 60))})


def rate_limited(
    name: str,
    *,
    methods: tuple[str, ...] = ("POST",),
    per_argument: str | None = None,
    as_json: bool = False,
    message: Any = WAIT,
) -> Callable[[View], View]:
    """Limit a view's ``methods`` per client (and per URL argument ``per_argument``, e.g. a survey)."""

    def decorator(view: View) -> View:
        @wraps(view)
        def limited(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if settings.RATE_LIMITS_ENABLED and request.method in methods:
                scope = (str(kwargs.get(per_argument, "")),) if per_argument else ()
                wait = hit(name, client_key(request, *scope), rates_for(name))
                if wait is not None:
                    return too_many_requests(request, wait, in_minutes(message, wait), as_json=as_json)
            return view(request, *args, **kwargs)

        return limited

    return decorator


# -- logins -----------------------------------------------------------------------------------


def _account_key(username: str) -> str:
    return keyed_hash("account", username.strip().casefold())


def _login_keys(request: HttpRequest, username: str) -> list[str]:
    return [f"rl:login:{_account_key(username)}", f"rl:login:{client_key(request, 'login')}"]


def login_wait(request: HttpRequest, username: str, now: float | None = None) -> int | None:
    """Seconds until this account and this client may try a password again; None if they may now."""
    if not settings.RATE_LIMITS_ENABLED:
        return None
    now = time.time() if now is None else now
    limit, seconds = settings.LOGIN_FAILURES
    waits = [
        _seconds_left(key, seconds, now) for key in _login_keys(request, username) if (cache.get(key) or 0) >= limit
    ]
    return max(waits) if waits else None


@receiver(user_login_failed)
def count_login_failure(sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **_: Any) -> None:
    if request is None or not settings.RATE_LIMITS_ENABLED:
        return
    _, seconds = settings.LOGIN_FAILURES
    now = time.time()
    for key in _login_keys(request, str(credentials.get("username", ""))):
        _increment(key, seconds, now)


@receiver(user_logged_in)
def forget_account_failures(sender: Any, request: HttpRequest | None, user: Any, **_: Any) -> None:
    cache.delete(f"rl:login:{_account_key(user.get_username())}")


def login_throttled(view: View) -> View:
    """Answer a login POST 429 while its account or client is over the failure limit."""

    @wraps(view)
    def throttled(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method == "POST":
            wait = login_wait(request, str(request.POST.get("username", "")))
            if wait is not None:
                return too_many_requests(request, wait, in_minutes(LOGIN_WAIT, wait))
        return view(request, *args, **kwargs)

    return throttled
