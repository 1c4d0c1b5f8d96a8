"""The "mean" summary: the mean of a number in [lo, hi] (the numeric mechanisms, :mod:`ldp.numeric`).

The estimate is the mechanism's unbiased mean, ``counts @ decode`` over n
(:meth:`ldp.numeric.base.NumericMechanism.estimate`), shown once its expected 95 % half-width is at
most :data:`~surveys.kinds.base.MEAN_PRECISION` of the range; beside it, Modips synthetic records
(:mod:`ldp.numeric.modips`, formulas 6.9-6.11).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.core.cache import cache
from django.utils.formats import number_format
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

import ldp
from ldp.advisor import Z_95
from ldp.numeric import modips
from ldp.numeric.advisor import recommend_mean
from surveys.costs import MeanCost, respondents_for
from surveys.kinds.base import (
    CACHE_SECONDS,
    ESTIMATES_VERSION,
    MEAN_PRECISION,
    MIN_REPORTS,
    Estimates,
    Found,
    ResultView,
    Summary,
    common_columns,
    feasible_summary,
    randomization_digest,
    summary_columns,
)
from surveys.responding import tallies
from surveys.results import charts
from surveys.series import memoization
from surveys.templatetags.murmur import number


class MeanSummary(Summary):
    name = "mean"
    takes = "value"
    percent = False
    misfit = gettext_lazy(
        "A mean needs a mechanism for numbers: Laplace, Gaussian, 1BitMean, Duchi et al., Piecewise or Hybrid."
    )
    keeps_built_params = True  # the grid (and delta) are frozen with the range

    def advise(self, data: dict[str, Any], value_range: Any, n: int, recurring: bool) -> tuple[str, dict[str, Any]]:
        """The narrowest worst-case band (:func:`ldp.numeric.advisor.recommend_mean`); in a recurring
        survey 1BitMean where it is memoized (:func:`surveys.series.memoization.memoized_mean`)."""
        (lo, hi), epsilon = value_range, data["epsilon"]
        memoized = memoization.memoized_mean(lo, hi, epsilon, n) if recurring else None
        return (memoized or recommend_mean(lo, hi, epsilon, n).best).mechanism, {}

    def form_params(self, data: dict[str, Any], value_range: Any, previous_seed: int | None) -> dict[str, Any]:
        return {"lo": value_range[0], "hi": value_range[1]}

    def estimates(self, mechanism: Any, tally: ldp.Tally) -> Estimates:
        half_width = Z_95 * mechanism.expected_standard_error(tally.n)
        return Estimates(None, None, half_width, mean=mechanism.estimate(tally))

    def target(self, result: ResultView) -> float:
        """The largest expected half-width of a mean that the page shows: MEAN_PRECISION of the range."""
        return MEAN_PRECISION * (result.mechanism.hi - result.mechanism.lo)

    def enough(self, result: ResultView) -> bool:
        """MIN_REPORTS reports, and an expected half-width within MEAN_PRECISION of the range."""
        return (
            result.mean is not None
            and result.n >= MIN_REPORTS
            and result.expected_half_width is not None
            and result.expected_half_width <= self.target(result)
        )

    def reports_needed(self, result: ResultView) -> int:
        return respondents_for(Z_95 * result.mechanism.expected_standard_error(1), self.target(result), 1)

    def card(self, result: ResultView, kind: str, view: dict[str, Any]) -> None:
        """The mean with its standard error and 95 % interval, drawn on the question's range: in the
        "consistent" view cut to the range (:func:`~surveys.kinds.base.feasible_summary`), else unbiased."""
        value = mean_value(result)
        if kind == "consistent":
            value = feasible_summary(value, self.bounds(result))
        view["mean"] = value
        mechanism, mean, low, high = result.mechanism, value["value"], value["low"], value["high"]
        view["chart"] = charts.cached_chart(
            "mean-chart",
            [randomization_digest(result.randomization), result.digest, kind],
            lambda: charts.mean_interval(mechanism.lo, mechanism.hi, mean, low, high),
        )
        view["synthetic"] = synthetic(result)

    def export_rows(self, result: ResultView) -> Iterator[dict[str, Any]]:
        """The unbiased mean, and in the consistent columns the mean cut to the question's range."""
        yield {**common_columns(result), **summary_columns("mean", mean_value(result), self.bounds(result))}

    def few(self, result: ResultView, view: dict[str, Any]) -> None:
        """The mean's 95 % interval cut to the range (:func:`~surveys.kinds.base.feasible_summary`):
        however wide, it says where the mean lies."""
        if result.mean is not None:
            view["few_mean"] = feasible_summary(mean_value(result), self.bounds(result))

    def bounds(self, result: ResultView) -> tuple[float, float]:
        """The question's range [lo, hi]."""
        return float(result.mechanism.lo), float(result.mechanism.hi)

    def round_values(self, result: ResultView, labels: list[str], tally: ldp.Tally) -> Found:
        if result.mean is None:
            return None
        return np.array([result.mean.mean]), np.array([result.mean.standard_error])

    def cost(self, mechanism: Any, n: int, unit: str, advice: str, recurring: bool) -> Any:
        return MeanCost(mechanism, n, unit, advice, recurring)

    def describe(self, mechanism: Any, options: list[str], report: dict[str, Any]) -> str:
        grid_step = (mechanism.hi - mechanism.lo) / mechanism.grid
        value = mechanism.lo + float(mechanism.decode[report["index"]]) * grid_step
        sent = _("a randomized number: %(value)s.") % {"value": number_format(round(value, 4))}
        words = {"lo": number(mechanism.lo), "hi": number(mechanism.hi)}
        return (
            f"{sent} "
            + _(
                "Noise hides your value, so the report may lie far from it, even outside %(lo)s–%(hi)s: that is "
                "normal. Only the average of many reports is read."
            )
            % words
        )


