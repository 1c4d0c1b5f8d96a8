"""The app's URLs plus a bare baseline view, for the submit benchmark only (never deployed).

The baseline stores what a submission stores, one submission row and one report row per
question in one transaction, with no validation, no tallies and no counters: the cost of the
rows themselves behind the same gunicorn, middleware and PostgreSQL.
"""

from __future__ import annotations

import json

from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import include, path

from surveys.models import Randomization, Report, Submission, Survey

#: slug -> (survey id, {question id: randomization id}), read once per process.
_TARGETS: dict[str, tuple[int, dict[int, int]]] = {}


def _target(slug: str) -> tuple[int, dict[int, int]]:
    if slug not in _TARGETS:
        survey = Survey.objects.get(slug=slug)
        rows = Randomization.objects.filter(question__survey=survey, retired=False).values_list("question_id", "pk")
        _TARGETS[slug] = (survey.pk, dict(rows))
    return _TARGETS[slug]


def baseline_submit(request: HttpRequest, slug: str) -> HttpResponse:
    survey_id, randomizations = _target(slug)
    payload = json.loads(request.body)
    with transaction.atomic():
        submission = Submission.objects.create(survey_id=survey_id, nonce=payload["token"][-32:])
        Report.objects.bulk_create(
            Report(
                submission=submission,
                question_id=item["question"],
                randomization_id=randomizations[item["question"]],
                packed=json.dumps(item["report"]).encode(),
            )
            for item in payload["reports"]
        )
    return JsonResponse({"stored": len(payload["reports"])}, status=201)


urlpatterns = [
    path("bench/baseline/<str:slug>/", baseline_submit),
    path("", include("config.urls")),
]
