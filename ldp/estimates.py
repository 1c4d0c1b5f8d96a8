"""Frequency estimates, their uncertainty, and consistent post-processing.

Every mechanism in this package is *linear*: the mean of a per-report statistic z satisfies
E[z_bar] = A f for a known k x k matrix A and the true answer distribution f. The unbiased
estimate is f_hat = A^-1 z_bar, with covariance A^-1 Sigma(f) A^-T / n, where Sigma(f) is the
per-report covariance of z for a population whose answers have distribution f (the survey's
respondents are fixed; the randomness is the mechanism's alone).

Post-processing makes an estimate *consistent* (non-negative, summing to 1). It never costs
privacy: it touches only the aggregate.

References
----------
1. T. Wang, J. Blocki, N. Li, S. Jha. "Locally differentially private protocols for frequency
   estimation." USENIX Security 2017. (Variance of k-RR and of the unary encodings.)
2. T. Wang, M. Lopuhaa-Zwakenberg, Z. Li, B. Skoric, N. Li. "Locally differentially private
   frequency estimation with consistency." NDSS 2020. (Norm-Sub, clip-and-renormalize.)
3. W. Wang, M. A. Carreira-Perpinan. "Projection onto the probability simplex: an efficient
   algorithm with a simple proof." arXiv:1309.1541, 2013.
4. B. Efron, R. J. Tibshirani. "An Introduction to the Bootstrap." Chapman & Hall, 1993.
   (The parametric bootstrap that picks between Norm-Sub and clipping.)
5. J. Kiefer, J. Wolfowitz. "Consistency of the maximum likelihood estimator in the presence of
   infinitely many incidental parameters." Ann. Math. Statist. 27, 1956. (The NPMLE of a prior.)
6. W. Jiang, C.-H. Zhang. "General maximum likelihood empirical Bayes estimation of normal
   means." Ann. Statist. 37, 2009. (EM on a grid; the posterior means as estimates.)
7. R. Koenker, I. Mizera. "Convex optimization, shape constraints, compound decisions, and
   empirical Bayes rules." JASA 109, 2014.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats

__all__ = [
    "CONSISTENCY_METHODS",
    "EMPIRICAL_BAYES_OPTIONS",
    "EVEN_TEST_LEVEL",
    "FrequencyEstimate",
    "Interval",
    "SharePrior",
    "choose_consistency",
    "clip_and_renormalize",
    "empirical_bayes_shares",
    "evenness_p_value",
    "project_onto_simplex",
    "score_interval",
    "share_prior",
    "simultaneous_bands",
    "simultaneous_level",
    "affine_unified_interval",
    "affine_variance_terms",
    "unified_covers",
    "unified_interval",
]

ConsistencyMethod = Literal["norm-sub", "clip"]
#: ``"norm-sub"`` is the default; see :meth:`FrequencyEstimate.consistent` for why.
CONSISTENCY_METHODS: tuple[ConsistencyMethod, ...] = ("norm-sub", "clip")


class Interval(NamedTuple):
    """Lower and upper ends of a confidence interval, one entry per option."""

    low: np.ndarray
    high: np.ndarray


def project_onto_simplex(values: ArrayLike) -> np.ndarray:
    """Euclidean projection onto the probability simplex {f : f >= 0, sum f = 1}, per last-axis row.

    The result is max(values - tau, 0) with the one tau that makes it sum to 1. This is
    exactly Norm-Sub of Wang et al. (2020, ref. 2) on a full domain: subtract the same amount
    from every positive entry and zero the negatives until the rest sums to 1. Computed by
    sorting (Wang and Carreira-Perpinan 2013, ref. 3), O(k log k) per row.

    >>> project_onto_simplex([0.7, 0.5, -0.2]).round(12).tolist()
    [0.6, 0.4, 0.0]
    >>> project_onto_simplex([[0.7, 0.5, -0.2], [2.0, 0.0, 0.0]]).round(12).tolist()
    [[0.6, 0.4, 0.0], [1.0, 0.0, 0.0]]
    """
    v = _rows(values)
    descending = -np.sort(-v, axis=-1)
    cumulative = np.cumsum(descending, axis=-1) - 1.0
    ranks = np.arange(1, v.shape[-1] + 1)
    rho = np.sum(descending - cumulative / ranks > 0, axis=-1, keepdims=True)  # the support is a prefix
    tau = np.take_along_axis(cumulative, rho - 1, axis=-1) / rho
    return np.maximum(v - tau, 0.0)


def clip_and_renormalize(values: ArrayLike) -> np.ndarray:
    """Set negative entries to 0 and divide by the sum (uniform if nothing is positive), per last-axis row.

    Simple, and what most LDP libraries do, but it shrinks every large entry by the same
    factor, which biases skewed distributions; :func:`project_onto_simplex` does not.

    >>> clip_and_renormalize([0.6, 0.6, -0.2]).tolist()
    [0.5, 0.5, 0.0]
    """
    v = np.clip(_rows(values), 0.0, None)
    total = v.sum(axis=-1, keepdims=True)
    uniform = np.full_like(v, 1.0 / v.shape[-1])
    return np.divide(v, total, out=uniform, where=total > 0)


def _rows(values: ArrayLike) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    if v.ndim not in (1, 2) or v.shape[-1] == 0:
        raise ValueError(f"values must be a non-empty 1-d array or a stack of rows, got shape {v.shape}")
    return v


#: Shares on which :func:`share_prior` places its mass: a square-root spaced grid, finer near 0.
PRIOR_GRID = np.linspace(0.0, 1.0, 201) ** 2


class SharePrior(NamedTuple):
    """The fitted distribution of shares and each option's posterior over :data:`PRIOR_GRID`."""

    weights: np.ndarray
    """Prior mass on each grid share, shape (grid,)."""
    posterior: np.ndarray
    """Posterior of each option's share, shape (k, grid)."""
    sd: np.ndarray
    """Standard deviation of option v's unbiased estimate at each grid share, shape (k, grid)."""

    @property
    def posterior_mean(self) -> np.ndarray:
        """E[theta_v | f_hat_v] under the fitted prior, per option (not yet summing to 1)."""
        return self.posterior @ PRIOR_GRID

    def rank_matched(self, unbiased: np.ndarray) -> np.ndarray:
        """Shares with the fitted prior's spectrum, in the order of the unbiased estimate, summing to 1.

        The option with the j-th smallest estimate gets the prior's (j - 1/2)/k quantile. Unlike the
        posterior means, which pull every share toward the bulk, this keeps the spread of the
        shares (a lone large share stays large), which is what decides between Norm-Sub and
        clipping.
        """
        k = unbiased.size
        quantiles = PRIOR_GRID[
            np.minimum(np.searchsorted(np.cumsum(self.weights), (np.arange(k) + 0.5) / k), PRIOR_GRID.size - 1)
        ]
        shares = np.empty(k)
        shares[np.argsort(unbiased, kind="stable")] = quantiles
        total = shares.sum()
        return shares / total if total > 0 else np.full(k, 1.0 / k)


