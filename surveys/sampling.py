"""A survey's question sampling: "ask each respondent m of these q questions" (RS+FD).

Stored on the survey (:class:`QuestionSample`): the pool's question ids and m. Each respondent's
browser draws m of the pool (static/ldp/sampling.js), answers those at the per-question epsilon
the plan gives them, and sends a fake answer's report for each of the others (Arcolezi et al.,
CIKM 2021; :mod:`ldp.sampling`). So the whole submission is epsilon-LDP for the survey's stated
total, which counts m pooled questions (:func:`ldp.sampling.submission_epsilon`), and each
pooled question's estimate is corrected for the fakes (:func:`ldp.sampling.sampled_estimate`).

Frozen, like a question's randomization, once the survey has reports: the reports' meaning
depends on m / q.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.db import models

#: The smallest pool: sampling 1 of 1 would be no sampling.
MIN_POOL = 2


class QuestionSample(models.Model):
    """Ask each respondent ``size`` (m) of the ``questions`` (the pool, q question ids)."""

    survey = models.OneToOneField("surveys.Survey", on_delete=models.CASCADE, related_name="question_sample")
    size = models.PositiveSmallIntegerField()
    questions = models.JSONField(default=list)

    def __str__(self) -> str:
        return f"{self.size} of {len(self.questions)} ({self.survey_id})"


@dataclass(frozen=True)
class Pool:
    """The survey's sampled questions (ids, in the survey's order) and m."""

    questions: tuple[int, ...]
    m: int

    @property
    def q(self) -> int:
        return len(self.questions)

    @property
    def rate(self) -> float:
        """The share of respondents who really answer each pooled question: m / q."""
        return self.m / self.q

    def __contains__(self, question_id: object) -> bool:
        return question_id in self.questions

    def as_json(self) -> dict[str, Any]:
        """What the answer page's browser samples from (static/ldp/sampling.js)."""
        return {"questions": list(self.questions), "m": self.m}


def pool_of(survey: Any, question_ids: list[int] | None = None) -> Pool | None:
    """The survey's pool, with questions that are gone left out; None when it samples nothing (or the
    pool no longer holds more than m questions)."""
    try:
        stored = survey.question_sample
    except ObjectDoesNotExist:
        return None
    if question_ids is None:
        question_ids = list(survey.questions.values_list("pk", flat=True))
    present = set(question_ids)
    pooled = tuple(q for q in question_ids if q in set(stored.questions) and q in present)
    if len(pooled) < MIN_POOL or not 1 <= stored.size < len(pooled):
        return None
    return Pool(pooled, stored.size)
