"""The organizer API's downloads, by file name, and what each needs: the organizer pages' own export
views, served by ``…/exports/{name}`` (:mod:`surveys.api.results`) and linked from each survey the
token may read (:func:`links`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.urls import reverse

from surveys.access import Need
from surveys.models import Survey
from surveys.views import exports as export_views
from surveys.views.stats_exports import FORMATS as STATS_FORMATS
from surveys.views.stats_exports import stats_export

EXPORTS: dict[str, Callable[..., HttpResponseBase]] = {
    **{f"estimates.{fmt}": partial(export_views.export_estimates, fmt=fmt) for fmt in ("csv", "json")},
    **{f"reports.{fmt}": partial(export_views.export_reports, fmt=fmt) for fmt in ("csv", "json")},
    **{name: partial(stats_export, name=name) for name in STATS_FORMATS},
}
#: What each download needs, as on the pages: estimates are results (``view``, viewers too); the raw
#: reports and the files made from them are record-level (``export``: not for viewers).
EXPORT_NEEDS: dict[str, Need] = {name: "view" if name.startswith("estimates.") else "export" for name in EXPORTS}


def links(request: HttpRequest, survey: Survey, granted: Iterable[str]) -> dict[str, str]:
    """The survey's downloads that whoever holds ``granted`` may fetch, by file name, as absolute URLs
    (a viewer's hold the estimates only)."""
    granted = set(granted)
    return {
        name: request.build_absolute_uri(reverse("api-v1:export", kwargs={"survey_id": survey.pk, "name": name}))
        for name, need in EXPORT_NEEDS.items()
        if need in granted
    }
