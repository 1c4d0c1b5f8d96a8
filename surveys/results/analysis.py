"""Regression and weighting of a randomized question on questions asked directly: the analysis
page's and its export's data (no HTTP here).

A respondent's submission holds the randomized report of the outcome and the direct answers, so
they are joined by submission (complete cases only). The science is :mod:`ldp.regression`
(maximum-likelihood multinomial logit of the true answer on the direct answers' dummies through the
mechanism's channel; van den Hout and van der Heijden 2007, Blair, Imai and Zhou 2015) and
:mod:`ldp.weighting` (post-stratification, Holt and Smith 1979; raking, Deming and Stephan 1940).

Small groups: a direct answer is not randomized, so no group of fewer than
:data:`~surveys.kinds.designs.SMALL_GROUP` respondents is shown. Respondents whose answer to a
chosen direct question falls in a smaller group are left out (repeatedly, until every group left
is large enough); predicted shares are shown only for combinations of direct answers with at
least that many respondents; the number left out is never shown (only that some groups were), nor
the exact n then (:attr:`Data.shown_n`), which the survey's total would give away.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.utils.translation import gettext as _

from ldp.regression import dummies, fit_regression
from ldp.weighting import post_stratify, raked_estimate
from surveys.kinds.designs import SMALL_GROUP, is_direct, regression_channel
from surveys.models import Question, Randomization, Report, Survey
from surveys.results import charts


class AnalysisError(ValueError):
    """Why an analysis cannot be made from these choices (a translated sentence)."""


@dataclass(frozen=True)
class Choices:
    """What the organizer may pick: randomized outcomes (one-option reports) and direct questions."""

    outcomes: list[Question]
    covariates: list[Question]


def latest_with_reports(question: Question) -> Randomization | None:
    """The question's newest randomization that has reports: one channel for every report analysed."""
    return question.randomizations.filter(reports__isnull=False).order_by("-version").distinct().first()


def choices(survey: Survey) -> Choices:
    outcomes, covariates = [], []
    for question in survey.questions.all():
        randomization = latest_with_reports(question)
        if randomization is None:
            continue
        if is_direct(randomization.mechanism):
            covariates.append(question)
        elif regression_channel(randomization.build_mechanism()) is not None:
            outcomes.append(question)
    return Choices(outcomes, covariates)


@dataclass
class Data:
    """The complete cases: each respondent's outcome report and direct answers (re-coded to the
    groups kept, in the question's option order)."""

    outcome: Question
    mechanism: Any
    reports: np.ndarray
    covariates: list[Question]
    answers: np.ndarray
    """(n, q): column j is the index in ``levels[j]`` of the respondent's answer to covariate j."""
    levels: list[list[int]]
    """Per covariate, the option indices kept (groups of at least SMALL_GROUP)."""
    left_out: bool = False
    """Whether respondents in small groups were left out."""

    @property
    def n(self) -> int:
        return int(self.reports.size)

    @property
    def shown_n(self) -> int:
        """The n a page or export states: exact, or once small groups were left out, rounded down to
        a multiple of SMALL_GROUP, so that the total minus it does not tell their size."""
        return self.n if not self.left_out else self.n // SMALL_GROUP * SMALL_GROUP

    def level_label(self, j: int, level: int) -> str:
        return str(self.covariates[j].options[self.levels[j][level]])


def collect(outcome: Question, covariates: list[Question]) -> Data:
    """Join the outcome's reports with the direct answers by submission; drop small groups."""
    randomization = latest_with_reports(outcome)
    if randomization is None:
        raise AnalysisError("no reports")
    mechanism = randomization.build_mechanism()
    survey_id = outcome.survey_id  # every read names the survey: one partition on PostgreSQL
    rows = Report.objects.filter(survey_id=survey_id, randomization=randomization).values_list(
        "submission_id", "packed"
    )
    outcome_of = {sid: bytes(packed)[0] for sid, packed in rows}
    columns = []
    for question in covariates:
        direct = Report.objects.filter(survey_id=survey_id, randomization=latest_with_reports(question))
        columns.append({sid: bytes(packed)[0] for sid, packed in direct.values_list("submission_id", "packed")})
    submissions = sorted(sid for sid in outcome_of if all(sid in column for column in columns))
    reports = np.array([outcome_of[sid] for sid in submissions], dtype=np.int64)
    answers = np.array([[column[sid] for column in columns] for sid in submissions], dtype=np.int64).reshape(
        len(submissions), len(columns)
    )
    keep = np.ones(len(submissions), dtype=bool)
    while True:  # drop groups below the threshold until every group left is large enough
        small = np.zeros_like(keep)
        for j in range(answers.shape[1]):
            counts = np.bincount(answers[keep, j], minlength=covariates[j].k)
            small |= keep & (counts[answers[:, j]] < SMALL_GROUP)
        if not small.any():
            break
        keep &= ~small
    levels = [sorted(set(answers[keep, j].tolist())) for j in range(answers.shape[1])]
    recoded = (
        np.column_stack([np.searchsorted(levels[j], answers[keep, j]) for j in range(answers.shape[1])])
        if answers.shape[1]
        else np.zeros((int(keep.sum()), 0), dtype=np.int64)
    )
    return Data(outcome, mechanism, reports[keep], covariates, recoded.astype(np.int64), levels, bool((~keep).any()))


