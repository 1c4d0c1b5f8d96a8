"""Respondents' views: the answer page at the share link."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from surveys.access import get_survey_by_share_slug


@require_GET
def respond(request: HttpRequest, slug: str) -> HttpResponse:
    survey = get_survey_by_share_slug(slug)
    return render(request, "surveys/respond.html", {"survey": survey, "accepting": survey.accepting_responses()})
