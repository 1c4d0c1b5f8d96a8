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

With ``DEBUG`` off and no ``CACHE_URL`` the cache is a table on the primary database
(surveys/cache.py), so the counters are shared by every worker without Redis.

The client's address is the peer's, or, when the peer is one of the trusted proxies
(``BEHIND_PROXY``: their addresses or networks), the rightmost ``X-Forwarded-For`` entry that is
not a trusted proxy: the address the outermost trusted proxy saw. Entries further left are the
client's own claims. :class:`ForwardedHeadersMiddleware` drops the forwarded headers from any
other peer, so neither the limits nor ``X-Forwarded-Proto`` can be steered by a client that
reaches the app directly.

Logins are throttled by django-axes (maintained, database handler) on the same address,
pseudonymized (:func:`login_client`), with one layer of ours, :class:`LoginThrottle`, because axes
has no progressive delay: axes pauses one *account and client* pair after
``settings.LOGIN_FAILURES`` wrong passwords in a row, so strangers' failures elsewhere never lock
the owner out; and per account, across every client, after ``settings.LOGIN_DELAY`` failures a
client the account never logged in from must wait 1, 2, 4 ... seconds (up to a cap) after the
last failure before a password is checked. A refused attempt is answered 429 before any password
is checked and is not counted, so the attacker learns nothing and cannot lengthen the wait.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections.abc import Callable, Iterable
from datetime import timedelta
from functools import wraps
from typing import Any

from axes.backends import AxesStandaloneBackend
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessAttempt, AccessLog
from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from django.db.models import Max, Sum
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.crypto import salted_hmac
from django.utils.translation import ngettext_lazy

Rate = tuple[int, int]  # (count, seconds)
View = Callable[..., HttpResponse]


def _trusted_proxy(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in network for network in settings.TRUSTED_PROXIES)


def client_address(request: HttpRequest) -> str:
    """The client's address: the peer's, or, from a trusted proxy (``BEHIND_PROXY``), the rightmost
    ``X-Forwarded-For`` entry that is not a trusted proxy. IPv6 is cut to its /64."""
    address = request.META.get("REMOTE_ADDR", "")
    if _trusted_proxy(address):
        for entry in reversed(request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")):
            if entry.strip():
                address = entry.strip()
                if not _trusted_proxy(address):
                    break
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:64]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


FORWARDED_HEADERS = (
    "HTTP_FORWARDED",
    "HTTP_X_FORWARDED_FOR",
    "HTTP_X_FORWARDED_PROTO",
    "HTTP_X_FORWARDED_HOST",
    "HTTP_X_FORWARDED_PORT",
)


