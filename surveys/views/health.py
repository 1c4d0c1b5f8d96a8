"""Probes for load balancers and orchestrators: liveness and readiness, no login, no survey data.

Neither view is rate limited (limits are per view, :mod:`surveys.responding.ratelimits`) nor
redirected to HTTPS (``SECURE_REDIRECT_EXEMPT``), so a probe on the app server's own port works.
"""

from __future__ import annotations

import logging
import uuid

from django.conf import settings
from django.core.cache import cache
from django.db import connections
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

logger = logging.getLogger(__name__)

#: Seconds the readiness probe's cache entry lives: long enough to read it back, no longer.
PROBE_TIMEOUT = 10


@never_cache
@require_safe
def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness: the process answers requests. Touches nothing else, so a database outage does not
    get every worker restarted."""
    return HttpResponse(b"", content_type="text/plain")


@never_cache
@require_safe
def ready(request: HttpRequest) -> HttpResponse:
    """Readiness: 200 when every configured database and the cache answer, 503 otherwise.

    The body names each dependency with true or false, nothing more.
    """
    checks = {"database": all(database_answers(alias) for alias in settings.DATABASES), "cache": cache_answers()}
    return JsonResponse(checks, status=200 if all(checks.values()) else 503)


def database_answers(alias: str) -> bool:
    try:
        with connections[alias].cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except Exception:  # any driver's or pooler's failure means not ready
        logger.warning("readiness: database %r does not answer", alias, exc_info=True)
        return False


def cache_answers() -> bool:
    """A write read back under a key of this probe's own, so probes from several servers never race."""
    token = uuid.uuid4().hex
    key = f"murmur:ready:{token}"
    try:
        cache.set(key, token, PROBE_TIMEOUT)
        answered = cache.get(key) == token
        cache.delete(key)
        return answered
    except Exception:  # redis-py, the database cache and memcached raise unrelated types
        logger.warning("readiness: the cache does not answer", exc_info=True)
        return False