def share_prior(unit_variances: np.ndarray, unbiased: np.ndarray, n: int, iterations: int = 200) -> SharePrior:
    """Nonparametric maximum-likelihood estimate of the distribution of the k shares (empirical Bayes).

    Each option's unbiased estimate is modelled as x_v ~ N(theta_v, (a_v + b_v theta_v) / n)
    (:func:`affine_variance_terms`), with the shares theta_v drawn from an unknown distribution G on
    [0, 1]. G is estimated by maximizing the marginal likelihood prod_v int N(x_v; theta, sd_v(theta)^2)
    dG(theta) over distributions on :data:`PRIOR_GRID`, by EM (Kiefer and Wolfowitz 1956; Jiang and
    Zhang 2009; Koenker and Mizera 2014, refs. 5-7): w <- mean_v posterior_v. The fitted G is a
    data-driven prior: evenly spread answers give a G concentrated near 1/k, a dominant answer a G
    with an atom near its share.

    >>> fitted = share_prior(np.full((2, 2), 0.25), np.array([0.5, 0.5]), 100)
    >>> fitted.posterior_mean.round(3).tolist()
    [0.5, 0.5]
    """
    u = np.asarray(unbiased, dtype=float)
    a, b = affine_variance_terms(unit_variances, u)
    sd = np.sqrt(np.maximum(a[:, None] + b[:, None] * PRIOR_GRID[None, :], 1e-300) / n)
    z = (u[:, None] - PRIOR_GRID[None, :]) / sd
    # Each row is scaled by its own constant (which changes no posterior) so that exp never underflows.
    likelihood = np.exp(-0.5 * (z**2 - np.min(z**2, axis=1, keepdims=True))) / sd
    weights = np.full(PRIOR_GRID.size, 1.0 / PRIOR_GRID.size)
    for _ in range(iterations):
        joint = likelihood * weights
        posterior = joint / joint.sum(axis=1, keepdims=True)
        weights = posterior.mean(axis=0)
    joint = likelihood * weights
    return SharePrior(weights, joint / joint.sum(axis=1, keepdims=True), sd)


