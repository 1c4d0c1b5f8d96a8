"""What every results page shares: the estimate and bands the reader asked for, and the page's ETag."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.messages import get_messages
from django.core.cache import cache
from django.http import HttpResponse, HttpResponseNotModified
from django.middleware.csrf import get_token
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.utils.translation import get_language

from surveys.http import HtmxHttpRequest
from surveys.models import Survey
from surveys.results.cards import short_digest
from surveys.results.estimates import BAND_CHOICES, ESTIMATE_KINDS
from surveys.results.stamps import Stamp

#: Part of every results page's ETag: bump when the pages' templates change what they show.
PAGE_VERSION = 2


def estimate_kind(request: HtmxHttpRequest) -> str:
    chosen = request.GET.get("estimate", "consistent")
    return chosen if chosen in ESTIMATE_KINDS else "consistent"


def band_kind(request: HtmxHttpRequest) -> str:
    """ "option" (each option's own 95 % band, the default) or "joint" (all options at once)."""
    bands = request.GET.get("bands", "option")
    return bands if bands in BAND_CHOICES else "option"


def page_etag(request: HtmxHttpRequest, survey: Survey, stamp: Stamp, *parts: object) -> str:
    """An ETag for a results page: it changes whenever anything the page shows can change.

    The tallies' signature stands for every number on the page (each submission changes it);
    the rest is what else the page prints: the survey's row, its questions' structure (their
    words, randomizations and sample: :mod:`surveys.results.stamps`), the hourly counts, the
    estimate kind, language, viewer and CSRF cookie (forms in the header carry its token). There
    is no Last-Modified: the server keeps no time finer than the hour.
    """
    return f'"{_page_digest(request, survey, stamp, parts, csrf=True)}"'


def _page_digest(request: HtmxHttpRequest, survey: Survey, stamp: Stamp, parts: tuple[object, ...], csrf: bool) -> str:
    survey_fields = (
        *(survey.title, survey.description, survey.status, survey.public_results, str(survey.closes_at)),
        *(survey.owner_id, survey.workspace_id, survey.series_id, survey.round_number, survey.revision),
    )
    cookie = request.COOKIES.get(settings.CSRF_COOKIE_NAME, "") if csrf else None
    viewer = (request.user.pk, cookie, bool(request.htmx))
    words = (get_language(), timezone.get_current_timezone_name())
    material = repr((PAGE_VERSION, stamp.signature, stamp.words, survey_fields, words, viewer, parts))
    return short_digest(material)


#: Stands for the viewer's CSRF token in a page rendered once for every viewer (never a token itself).
CSRF_PLACEHOLDER = "murmur-shared-page-csrf-token"
#: Stands for the snapshot's freshness note (its age and the responses it lacks change by the second).
FRESHNESS_PLACEHOLDER = "<!-- murmur-shared-page-freshness -->"
FRESHNESS = "surveys/_freshness.html"
#: How long a shared rendering is kept (a new snapshot names a new one anyway).
SHARED_PAGE_SECONDS = 600


def rendered_once(
    request: HtmxHttpRequest, survey: Survey, stamp: Stamp, parts: tuple[object, ...], render_page: Any
) -> HttpResponse:
    """The page rendered once per snapshot, words, language, viewer and ``parts`` (the cache), with this
    viewer's CSRF token and the snapshot's freshness note put in: a results page under live writes
    is rendered by one request per snapshot, not by every reader. ``render_page(csrf_token,
    freshness)`` renders with the token given, and ``freshness`` (the context's ``freshness``) in
    place of the freshness note.

    Pages with messages to show are rendered for their reader alone.
    """
    if len(get_messages(request)):
        response: HttpResponse = render_page(get_token(request), None)
        return response
    key = f"murmur:page:{_page_digest(request, survey, stamp, parts, csrf=False)}"
    found = cache.get(key)
    if found is None:
        response = render_page(CSRF_PLACEHOLDER, FRESHNESS_PLACEHOLDER)
        if response.status_code != 200 or response.streaming:
            return response
        found = (response.content, response["Content-Type"])
        cache.set(key, found, SHARED_PAGE_SECONDS)
    content, content_type = found
    content = content.replace(CSRF_PLACEHOLDER.encode(), get_token(request).encode())
    if FRESHNESS_PLACEHOLDER.encode() in content:
        note = render_to_string(FRESHNESS, {"snapshot": stamp.snapshot}).encode()
        content = content.replace(FRESHNESS_PLACEHOLDER.encode(), note)
    return HttpResponse(content, content_type=content_type)


def conditional(request: HtmxHttpRequest, etag: str, render_page: Any) -> HttpResponse:
    """304 when the client already has this ETag's page, else the page with its ETag."""
    if etag in _if_none_match(request) and not len(get_messages(request)):
        response: HttpResponse = HttpResponseNotModified()
    else:
        response = render_page()
    response["ETag"] = etag
    patch_vary_headers(response, ["Cookie", "Accept-Language", "HX-Request"])
    return response


def _if_none_match(request: HtmxHttpRequest) -> list[str]:
    header = request.headers.get("If-None-Match", "")
    return [tag.strip().removeprefix("W/") for tag in header.split(",") if tag.strip()]
