"""The browser's translations (our djangojs catalog): rendered once per language and process, and
cached by browsers under a URL that names both the language and the catalog's version.

Django's ``JavaScriptCatalog`` reads the catalogs and renders its script on every request (40–75 ms
here); every respondent's answer page loads it. The catalog only changes with the compiled ``.mo``
files, which change only with a deploy (a new process), so one rendering per language serves the
process. :func:`catalog_src` gives the pages ``/jsi18n/?lang=ko&v=<version>``: a URL that determines
its content, so browsers keep it for a year (``immutable``); a request without the current version
(an older page, or none given) is answered with the current catalog, an ETag and no caching.
"""

from __future__ import annotations

import hashlib

from django.http import HttpRequest, HttpResponse, HttpResponseBase, HttpResponseNotModified
from django.urls import reverse
from django.utils import translation
from django.utils.cache import patch_cache_control
from django.utils.http import urlencode
from django.views.i18n import JavaScriptCatalog

from surveys import languages

#: The query parameter naming the catalog's version in :func:`catalog_src`.
VERSION_PARAMETER = "v"
YEAR = 365 * 24 * 3600

_rendered: dict[str, tuple[bytes, str]] = {}


def rendered(language: str) -> tuple[bytes, str]:
    """The catalog's script in ``language`` and its version (a digest of the script)."""
    hit = _rendered.get(language)
    if hit is None:
        request = HttpRequest()
        request.method = "GET"
        with translation.override(language):
            response = JavaScriptCatalog.as_view(packages=["surveys"])(request)
        assert isinstance(response, HttpResponse)  # rendered in full, never streamed
        body = response.content
        hit = _rendered[language] = (body, hashlib.sha256(body).hexdigest()[:16])
    return hit


def requested_language(request: HttpRequest) -> str:
    """``?lang=`` when Murmur speaks it (an answer page read in a survey's other language), else the
    request's language."""
    chosen = languages.chrome_language(request.GET.get(languages.LANGUAGE_PARAMETER))
    return chosen or translation.get_language()


def catalog_src(language: str | None = None) -> str:
    """The catalog's URL for ``language`` (default: the active one), with its version."""
    language = language or translation.get_language()
    _body, version = rendered(language)
    query = urlencode({languages.LANGUAGE_PARAMETER: language, VERSION_PARAMETER: version})
    return f"{reverse('javascript-catalog')}?{query}"


def javascript_catalog(request: HttpRequest) -> HttpResponseBase:
    """The catalog as a same-origin script defining ``gettext()`` (see the module's docstring)."""
    body, version = rendered(requested_language(request))
    etag = f'"{version}"'
    if request.headers.get("If-None-Match") == etag:
        response: HttpResponseBase = HttpResponseNotModified()
    else:
        response = HttpResponse(body, content_type='text/javascript; charset="utf-8"')
    response["ETag"] = etag
    if request.GET.get(VERSION_PARAMETER) == version:
        patch_cache_control(response, public=True, max_age=YEAR, immutable=True)
    else:
        patch_cache_control(response, no_cache=True)
    return response