def empirical_bayes_shares(unit_variances: np.ndarray, unbiased: np.ndarray, n: int) -> np.ndarray:
    """Posterior means of the shares under their fitted distribution (:func:`share_prior`), on the simplex.

    The estimator ``"eb"`` (:func:`ldp.estimators.empirical_bayes`) for one unbiased estimate:
    E[theta_v | f_hat_v] under the nonparametric maximum-likelihood prior (Jiang and Zhang 2009,
    ref. 6), made to sum to 1 by Norm-Sub.

    >>> empirical_bayes_shares(np.full((4, 4), 0.25), np.array([0.3, 0.2, 0.3, 0.2]), 100).round(2).tolist()
    [0.25, 0.25, 0.25, 0.25]
    """
    return project_onto_simplex(share_prior(unit_variances, unbiased, n).posterior_mean)


#: :func:`evenness_p_value` above this: "auto" shrinks by empirical Bayes (``"eb"``).
EVEN_TEST_LEVEL = 0.05
#: ... given this many options (the grid where it was validated, docs/experiments.md): the fitted
#: distribution of the shares pools the options' estimates, and two (one free share) leave nothing
#: to pool (at k = 2 shrinking toward 1/2 cost 1.16-1.33 times the better adjustment on uneven
#: answers with few reports); at k = 256 the fitted distribution gives far estimates atoms of
#: their own and their posterior means stay far (1.5 times clipping's error on evenly spread answers).
EMPIRICAL_BAYES_OPTIONS = range(5, 65)


def evenness_p_value(unbiased: ArrayLike, n: int, even_precision: np.ndarray, degrees: int | None = None) -> float:
    """p-value of the chi-square test that every share is 1/k, from the unbiased estimate.

    T = n (f_hat - 1/k)^T P (f_hat - 1/k) with P the pseudo-inverse of n times the estimate's
    covariance at evenly spread answers, so T is chi-square with as many degrees of freedom as
    that covariance has rank (``degrees``; default k - 1, for estimates that always sum to 1;
    k for the unary encodings, whose estimates do not) under evenly spread answers, for large n
    (a Wald test). It sums the evidence of every option, so it tells spread-out but uneven answers
    (Zipf) from even ones with far more power than asking whether 1/k lies inside every
    simultaneous band.

    >>> precision = np.linalg.pinv(np.array([[0.25, -0.25], [-0.25, 0.25]]))
    >>> round(evenness_p_value([0.5, 0.5], 100, precision), 3), round(evenness_p_value([0.7, 0.3], 100, precision), 5)
    (1.0, 6e-05)
    """
    d = np.asarray(unbiased, dtype=float) - 1.0 / np.size(unbiased)
    statistic = float(n * d @ even_precision @ d)
    return float(stats.chi2.sf(statistic, np.size(unbiased) - 1 if degrees is None else degrees))


CONSISTENCY_ADJUSTMENTS: dict[str, Callable[[ArrayLike], np.ndarray]] = {
    "norm-sub": project_onto_simplex,
    "clip": clip_and_renormalize,
}


