"""Each person's own time zone: organizers enter and read dates in it, respondents read them in theirs.

The zone comes from the browser (``static/surveys/timezone.js`` stores the IANA name that
``Intl.DateTimeFormat().resolvedOptions().timeZone`` reports in the :data:`COOKIE` cookie), else
from the language (Korean: Asia/Seoul), else ``settings.TIME_ZONE``. Django then shows and parses
form dates in the active zone (``django.utils.timezone.activate``). The answer page never sets
the cookie; it formats its close time in the browser instead.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import timezone, translation

COOKIE = "murmur_tz"
#: A language's usual zone, for a first visit before the browser has said which zone it is in.
LANGUAGE_ZONES = {"ko": "Asia/Seoul"}


@lru_cache(maxsize=1)
def known_zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def zone_for(request: HttpRequest) -> zoneinfo.ZoneInfo:
    """The browser's zone if it sent a known one, else the language's, else the site's."""
    name = request.COOKIES.get(COOKIE, "")
    if name not in known_zones():
        name = LANGUAGE_ZONES.get(translation.get_language() or "", settings.TIME_ZONE)
    return zoneinfo.ZoneInfo(name)


class TimezoneMiddleware:
    """Activate the request's zone (after LocaleMiddleware, which picks the language)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with timezone.override(zone_for(request)):
            return self.get_response(request)
