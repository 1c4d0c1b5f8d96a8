"""Modips synthetic records from a numeric question's randomized reports (seed 002, section 6.3).

Seed 002 (Park, Oh) follows Liu's Modips with sanitization through Bayesian sufficiency: for a
normal likelihood with a Normal-Gamma prior the Bayesian sufficient statistics are
s = (x_bar, s^2) (formula 6.6); s is sanitized, s* replaces s in the full conditionals

    mu | lambda ~ N((lambda n x_bar + mu0 / sigma0^2) / w, 1 / w),  w = lambda n + 1 / sigma0^2   (6.7)
    lambda | mu ~ Gam(n / 2 + alpha0, (n s^2 + n (x_bar - mu)^2) / 2 + beta0)                   (6.8)

which are Gibbs-sampled (M = 5000, burn-in b = 4000, formula 6.9), and synthetic records are drawn
from N(mu_m, 1 / lambda_m) for posterior draws m.

Under local DP there is no raw x to sanitize: every report is already randomized, so Murmur's
sanitized statistics are *estimates from the reports*, which is post-processing and costs no
further privacy. x_bar* is the mechanism's unbiased mean (:meth:`NumericMechanism.estimate`).
s^2* = m2* - x_bar*^2 with m2* the unbiased estimate of the mean square: a second decoder d2 with
E[d2(Y) | k] = k^2 on every grid point k (the minimum-norm solution of P d2 = k^2 for the exact
report table P), averaged over the reports. The rounding to the grid adds its own variance
frac(t)(1 - frac(t)) <= 1/4 step^2 to m2*, which is left in (it is below (range / 200)^2 at the
default grid). One-bit reports (1BitMean, Duchi et al.) identify only the mean, so they cannot give
s^2 and are refused. s^2* is clipped to (0, (hi - lo)^2 / 4], the largest variance of values in
[lo, hi].

The interval-overlap utility I (formula 6.11) compares two 95 % intervals: with (L_o, U_o) the
privatized estimate's interval, (L_s, U_s) the synthetic records' (formula 6.10) and (L_i, U_i)
their intersection, I = (U_i - L_i) / (2 (U_o - L_o)) + (U_i - L_i) / (2 (U_s - L_s)): 1 for equal
intervals, 0 for disjoint ones.

References
----------
1. Seed 002 (Park, Oh), formulas (6.2)-(6.11).
2. F. Liu. "Model-based differentially private data synthesis and statistical inference in
   multiple synthetic datasets." Trans. Data Privacy 2022 (Modips).

>>> interval_overlap((0.0, 2.0), (0.0, 2.0)), interval_overlap((0.0, 2.0), (1.0, 3.0))
(1.0, 0.5)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import stats

from ldp.mechanisms.base import Tally
from ldp.numeric.base import NumericMechanism

__all__ = [
    "GibbsPosterior",
    "SanitizedStatistics",
    "gibbs_normal_gamma",
    "interval_overlap",
    "sanitized_statistics",
    "second_moment_decoder",
    "synthesize",
    "t_interval",
]

#: Seed 002's non-informative prior: variances of mu and lambda of 1e10 (alpha0 / beta0^2 = 1e10).
PRIOR = {"mu0": 0.0, "sigma0_squared": 1e10, "alpha0": 1e-4, "beta0": 1e-7}
ITERATIONS = 5000
BURN_IN = 4000


@dataclass(frozen=True)
class SanitizedStatistics:
    """Bayesian sufficient statistics (n, x_bar, s^2) estimated from randomized reports."""

    n: int
    mean: float
    variance: float
    variance_standard_error: float
    """Of s^2* (delta method over the per-report decoders), before clipping: how much to trust it."""
    mean_interval: tuple[float, float]
    """The privatized estimate's 95 % interval of the mean (the mechanism's, from the reports)."""


@dataclass(frozen=True)
class GibbsPosterior:
    """Posterior draws of (mu, lambda) after burn-in (formula 6.9: their means are the estimates)."""

    mu: np.ndarray
    precision: np.ndarray


@lru_cache(maxsize=64)
def second_moment_decoder(mechanism: NumericMechanism) -> np.ndarray:
    """d2 with E[d2(Y) | k] = k^2 for every grid point k (grid units squared), minimum norm.

    Cached per mechanism instance (mechanisms are immutable; the product shares one per parameters).

    >>> from ldp.numeric import make_numeric_mechanism
    >>> m = make_numeric_mechanism("piecewise", lo=0, hi=1, epsilon=2.0)
    >>> k = np.arange(m.grid + 1)
    >>> bool(np.allclose(m.report_probabilities() @ second_moment_decoder(m), k**2, atol=1e-6))
    True
    """
    if mechanism.output_size <= 2:
        raise ValueError(f"{mechanism.name} reports one bit, which identifies only the mean, not the variance")
    table = mechanism.report_probabilities()
    k = np.arange(mechanism.grid + 1, dtype=float)
    decoder, *_ = np.linalg.lstsq(table, k**2, rcond=None)
    if not np.allclose(table @ decoder, k**2, rtol=1e-7, atol=1e-6 * mechanism.grid**2):
        raise ValueError(f"{mechanism.name}'s reports do not identify the mean square on grid {mechanism.grid}")
    decoder.setflags(write=False)
    return decoder


def sanitized_statistics(mechanism: NumericMechanism, tally: Tally) -> SanitizedStatistics:
    """(n, x_bar*, s^2*) from a tally of randomized reports (see the module docstring)."""
    if tally.n < 2:
        raise ValueError("sanitized statistics need at least two reports")
    estimate = mechanism.estimate(tally)
    # Per report, about lo: first[y] estimates x - lo, second[y] estimates (x - lo)^2, unbiasedly.
    first = mechanism.decode * mechanism.step
    second = second_moment_decoder(mechanism) * mechanism.step**2
    weights = tally.counts / tally.n
    centred_mean, square = float(weights @ first), float(weights @ second)
    gradient = np.stack([second, -2 * centred_mean * first])  # d(m2 - mean^2) per report
    spread = float(weights @ (gradient.sum(axis=0) - (square - 2 * centred_mean**2)) ** 2)
    largest = (mechanism.hi - mechanism.lo) ** 2 / 4
    variance = min(max(square - centred_mean**2, largest * 1e-6), largest)
    low, high = estimate.confidence_interval(0.95)
    return SanitizedStatistics(tally.n, estimate.mean, variance, math.sqrt(spread / (tally.n - 1)), (low, high))


def gibbs_normal_gamma(
    statistics: SanitizedStatistics,
    *,
    iterations: int = ITERATIONS,
    burn_in: int = BURN_IN,
    prior: dict[str, float] | None = None,
    rng: Any = None,
) -> GibbsPosterior:
    """Gibbs sampling of (mu, lambda) from the full conditionals (6.7) and (6.8) given s*."""
    if not 0 <= burn_in < iterations:
        raise ValueError(f"burn_in must lie in [0, iterations), got {burn_in!r} with iterations={iterations!r}")
    p = {**PRIOR, **(prior or {})}
    rng = np.random.default_rng(rng)
    n, x_bar, s2 = statistics.n, statistics.mean, statistics.variance
    mu, precision = x_bar, 1.0 / s2
    mus, precisions = np.empty(iterations), np.empty(iterations)
    normals, gammas = rng.standard_normal(iterations), rng.standard_gamma(n / 2 + p["alpha0"], iterations)
    for m in range(iterations):
        weight = precision * n + 1 / p["sigma0_squared"]
        mu = (precision * n * x_bar + p["mu0"] / p["sigma0_squared"]) / weight + normals[m] / math.sqrt(weight)
        rate = (n * s2 + n * (x_bar - mu) ** 2) / 2 + p["beta0"]
        precision = gammas[m] / rate
        mus[m], precisions[m] = mu, precision
    return GibbsPosterior(mus[burn_in:], precisions[burn_in:])


def synthesize(posterior: GibbsPosterior, size: int, *, rng: Any = None) -> np.ndarray:
    """``size`` synthetic records: each from N(mu_m, 1 / lambda_m) for a posterior draw m."""
    rng = np.random.default_rng(rng)
    draw = rng.integers(0, posterior.mu.size, size=size)
    return posterior.mu[draw] + rng.standard_normal(size) / np.sqrt(posterior.precision[draw])


def t_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Formula (6.10): x_bar -+ t_{n-1} S / sqrt(n - 1), S the standard deviation (divisor n)."""
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        raise ValueError("an interval needs at least two values")
    half = float(stats.t.ppf(0.5 + level / 2, values.size - 1)) * float(values.std()) / math.sqrt(values.size - 1)
    return float(values.mean()) - half, float(values.mean()) + half


def interval_overlap(original: tuple[float, float], synthetic: tuple[float, float]) -> float:
    """Formula (6.11): I = (U_i - L_i) / (2 (U_o - L_o)) + (U_i - L_i) / (2 (U_s - L_s)), 0 if disjoint."""
    (lo_o, hi_o), (lo_s, hi_s) = original, synthetic
    if not (hi_o > lo_o and hi_s > lo_s):
        raise ValueError(f"intervals must have positive width, got {original!r} and {synthetic!r}")
    overlap = max(min(hi_o, hi_s) - max(lo_o, lo_s), 0.0)
    return overlap / (2 * (hi_o - lo_o)) + overlap / (2 * (hi_s - lo_s))