def choose_consistency(
    unbiased: ArrayLike,
    covariance: Callable[[np.ndarray], np.ndarray],
    region: Interval | None = None,
    *,
    prior: SharePrior | None = None,
    reference: np.ndarray | None = None,
    draws: int = 400,
    rng: np.random.Generator | None = None,
) -> ConsistencyMethod:
    """Norm-Sub or clip-and-renormalize, whichever is expected to err less on this estimate.

    Neither wins everywhere. When the noise is large next to every share (small n or epsilon,
    answers spread over many options), clipping shrinks the estimate toward spread-out answers and
    has the smaller largest error; when one answer dominates, clipping shrinks it by the same
    factor as the noise and Norm-Sub, which subtracts instead of scaling, errs 2-3 times less
    (docs/experiments.md measures both). So each is scored by a parametric bootstrap (Efron and
    Tibshirani 1993, ref. 4) of the error the benchmarks measure,

        risk(g) = E max_v |g(f*)_v - f0_v|,   f* ~ N(f0, Sigma(f0)),

    with Sigma the unbiased estimate's analytic covariance (``covariance(f)``), at several reference
    answers f0 that the data leave plausible, and the adjustment whose worst ratio to the better
    risk over them is smaller wins (minimax regret). The references: evenly spread answers (1/k
    each) if they lie inside ``region``, normally the simultaneous 95 % bands
    (:func:`simultaneous_bands`); given the fitted distribution of the shares (``prior``,
    :func:`share_prior`), that distribution's spectrum in the order of the estimate
    (:meth:`SharePrior.rank_matched`); and always the midpoint of the two candidates,
    (Norm-Sub(f_hat) + clip(f_hat)) / 2. What decides between the two adjustments is how large the
    largest shares are next to how many small ones there are (clipping divides the largest by the
    total of the positive noise; Norm-Sub piles the mass of many small shares onto the few that
    noise lifts highest). Each reference gets that wrong somewhere: the midpoint at large k (on 64
    Zipf(1.1) answers it picked clipping where Norm-Sub errs 1.3 times less); the
    rank-matched deconvolved shares when one noisy estimate far out gets an atom of its own (at
    k = 256 with evenly spread answers it then picked Norm-Sub on about 2 % of tallies, which erred
    up to 14 times clipping's error); 1/k when the answers are concentrated. A wrong choice costs
    little where the references disagree mildly and a lot where one of them finds the other
    adjustment catastrophic, so minimax regret keeps the rank-matched reference's gain at large k
    and avoids its rare disasters (``python -m ldp.experiments adjustment --large-k``,
    docs/experiments.md). ``reference`` overrides the references with one f0. Ties go to
    Norm-Sub. Without ``rng`` the draws are seeded by the estimate itself, so the same tally always
    gets the same answer; every reference uses the same draws.

    >>> from ldp import make_mechanism
    >>> m = make_mechanism("krr", k=4, epsilon=1.0)
    >>> choose_consistency([0.95, 0.1, -0.05, 0.0], lambda f: m.covariance(f, 200))
    'norm-sub'
    >>> choose_consistency([0.3, 0.25, -0.1, 0.55], lambda f: m.covariance(f, 50))
    'clip'
    """
    u = np.asarray(unbiased, dtype=float)
    if reference is not None:
        references = [np.asarray(reference, dtype=float)]
    else:
        even = np.full(u.size, 1.0 / u.size)
        references = []
        if region is not None and np.all(region.low <= even) and np.all(even <= region.high):
            references.append(even)
        if prior is not None:
            references.append(prior.rank_matched(u))
        references.append((project_onto_simplex(u) + clip_and_renormalize(u)) / 2)
    if rng is None:
        rng = np.random.default_rng(zlib.crc32(u.tobytes()))
    noise = rng.standard_normal((draws, u.size))  # the same draws at every reference
    regret = dict.fromkeys(CONSISTENCY_ADJUSTMENTS, 0.0)
    for f0 in references:
        eigenvalues, eigenvectors = np.linalg.eigh(covariance(f0))
        samples = f0 + noise @ (eigenvectors * np.sqrt(np.clip(eigenvalues, 0.0, None))).T
        risks = {
            name: float(np.mean(np.max(np.abs(adjust(samples) - f0), axis=1)))
            for name, adjust in CONSISTENCY_ADJUSTMENTS.items()
        }
        best = min(risks.values())
        for name, risk in risks.items():
            regret[name] = max(regret[name], risk / best if best > 0 else 1.0)
    return "clip" if regret["clip"] < regret["norm-sub"] else "norm-sub"


SIMULTANEOUS_CORRECTIONS = ("sidak", "bonferroni")
SIMULTANEOUS_INTERVALS = ("hull", "score", "unified")


def simultaneous_level(level: float, count: int, correction: str = "sidak") -> float:
    """The per-option level that makes ``count`` bands hold jointly with probability >= level.

    ``"sidak"``: level^(1/count). Šidák's inequality (Šidák 1967) makes it valid for a normal
    vector with *any* correlation, and it is exact for independent estimates. ``"bonferroni"``:
    1 - (1 - level) / count, valid for anything, slightly wider.

    >>> round(simultaneous_level(0.95, 20), 6), round(simultaneous_level(0.95, 20, "bonferroni"), 6)
    (0.997439, 0.9975)
    """
    if correction == "sidak":
        return level ** (1.0 / count)
    if correction == "bonferroni":
        return 1 - (1 - level) / count
    raise ValueError(f"correction must be one of {SIMULTANEOUS_CORRECTIONS}, got {correction!r}")


