"""Personal access tokens on the organizer API: who is asking, and may they write.

``Authorization: Bearer mur_…``. The token's keyed hash is looked up on every request, so a
revoked token is refused from the next request on, and nothing caches it. Wrong tokens are
throttled like wrong passwords (:mod:`surveys.responding.ratelimits`): once a client has sent more
than ``RATE_LIMITS["api_auth"]`` allows (``RATE_LIMIT_API_AUTH``), its requests are refused with
429 for the rest of the window before any token is checked, so guessing gets nowhere (a token has
256 bits anyway). Every request of a good token counts against ``RATE_LIMITS["api"]``
(``RATE_LIMIT_API``) for that token. The client is the one the rate limits know: a keyed hash of
its address, kept only for the window. What a good token's request changes or exports goes into
the audit log as its owner's, marked with the token's name (:mod:`surveys.teams.audit`).
"""

from __future__ import annotations

import math
import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest
from django.utils import timezone
from ninja.errors import HttpError
from ninja.security import HttpBearer

from surveys.integrations import ApiToken, token_hash
from surveys.responding.ratelimits import client_key, hit, keyed_hash, rates_for
from surveys.teams import audit


class Throttled(HttpError):
    """429 with the seconds to wait (``Retry-After``)."""

    def __init__(self, wait: int) -> None:
        self.wait = wait
        super().__init__(429, f"Too many requests. Retry in {wait} seconds.")


class ReadOnlyToken(HttpError):
    def __init__(self) -> None:
        super().__init__(403, "This token may only read; make a read-and-write token to change surveys.")


def _lock_key(request: HttpRequest) -> str:
    return f"api-auth-locked:{client_key(request, 'api-token')}"


def _locked(request: HttpRequest) -> int | None:
    """Seconds a client with too many wrong tokens must still wait (None: it may try)."""
    until = cache.get(_lock_key(request))
    return None if until is None else max(1, math.ceil(until - time.time()))


def _failed(request: HttpRequest) -> None:
    """Count a wrong token; past the limit, lock the client out for the rest of the window."""
    wait = hit("api_auth", client_key(request, "api-token"), rates_for("api_auth"))
    if wait is not None:
        cache.set(_lock_key(request), time.time() + wait, timeout=wait)
        raise Throttled(wait)


class TokenAuth(HttpBearer):
    """A valid, unrevoked token; with ``write``, only a read-and-write one (else 403)."""

    openapi_description = "A personal access token (Your account → API tokens): Bearer mur_…"

    def __init__(self, write: bool = False) -> None:
        self.write = write
        super().__init__()

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        limits = settings.RATE_LIMITS_ENABLED
        if limits:
            wait = _locked(request)
            if wait is not None:
                raise Throttled(wait)
        found = (
            ApiToken.objects.select_related("owner")
            .filter(token_hash=token_hash(token), revoked_at__isnull=True, owner__is_active=True)
            .first()
        )
        if found is None:
            if limits:
                _failed(request)
            return None
        if limits:
            wait = hit("api", keyed_hash("api-token", str(found.pk)), rates_for("api"))
            if wait is not None:
                raise Throttled(wait)
        if self.write and not found.may_write:
            raise ReadOnlyToken
        today = timezone.localdate()
        if found.last_used_on != today:
            found.last_used_on = today
            found.save(update_fields=["last_used_on"])
        request.user = found.owner
        audit.acting_with_token(found.owner, found.name)
        return found


class ReadToken(TokenAuth):
    """Any valid token (the schema's security scheme ``ReadToken``)."""


class WriteToken(TokenAuth):
    """A read-and-write token (the schema's security scheme ``WriteToken``); a read token gets 403."""

    def __init__(self) -> None:
        super().__init__(write=True)


read_token = ReadToken()
write_token = WriteToken()