@dataclass(frozen=True)
class Coefficient:
    name: str
    option: str
    estimate: float
    standard_error: float
    low: float
    high: float


@dataclass(frozen=True)
class GroupShare:
    group: str
    option: str
    share: float
    standard_error: float
    low: float
    high: float


@dataclass
class RegressionTable:
    n: int
    baseline: str
    coefficients: list[Coefficient]
    predicted: list[GroupShare]
    converged: bool
    log_likelihood: float
    options: list[str] = field(default_factory=list)
    chart: str = ""
    """SVG bars of the predicted share of the outcome's first option per group, with 95 % intervals."""


def design_matrix(data: Data) -> tuple[np.ndarray, list[str]]:
    """Intercept and, per direct question, the dummies of its kept groups but the first (the reference)."""
    blocks, names = [np.ones((data.n, 1))], [_("(intercept)")]
    for j, question in enumerate(data.covariates):
        kept = len(data.levels[j])
        if kept < 2:
            continue
        blocks.append(dummies(data.answers[:, j], kept))
        reference = data.level_label(j, 0)
        names += [f"{question.text}: {data.level_label(j, level)} / {reference}" for level in range(1, kept)]
    return np.hstack(blocks), names


def regression(data: Data) -> RegressionTable:
    """:func:`ldp.regression.fit_regression` of the outcome on the direct questions' dummies; the
    baseline is the outcome's last option (for yes / no: the log-odds of "yes")."""
    if data.n < SMALL_GROUP:
        raise AnalysisError("too few")
    x, names = design_matrix(data)
    try:
        fit = fit_regression(data.mechanism, data.reports, x)
    except ValueError as error:
        raise AnalysisError(str(error)) from None
    options = list(data.outcome.options)
    free = [v for v in range(len(options)) if v != fit.baseline]
    low, high = fit.confidence_interval()
    coefficients = [
        Coefficient(
            name,
            options[v],
            float(fit.coefficients[p, c]),
            float(fit.standard_errors[p, c]),
            float(low[p, c]),
            float(high[p, c]),
        )
        for p, name in enumerate(names)
        for c, v in enumerate(free)
    ]
    cells, index, counts = np.unique(data.answers, axis=0, return_inverse=True, return_counts=True)
    predicted = []
    shown = [c for c in range(len(cells)) if counts[c] >= SMALL_GROUP]
    if shown:
        rows = np.array([x[np.flatnonzero(index.ravel() == c)[0]] for c in shown])  # each shown cell's row of x
        shares, errors = fit.predict(rows)
        for r, c in enumerate(shown):
            group = " · ".join(data.level_label(j, int(level)) for j, level in enumerate(cells[c])) or "—"
            for v in free if len(options) == 2 else range(len(options)):
                share, se = float(shares[r, v]), float(errors[r, v])
                predicted.append(GroupShare(group, options[v], share, se, share - 1.96 * se, share + 1.96 * se))
    first = [g for g in predicted if g.option == options[0]]
    chart = (
        charts.estimate_bars(
            [g.group for g in first], *(np.array([getattr(g, a) for g in first]) for a in ("share", "low", "high"))
        )
        if first
        else ""
    )
    return RegressionTable(
        chart=chart,
        n=data.n,
        baseline=options[fit.baseline],
        coefficients=coefficients,
        predicted=predicted,
        converged=fit.converged,
        log_likelihood=fit.log_likelihood,
        options=options,
    )