def simultaneous_bands(
    unit_variances: np.ndarray,
    unbiased: np.ndarray,
    n: int,
    level: float = 0.95,
    *,
    correction: str = "sidak",
    interval: str = "hull",
    count: int | None = None,
) -> Interval:
    """Bands that hold for all k options at once with probability >= level.

    Each option's band is made at the per-option level of :func:`simultaneous_level` (Šidák by
    default). ``interval`` says which band: ``"score"`` (:func:`score_interval`), ``"unified"``
    (:func:`unified_interval`) or ``"hull"`` (default), the smallest interval containing both.
    Why the hull: at k = 20 the per-option level is 99.74 %, 3 standard deviations out, where the
    estimates' skewness matters. The score band's acceptance region is symmetric, so skewness
    cancels to first order and its joint coverage is 95 % within sampling error; the unified band
    is asymmetric near 0 and 1 and there lost up to 2 points (92.8-95.5 % jointly for k-RR, OUE,
    OLH and Hadamard response at k = 20, 4000 repetitions), but it never collapses to a point
    where the score test rejects every share. The hull covers whenever either does, so it keeps
    the score band's joint coverage and the unified band's width at the edges (measured:
    docs/experiments.md, ``python -m ldp.experiments simultaneous``).

    ``count`` is the number of bands that must hold together (default: every entry of ``unbiased``;
    padding-and-sampling estimates k options from k + l items).

    ``correction="bonferroni", interval="score"`` is what this function did before (Bonferroni
    score bands); :meth:`~ldp.mechanisms.base.Mechanism.automatic_consistency` keeps using it.

    >>> v = np.array([[0.25, 0.25], [0.25, 0.25]])
    >>> low, high = simultaneous_bands(v, np.array([0.5, 0.5]), 100)
    >>> round(float(low[0]), 4), round(float(high[0]), 4)
    (0.3882, 0.6118)
    """
    if interval not in SIMULTANEOUS_INTERVALS:
        raise ValueError(f"interval must be one of {SIMULTANEOUS_INTERVALS}, got {interval!r}")
    each = simultaneous_level(level, unbiased.size if count is None else count, correction)
    if interval == "score":
        return score_interval(unit_variances, unbiased, n, level=each)
    a, b = (np.round(x, 12) for x in affine_variance_terms(unit_variances, unbiased))
    unified = affine_unified_interval(a, b, unbiased, n, level=each)
    if interval == "unified":
        return unified
    score = score_interval(unit_variances, unbiased, n, level=each)
    return Interval(np.minimum(score.low, unified.low), np.maximum(score.high, unified.high))


@dataclass(frozen=True, eq=False)
class FrequencyEstimate:
    """Estimated answer proportions for one question, with their uncertainty.

    Attributes
    ----------
    proportions : ndarray, shape (k,)
        Estimated share of respondents choosing each option.
    covariance : ndarray, shape (k, k)
        Analytic covariance of the *unbiased* estimate, evaluated at a consistent plug-in
        distribution (see the mechanism's ``estimate``).
    n : int
        Number of reports behind the estimate.
    method : str
        ``"unbiased"``, or the consistency method that produced ``proportions``.

    Examples
    --------
    >>> est = FrequencyEstimate(np.array([0.3, 0.7]), np.diag([0.01, 0.01]), n=100)
    >>> est.standard_errors.tolist()
    [0.1, 0.1]
    >>> est.counts.tolist()
    [30.0, 70.0]
    """

    proportions: np.ndarray
    covariance: np.ndarray
    n: int
    method: str = "unbiased"
    unbiased: np.ndarray | None = field(default=None, repr=False)
    bands: Interval | None = field(default=None, repr=False)
    """95 % bands computed for this estimate (score intervals, for consistent estimates)."""

    @property
    def standard_errors(self) -> np.ndarray:
        """Square roots of the covariance's diagonal, one per option."""
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))

    @property
    def counts(self) -> np.ndarray:
        """Estimated number of respondents per option: n * proportions."""
        return self.n * self.proportions

    def confidence_interval(self, level: float = 0.95) -> Interval:
        """Interval per option: the stored 95 % bands if any, else proportions +/- z * standard error.

        Mechanisms attach score bands to consistent estimates (``Mechanism.consistent_estimate``);
        without them a consistent estimate's interval is the unbiased one moved with its point
        estimate and intersected with [0, 1], which over-covers near 0.
        """
        if not 0 < level < 1:
            raise ValueError(f"level must lie in (0, 1), got {level!r}")
        if self.bands is not None and level == 0.95:
            return self.bands
        z = stats.norm.ppf(0.5 + level / 2)
        half_width = z * self.standard_errors
        low, high = self.proportions - half_width, self.proportions + half_width
        if self.method != "unbiased":
            low, high = np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
        return Interval(low, high)

    def consistent(self, method: ConsistencyMethod = "norm-sub", bands: Interval | None = None) -> FrequencyEstimate:
        """The estimate made non-negative and summing to 1.

        The default is ``"norm-sub"`` (:func:`project_onto_simplex`): the true distribution lies
        in the simplex and projection onto a convex set never moves a point farther from any
        point of that set, so Norm-Sub can only reduce the estimate's Euclidean error. Clipping
        and renormalizing carries no such guarantee.
        """
        if method not in CONSISTENCY_METHODS:
            raise ValueError(f"method must be one of {CONSISTENCY_METHODS}, got {method!r}")
        base = self.proportions if self.unbiased is None else self.unbiased
        return replace(
            self, proportions=CONSISTENCY_ADJUSTMENTS[method](base), method=method, unbiased=base, bands=bands
        )


