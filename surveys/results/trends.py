"""Trends of a recurring survey: each question's estimate round by round, and round differences.

Every round is estimated from its own tally (:class:`surveys.results.estimates.SurveyState`) with the
unbiased estimator and its analytic standard error, so a round's 95 % interval is the estimate
± 1.96 standard errors (the dashboard's "unbiased" band). Questions are matched across rounds by
their id in the series (:attr:`~surveys.models.Question.memo_key`).

The difference between two rounds a and b is estimated as b - a with standard error
sqrt(se_a² + se_b²): the variances add because the rounds are treated as independent samples.
Where the same people answer both rounds with memoized reports (RAPPOR's permanent layer), the
two rounds' estimates are positively correlated, the true variance of the difference is smaller,
and the interval is conservative (wider than it needs to be).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import ldp
from ldp.advisor import Z_95
from surveys.kinds import Summary
from surveys.kinds.base import MIN_REPORTS
from surveys.models import Question, Survey
from surveys.results.estimates import QuestionResult, SurveyState


@dataclass(frozen=True)
class RoundEstimate:
    """One round's estimate of a question: a value per label (an option, the mean, a candidate).

    ``unbiased`` is the round's unbiased estimate; :attr:`values`, :attr:`low` and :attr:`high` (what
    is shown) are it and its 95 % interval cut to the feasible ``bounds`` (shares in [0, 1], a mean in
    the question's range: :meth:`surveys.kinds.base.Summary.bounds`), which keeps the coverage.
    """

    round_number: int
    n: int
    unbiased: np.ndarray
    standard_errors: np.ndarray
    bounds: tuple[float, float] = (0.0, 1.0)

    @property
    def values(self) -> np.ndarray:
        return np.clip(self.unbiased, *self.bounds)

    @property
    def low(self) -> np.ndarray:
        return np.clip(self.unbiased - Z_95 * self.standard_errors, *self.bounds)

    @property
    def high(self) -> np.ndarray:
        return np.clip(self.unbiased + Z_95 * self.standard_errors, *self.bounds)


@dataclass(frozen=True)
class DifferenceRow:
    """Round b minus round a, unbiased; it and its band are cut to ± ``span`` (the range's width)."""

    label: str
    unbiased: float
    standard_error: float
    span: float = 1.0

    @property
    def value(self) -> float:
        return min(max(self.unbiased, -self.span), self.span)

    @property
    def low(self) -> float:
        return max(self.unbiased - Z_95 * self.standard_error, -self.span)

    @property
    def high(self) -> float:
        return min(self.unbiased + Z_95 * self.standard_error, self.span)

    @property
    def clear(self) -> bool:
        """The 95 % interval excludes zero."""
        return self.low > 0 or self.high < 0


@dataclass(frozen=True)
class Trend:
    """A question across rounds: its summary ("shares", "mean", "text" or "multi"), labels and estimates."""

    key: str
    question: Question
    summary: str
    """Its summary's name (:attr:`surveys.kinds.base.Summary.name`), for the template."""
    labels: list[str]
    rounds: list[RoundEstimate] = field(default_factory=list)

    percent: bool = True
    """Its values are shares (:attr:`surveys.kinds.base.Summary.percent`); a mean's are in the question's units."""
    queries_candidates: bool = False
    """Its labels are the organizer's candidate strings (:attr:`surveys.kinds.base.Summary.queries_candidates`)."""

    def round(self, number: int) -> RoundEstimate | None:
        return next((r for r in self.rounds if r.round_number == number), None)

    def difference(self, a: int, b: int) -> list[DifferenceRow]:
        """Round b minus round a per label, with independent rounds' variances added (empty if either is missing)."""
        first, second = self.round(a), self.round(b)
        if first is None or second is None:
            return []
        values = second.unbiased - first.unbiased
        errors = np.sqrt(first.standard_errors**2 + second.standard_errors**2)
        span = second.bounds[1] - second.bounds[0]
        return [
            DifferenceRow(label, float(v), float(e), span)
            for label, v, e in zip(self.labels, values, errors, strict=True)
        ]


def round_estimate(result: QuestionResult, labels: list[str], tally: ldp.Tally) -> RoundEstimate | None:
    """The round's unbiased estimate, standard errors and feasible bounds, or None below MIN_REPORTS reports.

    A round with few reports is still drawn, as the results card's "few reports" view is: its band is
    wide, and the page cuts it to what is possible (shares 0-100 %, a mean within the question's range),
    so a small group's trend says what can honestly be said instead of nothing."""
    if result.n < MIN_REPORTS:
        return None
    found = result.summary.round_values(result, labels, tally)
    if found is None:
        return None
    values, standard_errors = found
    number = result.question.survey.round_number or 1
    return RoundEstimate(number, result.n, values, standard_errors, result.summary.bounds(result))


def series_trends(rounds: list[Survey]) -> tuple[list[Trend], str]:
    """Per question of the latest round, its estimates in every round that has them; and a signature
    of every round's tallies (for ETags: it changes whenever any round's numbers do)."""
    states = [SurveyState.read(survey) for survey in rounds]
    signature = ":".join(state.signature for state in states)
    latest = states[-1]
    trends = []
    for question in latest.questions:
        shown = latest.results(question)
        if not shown:
            continue  # not asked on its own (one of a declared pair's two questions)
        summary: Summary = shown[0].summary
        labels = summary.trend_labels(question)
        estimates = []
        for state in states:
            match = next((q for q in state.questions if q.memo_key == question.memo_key), None)
            if match is None:
                continue
            match.survey = state.survey  # already loaded: no query per question
            result = state.results(match)[0]
            if result.summary is not summary or (summary.per_option and match.options != question.options):
                continue  # randomized differently: not comparable
            estimate = round_estimate(result, labels, state.tallies[result.randomization.pk])
            if estimate is not None:
                estimates.append(estimate)
        trends.append(
            Trend(
                question.memo_key,
                question,
                summary.name,
                labels,
                estimates,
                summary.percent,
                summary.queries_candidates,
            )
        )
    return trends, signature
