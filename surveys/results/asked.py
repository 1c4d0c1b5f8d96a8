"""The note on a branched question's results card: who was asked it, and what its shares count.

A question shown only when an earlier answer meets a condition (:mod:`ldp.branching`) is answered by
those on that path; everyone else sends a stand-in answer's report. Its card's shares count every
respondent, stand-ins included, so the card says so, with the share who were asked, estimated from
the deciding question's own shares (the sum over the options that show it, with its 95 % interval
from their covariance), and links to the cross-tab, where the shares among those asked are
(:func:`ldp.branching.among_asked`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from django.urls import reverse

from ldp.advisor import Z_95
from surveys.logic import conditions_of
from surveys.models import Question
from surveys.results.estimates import SurveyState


def asked_note(state: SurveyState, question: Question) -> dict[str, Any] | None:
    """What the card of a question with a condition says (None without one): the deciding question,
    the answers that show it, the share asked with its band (None where the deciding question's own
    shares cannot give it: a range condition, or a decider shown only on some paths itself), and the
    cross-tab's link."""
    conditions = conditions_of(state.questions)
    condition = conditions.get(question.pk)
    if condition is None:
        return None
    decider = next(q for q in state.questions if q.pk == condition.question)
    url = reverse("survey_crosstab", args=[state.survey.pk]) + f"?first={decider.pk}&second={question.pk}"
    note: dict[str, Any] = {"decider": decider, "url": url, "answers": [], "asked": None, "band": None}
    if condition.operator != "in":
        return note
    note["answers"] = [decider.options[i] for i in condition.values if i < len(decider.options)]
    results = state.results(decider)
    estimate = results[0].unbiased if results else None
    if decider.pk in conditions or estimate is None or not results[0].enough:
        return note
    rows = [i for i in condition.values if i < len(estimate.proportions)]
    asked = float(np.sum(estimate.proportions[rows]))
    error = math.sqrt(max(float(np.sum(estimate.covariance[np.ix_(rows, rows)])), 0.0))
    note["asked"] = min(max(asked, 0.0), 1.0)
    note["band"] = (max(asked - Z_95 * error, 0.0), min(asked + Z_95 * error, 1.0))
    return note