def score_interval(unit_variances: np.ndarray, unbiased: np.ndarray, n: int, level: float = 0.95) -> Interval:
    """Per option, the shares theta in [0, 1] not rejected by the unbiased estimate (test inversion).

    theta is in option v's interval when |f_hat_v - theta| <= z sd_v(theta), with sd_v(theta)^2 the
    unbiased estimate's variance when option v's share is theta and the others are in proportion to
    the Norm-Sub estimate. ``unit_variances[v, t]`` is the variance from one report with answer t;
    the variance is their mixture by the shares, divided by n, so it is affine in theta,
    a + b theta, and the condition (f_hat_v - theta)^2 <= (z^2/n)(a + b theta) holds exactly between
    the roots of a quadratic. Like Wilson's interval for a proportion (Wilson 1927), the band stays
    in [0, 1] and keeps its coverage near the boundary, where "estimate +/- z SE" at a plug-in does
    not; it does not depend on which consistent estimate is shown. When no share in [0, 1] passes,
    the band is the edge nearest the estimate. Measured coverage: docs/experiments.md.

    >>> low, high = score_interval(np.array([[0.25, 0.25], [0.25, 0.25]]), np.array([0.5, 0.5]), 100)
    >>> round(float(low[0]), 4), round(float(high[0]), 4)
    (0.402, 0.598)
    """
    c = float(stats.norm.ppf(0.5 + level / 2)) ** 2 / n
    plug_in = project_onto_simplex(unbiased)
    k = unbiased.size
    low, high = np.empty(k), np.empty(k)
    for v in range(k):
        rest = np.delete(plug_in, v)
        rest = rest / rest.sum() if rest.sum() > 0 else np.full(k - 1, 1.0 / (k - 1))
        a = float(np.delete(unit_variances[v], v) @ rest)  # variance per report at theta = 0
        b = float(unit_variances[v, v]) - a
        x = float(unbiased[v])
        # (x - theta)^2 - c (a + b theta) = theta^2 - (2x + c b) theta + (x^2 - c a) <= 0
        middle, spread = x + c * b / 2, (2 * x + c * b) ** 2 / 4 - (x * x - c * a)
        edge = min(max(x, 0.0), 1.0)
        if spread < 0:
            low[v] = high[v] = edge
            continue
        root = math.sqrt(spread)
        low[v], high[v] = max(middle - root, 0.0), min(middle + root, 1.0)
        if low[v] > high[v]:  # the passing shares all lie outside [0, 1]
            low[v] = high[v] = edge
    return Interval(low, high)


#: Shares at which :func:`unified_interval` decides acceptance (then each edge is refined).
UNIFIED_GRID = 1001