@dataclass(frozen=True)
class WeightedShare:
    option: str
    unweighted: float
    unweighted_se: float
    weighted: float
    weighted_se: float

    @property
    def unweighted_low(self) -> float:
        return self.unweighted - 1.96 * self.unweighted_se

    @property
    def unweighted_high(self) -> float:
        return self.unweighted + 1.96 * self.unweighted_se

    @property
    def weighted_low(self) -> float:
        return self.weighted - 1.96 * self.weighted_se

    @property
    def weighted_high(self) -> float:
        return self.weighted + 1.96 * self.weighted_se


@dataclass
class WeightingTable:
    method: str
    """"post-stratified" (one direct question) or "raked" (several)."""
    n: int
    shares: list[WeightedShare]
    margins: list[list[float]]
    """The population margins used, per direct question over its kept groups (rescaled to sum to 1)."""
    rescaled: bool


def kept_margins(data: Data, margins: list[list[float]]) -> tuple[list[np.ndarray], bool]:
    """Each direct question's population shares (in the question's options) restricted to its kept
    groups and rescaled to 1; whether any share was dropped."""
    restricted, rescaled = [], False
    for j, margin in enumerate(margins):
        full = np.asarray(margin, dtype=float)
        if full.size != data.covariates[j].k or np.any(full < 0) or not full.sum() > 0:
            raise AnalysisError("margins")
        kept = full[data.levels[j]]
        rescaled |= bool(not math.isclose(kept.sum(), full.sum()))
        if not kept.sum() > 0:
            raise AnalysisError("margins")
        restricted.append(kept / kept.sum())
    return restricted, rescaled


def weighting(data: Data, margins: list[list[float]]) -> WeightingTable:
    """The outcome's shares weighted to the direct questions' population margins, beside the
    unweighted moment estimate (one stratum: the same formula, so the bands compare)."""
    if data.n < SMALL_GROUP:
        raise AnalysisError("too few")
    targets, rescaled = kept_margins(data, margins)
    unweighted = post_stratify(data.mechanism, data.reports, np.zeros(data.n, dtype=np.int64), [1.0])
    try:
        if len(targets) == 1:
            weighted = post_stratify(data.mechanism, data.reports, data.answers[:, 0], targets[0])
            method = "post-stratified"
        else:
            weighted = raked_estimate(data.mechanism, data.reports, data.answers, targets)
            method = "raked"
    except ValueError as error:
        raise AnalysisError(str(error)) from None
    shares = [
        WeightedShare(
            option,
            float(unweighted.proportions[v]),
            float(unweighted.standard_errors[v]),
            float(weighted.proportions[v]),
            float(weighted.standard_errors[v]),
        )
        for v, option in enumerate(data.outcome.options)
    ]
    return WeightingTable(method, data.n, shares, [t.tolist() for t in targets], rescaled)


def record(data: Data, table: RegressionTable | None, weights: WeightingTable | None) -> dict[str, Any]:
    """The analysis export: what was analysed, the regression and the weighting (no small group)."""
    r = latest_with_reports(data.outcome)
    result: dict[str, Any] = {
        "outcome": {
            "question_id": data.outcome.pk,
            "question": data.outcome.text,
            "options": data.outcome.options,
            "mechanism": r.mechanism if r else None,
            "epsilon": r.epsilon if r else None,
            "params": r.params if r else None,
            "version": r.version if r else None,
        },
        "covariates": [
            {"question_id": q.pk, "question": q.text, "groups": [q.options[i] for i in data.levels[j]]}
            for j, q in enumerate(data.covariates)
        ],
        "minimum_group": SMALL_GROUP,
        "small_groups_left_out": data.left_out,
        "n": None if data.left_out else data.n,
        "n_at_least": data.shown_n,
        "level": 0.95,
    }
    if table is not None:
        result["regression"] = {
            "method": "maximum likelihood, multinomial logit through the mechanism's channel",
            "baseline": table.baseline,
            "converged": table.converged,
            "log_likelihood": table.log_likelihood,
            "coefficients": [vars(c) for c in table.coefficients],
            "predicted": [vars(g) for g in table.predicted],
        }
    if weights is not None:
        result["weighting"] = {
            "method": weights.method,
            "margins": weights.margins,
            "margins_rescaled": weights.rescaled,
            "shares": [
                vars(s)
                | {
                    "unweighted_low": s.unweighted_low,
                    "unweighted_high": s.unweighted_high,
                    "weighted_low": s.weighted_low,
                    "weighted_high": s.weighted_high,
                }
                for s in weights.shares
            ],
        }
    return result
