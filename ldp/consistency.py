"""Choosing the consistent estimate: Norm-Sub, clipping, or empirical-Bayes shrinkage.

The two adjustments onto the simplex (:mod:`ldp.simplex`) each win somewhere, so
:func:`choose_consistency` scores them on each estimate by a parametric bootstrap. The fitted
distribution of the shares (:func:`share_prior`) supplies one of its reference answers and the
empirical-Bayes estimate (:func:`empirical_bayes_shares`); :func:`evenness_p_value` decides when
the answers look evenly spread enough to shrink. All of it is post-processing: no privacy cost.

References
----------
1. T. Wang, M. Lopuhaa-Zwakenberg, Z. Li, B. Skoric, N. Li. "Locally differentially private
   frequency estimation with consistency." NDSS 2020. (Norm-Sub, clip-and-renormalize.)
2. B. Efron, R. J. Tibshirani. "An Introduction to the Bootstrap." Chapman & Hall, 1993.
   (The parametric bootstrap that picks between Norm-Sub and clipping.)
3. J. Kiefer, J. Wolfowitz. "Consistency of the maximum likelihood estimator in the presence of
   infinitely many incidental parameters." Ann. Math. Statist. 27, 1956. (The NPMLE of a prior.)
4. W. Jiang, C.-H. Zhang. "General maximum likelihood empirical Bayes estimation of normal
   means." Ann. Statist. 37, 2009. (EM on a grid; the posterior means as estimates.)
5. R. Koenker, I. Mizera. "Convex optimization, shape constraints, compound decisions, and
   empirical Bayes rules." JASA 109, 2014.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ldp.intervals import Interval, affine_variance_terms
from ldp.simplex import clip_and_renormalize, project_onto_simplex

__all__ = [
    "CONSISTENCY_ADJUSTMENTS",
    "CONSISTENCY_METHODS",
    "EMPIRICAL_BAYES_OPTIONS",
    "EVEN_TEST_LEVEL",
    "SharePrior",
    "choose_consistency",
    "empirical_bayes_shares",
    "evenness_p_value",
    "evenness_statistic",
    "share_prior",
]

ConsistencyMethod = Literal["norm-sub", "clip"]
#: ``"norm-sub"`` is the default; see :meth:`ldp.estimates.FrequencyEstimate.consistent` for why.
CONSISTENCY_METHODS: tuple[ConsistencyMethod, ...] = ("norm-sub", "clip")


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
    (:func:`~ldp.intervals.affine_variance_terms`), with the shares theta_v drawn from an unknown
    distribution G on [0, 1]. G is estimated by maximizing the marginal likelihood
    prod_v int N(x_v; theta, sd_v(theta)^2) dG(theta) over distributions on :data:`PRIOR_GRID`, by
    EM (Kiefer and Wolfowitz 1956; Jiang and Zhang 2009; Koenker and Mizera 2014, refs. 3-5):
    w <- mean_v posterior_v. The fitted G is a data-driven prior: evenly spread answers give a G
    concentrated near 1/k, a dominant answer a G with an atom near its share.

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
    # The EM step w_j <- mean_v L_vj w_j / sum_i L_vi w_i, as two matrix-vector products.
    for _ in range(iterations):
        weights = weights * (likelihood.T @ (1.0 / (likelihood @ weights))) / u.size
    joint = likelihood * weights
    return SharePrior(weights, joint / joint.sum(axis=1, keepdims=True), sd)


def empirical_bayes_shares(unit_variances: np.ndarray, unbiased: np.ndarray, n: int) -> np.ndarray:
    """Posterior means of the shares under their fitted distribution (:func:`share_prior`), on the simplex.

    The estimator ``"eb"`` (:func:`ldp.estimators.empirical_bayes`) for one unbiased estimate:
    E[theta_v | f_hat_v] under the nonparametric maximum-likelihood prior (Jiang and Zhang 2009,
    ref. 4), made to sum to 1 by Norm-Sub.

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
    statistic = evenness_statistic(unbiased, n, even_precision)
    return float(stats.chi2.sf(statistic, np.size(unbiased) - 1 if degrees is None else degrees))


def evenness_statistic(unbiased: ArrayLike, n: int, even_precision: np.ndarray) -> float:
    """T = n (f_hat - 1/k)^T P (f_hat - 1/k), the chi-square statistic of :func:`evenness_p_value`."""
    d = np.asarray(unbiased, dtype=float) - 1.0 / np.size(unbiased)
    return float(n * d @ even_precision @ d)


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
    Tibshirani 1993, ref. 2) of the error the benchmarks measure,

        risk(g) = E max_v |g(f*)_v - f0_v|,   f* ~ N(f0, Sigma(f0)),

    with Sigma the unbiased estimate's analytic covariance (``covariance(f)``), at several reference
    answers f0 that the data leave plausible, and the adjustment whose worst ratio to the better
    risk over them is smaller wins (minimax regret). The references: evenly spread answers (1/k
    each) if they lie inside ``region``, normally the simultaneous 95 % bands
    (:func:`~ldp.intervals.simultaneous_bands`); given the fitted distribution of the shares (``prior``,
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