def _unified_acceptance(d0: np.ndarray, d1: np.ndarray, level: float, iterations: int = 48) -> Interval:
    """Acceptance interval [L, U] of Feldman and Cousins' ordering for u ~ N(0, 1) on [-d0, d1].

    With x = theta + sd u and the fitted share clip(x, 0, 1), the likelihood-ratio statistic is
    u^2 inside [-d0, d1], and -2 u d0 - d0^2 below, 2 u d1 - d1^2 above (Feldman, Cousins 1998,
    for a Gaussian mean known to lie in an interval). Ranking u by it, the accepted set is
    {t(u) <= c}: L = -(c + d0^2) / (2 d0) when d0 < sqrt(c), else -sqrt(c), and likewise U; c is
    solved by bisection so that Phi(U) - Phi(L) = level.
    """
    d0, d1 = np.maximum(d0, 1e-12), np.maximum(d1, 1e-12)

    def bounds(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r = np.sqrt(c)
        lower = np.where(d0 < r, -(c + d0**2) / (2 * d0), -r)
        upper = np.where(d1 < r, (c + d1**2) / (2 * d1), r)
        return lower, upper

    # Away from both edges (d0, d1 >= the two-sided quantile) the region is the usual |u| <= z.
    z = float(stats.norm.ppf(0.5 + level / 2))
    c = np.full_like(d0, z * z)
    near = (d0 < z) | (d1 < z)
    if near.any():
        full_d0, full_d1 = d0, d1
        d0, d1 = d0[near], d1[near]
        below, above = np.zeros_like(d0), np.full_like(d0, 64.0)
        for _ in range(iterations):
            middle = (below + above) / 2
            lower, upper = bounds(middle)
            short = special.ndtr(upper) - special.ndtr(lower) < level
            below, above = np.where(short, middle, below), np.where(short, above, middle)
        c[near] = above
        d0, d1 = full_d0, full_d1
    return Interval(*bounds(c))


def unified_interval(unit_variances: np.ndarray, unbiased: np.ndarray, n: int, level: float = 0.95) -> Interval:
    """Per option, Feldman and Cousins' unified interval for a share known to lie in [0, 1].

    As in :func:`score_interval`, option v's unbiased estimate is taken as normal with mean theta
    and variance (a + b theta) / n (the others in proportion to the Norm-Sub estimate), but the
    acceptance regions are ordered by the likelihood ratio against the best share in [0, 1]
    (Feldman, Cousins, "Unified approach to the classical statistical analysis of small signals",
    Phys. Rev. D 57, 1998), not by |x - theta| alone. So an estimate far below 0 still gets a band
    [0, upper] of positive width, where test inversion finds no share at all and collapses to the
    edge; in the interior (theta more than about 2 sd from 0 and 1) both are the same band.
    Coverage is level for every theta in [0, 1] under the normal model (measured:
    docs/experiments.md). Acceptance is decided on a grid of :data:`UNIFIED_GRID` shares and each
    edge placed where the (continuous) acceptance margin crosses zero between grid shares.

    >>> low, high = unified_interval(np.array([[0.25, 0.25], [0.25, 0.25]]), np.array([0.5, 0.5]), 100)
    >>> round(float(low[0]), 4), round(float(high[0]), 4)
    (0.402, 0.598)
    >>> low, high = unified_interval(np.array([[0.25, 0.25], [0.25, 0.25]]), np.array([-0.3, 1.3]), 100)
    >>> float(low[0]), round(float(high[0]), 3) > 0
    (0.0, True)
    """
    return affine_unified_interval(*affine_variance_terms(unit_variances, unbiased), unbiased, n, level)


def affine_variance_terms(unit_variances: np.ndarray, unbiased: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) with n Var(f_hat_v) = a_v + b_v theta when option v's share is theta.

    The other options' shares are taken in proportion to the Norm-Sub estimate (evenly spread if
    it puts everything on v): a_v = sum_{t != v} V[v, t] rest_t, b_v = V[v, v] - a_v.
    """
    plug_in = project_onto_simplex(unbiased)
    k = unbiased.size
    rest = np.repeat(plug_in[None, :], k, axis=0)
    np.fill_diagonal(rest, 0.0)
    totals = rest.sum(axis=1, keepdims=True)
    even = (1.0 - np.eye(k)) / max(k - 1, 1)
    rest = np.where(totals > 0, rest / np.where(totals > 0, totals, 1.0), even)
    a = np.einsum("vt,vt->v", np.where(np.eye(k, dtype=bool), 0.0, unit_variances), rest)
    b = np.diagonal(unit_variances) - a
    return a, b


@lru_cache(maxsize=32)
def _acceptance_rows(pairs: bytes, count: int, n: int, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """sd and Feldman-Cousins acceptance bounds on the share grid for each distinct (a, b) pair.

    Cached: repeated estimates with the same variance terms and n (simulations, unary encodings)
    reuse them. Callers index the rows, which copies them.
    """
    a, b = np.frombuffer(pairs, dtype=float).reshape(count, 2).T
    theta = np.linspace(0.0, 1.0, UNIFIED_GRID)[None, :]
    sd = np.sqrt(np.maximum(a[:, None] + b[:, None] * theta, 1e-300) / n)
    lower, upper = _unified_acceptance(theta / sd, (1.0 - theta) / sd, level)
    return sd, lower, upper


def affine_unified_interval(
    a: np.ndarray, b: np.ndarray, unbiased: np.ndarray, n: int, level: float = 0.95
) -> Interval:
    """:func:`unified_interval` for estimates x_v with n Var = a_v + b_v theta (arrays of one shape).

    The acceptance regions depend on (a_v, b_v) only, so they are computed once per distinct pair:
    estimates that share their variance terms (every option of a multi-select unary encoding, a
    stack of repetitions) cost one acceptance computation.
    """
    a, b, unbiased = (np.asarray(x, dtype=float).reshape(-1) for x in np.broadcast_arrays(a, b, unbiased))
    k = unbiased.size
    pairs, index = np.unique(np.stack([a, b], axis=1), axis=0, return_inverse=True)
    index = index.reshape(-1)
    theta = np.linspace(0.0, 1.0, UNIFIED_GRID)[None, :]
    distinct = _acceptance_rows(pairs.tobytes(), pairs.shape[0], n, level)
    sd, lower, upper = (rows[index] for rows in distinct)
    u = (unbiased[:, None] - theta) / sd
    margin = np.minimum(u - lower, upper - u)  # >= 0 exactly where theta is accepted; continuous
    inside = margin >= 0
    found = inside.any(axis=1)
    first = np.where(found, inside.argmax(axis=1), 0)
    last = np.where(found, UNIFIED_GRID - 1 - inside[:, ::-1].argmax(axis=1), 0)
    rows = np.arange(k)
    grid = theta[0]

    def edge(inner: np.ndarray, outer: np.ndarray) -> np.ndarray:
        """Where the margin crosses 0 between an accepted and a rejected grid share (linear)."""
        m_in, m_out = margin[rows, inner], margin[rows, outer]
        weight = m_in / np.where(m_in - m_out > 0, m_in - m_out, 1.0)
        return grid[inner] + weight * (grid[outer] - grid[inner])

    low = np.where(first > 0, edge(first, np.maximum(first - 1, 0)), 0.0)
    high = np.where(last < UNIFIED_GRID - 1, edge(last, np.minimum(last + 1, UNIFIED_GRID - 1)), 1.0)
    nearest = np.clip(unbiased, 0.0, 1.0)
    # Numerically empty (never under the model): the share nearest the estimate.
    return Interval(np.where(found, low, nearest), np.where(found, high, nearest))


def unified_covers(
    unit_variances: np.ndarray, unbiased: ArrayLike, n: int, shares: ArrayLike, level: float = 0.95
) -> np.ndarray:
    """Whether each share lies in its option's :func:`unified_interval`, for a stack of estimates.

    The band is the set of shares theta whose acceptance region contains the estimate, so theta is
    in the band exactly when (f_hat_v - theta) / sd_v(theta) lies in [L, U] of
    :func:`_unified_acceptance` at theta. Deciding that at the true shares alone needs no grid, so
    coverage can be measured over many thousand tallies at once (``unbiased``: shape (R, k);
    ``shares``: shape (k,)). It agrees with :func:`unified_interval` up to that function's grid
    (tests/ldp/test_estimators.py checks it).
    """
    u = np.atleast_2d(np.asarray(unbiased, dtype=float))
    a, b = np.stack([affine_variance_terms(unit_variances, row) for row in u], axis=1)
    theta = np.broadcast_to(np.asarray(shares, dtype=float), u.shape)
    sd = np.sqrt(np.maximum(a + b * theta, 1e-300) / n)
    lower, upper = _unified_acceptance((theta / sd).ravel(), ((1.0 - theta) / sd).ravel(), level)
    z = ((u - theta) / sd).ravel()
    return ((lower <= z) & (z <= upper)).reshape(u.shape)
