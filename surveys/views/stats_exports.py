"""Downloads for statistics packages: raw reports as SPSS ``.sav`` and Stata ``.dta`` files with
labels (:mod:`surveys.results.stats_exports`), and an R script that re-estimates the survey from
them in base R (:mod:`surveys.results.r_script`). Owners and staff, as the other exports."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from surveys.access import get_survey_for
from surveys.models import Survey
from surveys.results.r_script import r_script
from surveys.results.stats_exports import dta_bytes, sav_bytes

#: Per file name: the bytes, the content type.
FORMATS: dict[str, tuple[Callable[[Survey], bytes], str]] = {
    "reports.sav": (sav_bytes, "application/x-spss-sav"),
    "reports.dta": (dta_bytes, "application/x-stata-dta"),
    "analysis.R": (lambda survey: r_script(survey).encode("utf-8"), "text/plain; charset=utf-8"),
}


def stats_export(request: HttpRequest, survey_id: int, name: str) -> HttpResponse:
    survey = get_survey_for(request.user, survey_id, "export")  # raw reports: not for viewers
    write, content_type = FORMATS[name]
    response = HttpResponse(write(survey), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="survey-{survey.pk}-{name}"'
    return response


@login_required
@require_GET
def export_sav(request: HttpRequest, survey_id: int) -> HttpResponse:
    return stats_export(request, survey_id, "reports.sav")


@login_required
@require_GET
def export_dta(request: HttpRequest, survey_id: int) -> HttpResponse:
    return stats_export(request, survey_id, "reports.dta")


@login_required
@require_GET
def export_r(request: HttpRequest, survey_id: int) -> HttpResponse:
    return stats_export(request, survey_id, "analysis.R")
