"""A survey's answer page as its respondents will see it, for its owner, storing nothing.

The preview randomizes in the browser exactly as the answer page does (same template, same
``respond.js``), but its reports go to :func:`preview_check`, which validates them against the
question's *current* parameters and answers with the receipt a respondent would get, writing
nothing: no submission, report, tally or randomization version (a draft has none yet).
"""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET, require_POST

from surveys import languages
from surveys.access import get_survey_for_owner
from surveys.models import Randomization, Survey, asked_jointly
from surveys.responding.receipts import receipt_rows
from surveys.responding.submissions import InForce, SubmissionError, parse_items
from surveys.views.respond import assemble_items, read_json_body, specs_context

#: The version a preview's unsaved randomizations carry (real versions start at 1).
PREVIEW_VERSION = 0


def preview_randomizations(survey: Survey) -> dict[int, Randomization]:
    """Per question id, an unsaved randomization of its current parameters."""
    randomizations = {}
    questions = list(survey.questions.all())
    joint = asked_jointly(questions)
    for question in questions:
        if question.pk in joint:
            continue  # answered within its declared pair's report
        mechanism, k, epsilon, params = question.randomization_key()
        randomizations[question.pk] = Randomization(
            question=question, version=PREVIEW_VERSION, mechanism=mechanism, k=k, epsilon=epsilon, params=params
        )
    return randomizations


@login_required
@require_GET
@ensure_csrf_cookie
def survey_preview(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = get_survey_for_owner(request.user, survey_id)
    randomizations = preview_randomizations(survey)
    items = assemble_items(survey, lambda question: randomizations[question.pk])
    reading = languages.reading(request, survey)
    languages.localize(survey, [item.question for item in items], reading.language)
    context = {
        "reading": reading,
        "survey": survey,
        "preview": True,
        "accepting": bool(items),
        "already_responded": False,
        **specs_context(survey, items),
        "token": "preview",
    }
    return languages.render_in(reading, lambda: render(request, "surveys/respond.html", context))


@login_required
@require_POST
def preview_check(request: HttpRequest, survey_id: int) -> HttpResponse:
    """Validate a preview's reports as the submit endpoint would, and store nothing."""
    survey = get_survey_for_owner(request.user, survey_id)
    try:
        payload = json.loads(read_json_body(request))
        if not isinstance(payload, dict) or not isinstance(payload.get("reports"), list) or not payload["reports"]:
            raise SubmissionError(400, _("Answer at least one question before sending."))
        # Each report is checked; completeness is the submit endpoint's (a preview may try one question).
        reports = parse_items(payload["reports"], InForce(preview_randomizations(survey), 0.0), complete=False)
    except (ValueError, RecursionError):
        return JsonResponse({"error": _("The submission is not valid JSON.")}, status=400)
    except SubmissionError as error:
        return JsonResponse({"error": error.message}, status=error.status)
    reading = languages.reading(request, survey)
    languages.localize(None, [r.question for r in reports], reading.language)
    return languages.render_in(
        reading, lambda: JsonResponse({"receipt": receipt_rows(reports, version=PREVIEW_VERSION), "preview": True})
    )