class ForwardedHeadersMiddleware:
    """Forget the forwarded headers unless the peer is a trusted proxy: from anyone else they are
    the client's own claims (Django's ``SECURE_PROXY_SSL_HEADER`` would believe them from any peer)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not _trusted_proxy(request.META.get("REMOTE_ADDR", "")):
            for header in FORWARDED_HEADERS:
                request.META.pop(header, None)
        return self.get_response(request)


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
        pipeline.incr(name)
        pipeline.expire(name, seconds, nx=True)
        pipeline.ttl(name)
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
LOGIN_DELAY_WAIT = ngettext_lazy(
    "Many wrong passwords were tried for this account lately. To protect it, a password from a "
    "device or network it has not logged in from is checked only after a pause: try again in "
    "%(seconds)s second.",
    "Many wrong passwords were tried for this account lately. To protect it, a password from a "
    "device or network it has not logged in from is checked only after a pause: try again in "
    "%(seconds)s seconds.",
    "seconds",
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


# -- logins (django-axes) ----------------------------------------------------------------------


def login_client(request: HttpRequest) -> str:
    """The client as django-axes stores it: a keyed hash of :func:`client_address`, written as an
    IPv6 address in the unique-local range (axes' column holds addresses), so no address is kept
    in the clear in its tables or logs."""
    return str(ipaddress.IPv6Address(bytes.fromhex("fd" + keyed_hash(client_address(request), "login")[:30])))


class LoginThrottleBackend(AxesStandaloneBackend, ModelBackend):
    """Django's password backend behind axes' check, which refuses a throttled login before the
    password is checked; one backend, so that ``login()`` after sign-up needs no backend named.
    A login without a request (the test client's ``login()``, the shell) has no client to count."""

    def authenticate(
        self, request: HttpRequest | None, username: str | None = None, password: str | None = None, **kwargs: Any
    ) -> Any:
        if request is not None:
            AxesStandaloneBackend.authenticate(self, request, username, password, **kwargs)
        return ModelBackend.authenticate(self, request, username, password, **kwargs)


class LoginThrottle(AxesDatabaseHandler):
    """axes' database handler (the pause per account and client) plus the delay per account, and a
    pause per client across every account (``settings.LOGIN_CLIENT_FAILURES`` wrong passwords in the
    window), which stops one client trying a few passwords on many accounts (password spraying)
    without letting a stranger's failures elsewhere lock the owner out."""

    def is_locked(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> bool:
        refusal = self.refusal(request, credentials)
        request.murmur_login_refusal = refusal  # type: ignore[attr-defined]
        return refusal is not None

    def refusal(self, request: HttpRequest, credentials: dict[str, Any] | None) -> tuple[int, str] | None:
        """(seconds to wait, the sentence saying why), or None if a password may be checked now."""
        now = request.axes_attempt_time  # type: ignore[attr-defined]
        window = timedelta(seconds=settings.LOGIN_FAILURES[1])
        if super().is_locked(request, credentials):
            last = max(
                attempts.aggregate(last=Max("attempt_time"))["last"] or now
                for attempts in self.get_user_attempts(request, credentials)
            )
            wait = _whole_seconds(last + window - now)
            return wait, in_minutes(LOGIN_WAIT, wait)
        sprayed = AccessAttempt.objects.filter(
            ip_address=request.axes_ip_address,  # type: ignore[attr-defined]
            attempt_time__gte=now - window,
        ).aggregate(failures=Sum("failures_since_start"), last=Max("attempt_time"))
        if (sprayed["failures"] or 0) >= settings.LOGIN_CLIENT_FAILURES:
            wait = _whole_seconds(sprayed["last"] + window - now)
            return wait, in_minutes(LOGIN_WAIT, wait)
        after, longest = settings.LOGIN_DELAY
        username = get_client_username(request, credentials)
        account = AccessAttempt.objects.filter(username=username, attempt_time__gte=now - window)
        totals = account.aggregate(failures=Sum("failures_since_start"), last=Max("attempt_time"))
        failures = totals["failures"] or 0
        if failures < after:
            return None
        delay = timedelta(seconds=min(2 ** min(failures - after, 30), longest))
        if totals["last"] + delay <= now:
            return None
        usual = AccessLog.objects.filter(
            username=username,
            ip_address=request.axes_ip_address,  # type: ignore[attr-defined]
            attempt_time__gte=now - timedelta(days=settings.LOGIN_USUAL_DAYS),
        )
        if usual.exists():
            return None
        wait = _whole_seconds(totals["last"] + delay - now)
        return wait, str(LOGIN_DELAY_WAIT % {"seconds": wait})


def _whole_seconds(delta: timedelta) -> int:
    return max(1, math.ceil(delta.total_seconds()))


def login_refused(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict[str, Any] | None = None
) -> HttpResponse:
    """axes' lockout response: the 429 page with ``Retry-After``.

    axes also calls this for the wrong password that reaches the limit; that one was checked, so
    its answer is the form saying the password is wrong, and the pause starts with the next attempt.
    """
    refusal = getattr(request, "murmur_login_refusal", None)
    if refusal is None:
        if original_response is not None:
            return original_response
        refusal = (settings.LOGIN_FAILURES[1], in_minutes(LOGIN_WAIT, settings.LOGIN_FAILURES[1]))
    wait, message = refusal
    return too_many_requests(request, wait, message)