def mean_value(result: ResultView) -> dict[str, float]:
    """The unbiased mean, its standard error and its 95 % interval."""
    assert result.mean is not None
    low, high = result.mean.confidence_interval(0.95)
    return {"value": result.mean.mean, "standard_error": result.mean.standard_error, "low": low, "high": high}


@dataclass(frozen=True)
class Synthetic:
    """Modips synthetic records for a numeric tally (:mod:`ldp.numeric.modips`), as many as reports."""

    statistics: modips.SanitizedStatistics
    posterior_mean: float
    posterior_variance: float
    """Posterior means of mu and of 1 / lambda after burn-in (formula 6.9)."""
    records: np.ndarray
    interval: tuple[float, float]
    """The synthetic records' 95 % interval of the mean (formula 6.10)."""
    overlap: float
    """Formula 6.11 between the privatized estimate's interval and :attr:`interval`."""


def synthetic(result: ResultView) -> Synthetic | None:
    """Modips records for a numeric result with enough reports, once per tally (else None).

    Seeded by the tally's digest, so the page and every download of one tally show the same records.
    """
    mechanism = result.mechanism
    if not (isinstance(result.summary, MeanSummary) and mechanism.output_size > 2 and result.enough):
        return None
    key = f"murmur:synthetic:{ESTIMATES_VERSION}:{randomization_digest(result.randomization)}:{result.digest}"
    made = cache.get(key)
    if made is None:
        tally = tallies.read_tallies([result.randomization])[result.randomization.pk]
        rng = np.random.default_rng(int(result.digest or "0", 16))
        statistics = modips.sanitized_statistics(mechanism, tally)
        posterior = modips.gibbs_normal_gamma(statistics, rng=rng)
        records = modips.synthesize(posterior, statistics.n, rng=rng)
        interval = modips.t_interval(records)
        made = Synthetic(
            statistics,
            float(posterior.mu.mean()),
            float((1 / posterior.precision).mean()),
            records,
            interval,
            modips.interval_overlap(statistics.mean_interval, interval),
        )
        cache.set(key, made, CACHE_SECONDS)
    return made
