"""Auditors' view: a survey's randomization parameters and their history, public and read-only.

Anyone with the share link may see, for every question, the mechanism, its parameters, the
exact client spec the answer page sends and every version the question's randomization has
had (retired or not, with the hour each was created, nothing finer), and the digest of the specs
in force that the answer page also shows (:mod:`surveys.transparency`). A draft's page is not
public: only whoever may read its results sees it, marked as a draft and kept out of shared caches
(:func:`surveys.access.get_survey_for_transparency`).
"""

from __future__ import annotations

import json
import math

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_GET

from ldp.sampling import submission_epsilon
from surveys import languages
from surveys.access import get_survey_for_transparency
from surveys.models import Survey
from surveys.sampling import pool_of
from surveys.series.rounds import permanent_epsilon, rounds_of
from surveys.transparency import skip_words, survey_record


@require_GET
def transparency(request: HttpRequest, slug: str) -> HttpResponse:
    survey = get_survey_for_transparency(request.user, slug)
    record = survey_record(survey)
    # In the language the answer page was read in (its link's ?lang=): words only, the specs are the same.
    reading = languages.reading(request, survey)
    languages.localize(survey, [q.question for q in record.questions], reading.language)
    # A recurring survey's rounds so far: over them, a question randomized afresh each round adds up.
    round_count = len(rounds_of(survey)) if survey.series_id is not None else 1
    rows = [
        {
            "record": q,
            "spec_json": json.dumps(q.current, indent=1, sort_keys=True) if q.current is not None else "",
            # A recurring survey's memoized question: its bound over all rounds (epsilon_inf).
            "epsilon_infinity": (
                permanent_epsilon(q.current["spec"], q.current["memo"]) if q.current and "memo" in q.current else None
            ),
            "epsilon_over_rounds": q.question.epsilon * round_count,
            "skip_words": skip_words(q),
        }
        for q in record.questions
    ]
    pool = pool_of(survey, [q.question.pk for q in record.questions])
    pooled = set(pool.questions) if pool else set()
    in_force = [q for q in record.questions if any(v.in_force and math.isfinite(v.epsilon) for v in q.versions)]
    context = {
        "survey": survey,
        "round_count": round_count,
        "rows": rows,
        "digest": record.digest,
        # Questions asked directly (epsilon infinite) are not randomized: listed as such, not summed;
        # of a sampled pool only the m largest count (surveys.sampling).
        "total_epsilon": submission_epsilon(
            [v.epsilon for q in in_force if q.question.pk not in pooled for v in q.versions if v.in_force],
            [v.epsilon for q in in_force if q.question.pk in pooled for v in q.versions if v.in_force],
            min(pool.m, len(pooled)) if pool else 1,
        ),
        "pool": pool,
        "pooled_epsilon": max(
            (v.epsilon for q in in_force if q.question.pk in pooled for v in q.versions if v.in_force), default=None
        ),
    }
    response = languages.render_in(reading, lambda: render(request, "surveys/transparency.html", context))
    if survey.status == Survey.Status.DRAFT:  # its readers' page only: no shared cache may keep it
        patch_cache_control(response, private=True, no_store=True)
    return response
