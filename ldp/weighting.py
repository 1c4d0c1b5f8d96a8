"""Weighting a randomized question's shares to population margins of directly asked questions.

Respondents fall into cells c, the combinations of their answers to one or more stratifying
questions asked directly (age band, region...). Within cell c, the n_c reports of the randomized
question give the design's moment estimate pi_hat_c = B lambda_hat_c (B = M^-T, M the channel:
:mod:`ldp.designs.channel`) with covariance C_c = B (diag(lambda_c) - lambda_c lambda_c^T) B^T / n_c.

Post-stratification (Holt and Smith 1979, ref. 1): with the population shares W_c of the cells
known,

    pi_hat_PS = sum_c W_c pi_hat_c,   Cov(pi_hat_PS) = sum_c W_c^2 C_c,

the variance conditional on the cells' sample sizes (ref. 1), evaluated at the observed report
shares (the delta method: pi_hat_PS is linear in the lambda_hat_c); 95 % bands are
pi_hat_PS +/- 1.96 SE.

Raking (Deming and Stephan 1940, ref. 2): when only each stratifying question's margin is known,
iterative proportional fitting scales the sample's cell shares n_c / n to match every margin in
turn until all hold; the limit is the distribution closest to the sample's in Kullback-Leibler
divergence among those with the given margins (Ireland and Kullback 1968, ref. 3). Its cell
shares then post-stratify as above (their variance from estimating the weights is ignored, as in
ref. 1's conditional variance). A cell without respondents gets no weight under raking; under
post-stratification a populated cell without respondents is an error.

References
----------
1. D. Holt, T. M. F. Smith. "Post stratification." JRSS A 142(1), 33-46, 1979.
2. W. E. Deming, F. F. Stephan. "On a least squares adjustment of a sampled frequency table when
   the expected marginal totals are known." Ann. Math. Statist. 11(4), 427-444, 1940.
3. C. T. Ireland, S. Kullback. "Contingency tables with given marginals." Biometrika 55(1),
   179-188, 1968.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ldp.intervals import Interval
from ldp.regression import channel_of

__all__ = ["WeightedEstimate", "post_stratify", "rake", "raked_estimate"]

_Z95 = float(stats.norm.ppf(0.975))


@dataclass(frozen=True)
class WeightedEstimate:
    """Weighted shares of a randomized question with their covariance (sum_c W_c^2 C_c).

    ``cells`` lists each cell's answers to the stratifying questions (one row per cell, in the
    order of ``weights``, the population share each cell stands for).
    """

    proportions: np.ndarray
    covariance: np.ndarray
    weights: np.ndarray
    cells: np.ndarray
    n: int

    @property
    def standard_errors(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))

    def confidence_interval(self) -> Interval:
        """95 % delta-method bands: proportions +/- 1.96 SE."""
        half = _Z95 * self.standard_errors
        return Interval(self.proportions - half, self.proportions + half)


def _check_reports(mechanism: Any, reports: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    channel = channel_of(mechanism)
    y = np.asarray(reports)
    k = channel.shape[0]
    if y.ndim != 1 or not np.issubdtype(y.dtype, np.integer) or np.any((y < 0) | (y >= k)):
        raise ValueError(f"reports must be option indices in [0, {k}), got {reports!r}")
    return channel, y


def _weighted(channel: np.ndarray, y: np.ndarray, cell_of: np.ndarray, weights: np.ndarray) -> tuple[Any, Any]:
    """sum_c W_c pi_hat_c and sum_c W_c^2 C_c over the cells with positive weight."""
    k = channel.shape[0]
    inverse = np.linalg.inv(channel.T)
    estimate, covariance = np.zeros(k), np.zeros((k, k))
    for c in np.flatnonzero(weights > 0):
        counts = np.bincount(y[cell_of == c], minlength=k)
        lam = counts / counts.sum()
        estimate += weights[c] * (inverse @ lam)
        covariance += weights[c] ** 2 * inverse @ (np.diag(lam) - np.outer(lam, lam)) @ inverse.T / counts.sum()
    return estimate, covariance


def post_stratify(mechanism: Any, reports: ArrayLike, strata: ArrayLike, population: ArrayLike) -> WeightedEstimate:
    """Post-stratified shares: sum_h W_h pi_hat_h, strata h = 0..H-1 with population shares W_h.

    ``strata[i]`` is respondent i's stratum (the cell of their direct answers).

    >>> from ldp.designs import Warner
    >>> design = Warner(k=2, epsilon=float(np.log(3)), p="3/4")
    >>> reports = np.array([0] * 60 + [1] * 40 + [0] * 20 + [1] * 80)
    >>> strata = np.repeat([0, 1], 100)
    >>> post_stratify(design, reports, strata, [0.25, 0.75]).proportions.round(6).tolist()
    [0.1, 0.9]
    """
    channel, y = _check_reports(mechanism, reports)
    cells = np.asarray(strata)
    weights = np.asarray(population, dtype=float)
    if cells.shape != y.shape or not np.issubdtype(cells.dtype, np.integer):
        raise ValueError(f"strata must be one integer per report, got shape {cells.shape} for {y.size} reports")
    if weights.ndim != 1 or np.any(weights < 0) or not np.isclose(weights.sum(), 1.0, atol=1e-9):
        raise ValueError(f"population must be non-negative shares summing to 1, got {population!r}")
    if np.any((cells < 0) | (cells >= weights.size)):
        raise ValueError(f"strata must lie in [0, {weights.size}), the population's strata, got {strata!r}")
    empty = np.flatnonzero((weights > 0) & (np.bincount(cells, minlength=weights.size) == 0))
    if empty.size:
        raise ValueError(f"population has strata {empty.tolist()} without respondents: merge them or rake")
    estimate, covariance = _weighted(channel, y, cells, weights)
    return WeightedEstimate(estimate, covariance, weights, np.arange(weights.size)[:, None], int(y.size))


def rake(
    answers: ArrayLike, margins: Sequence[ArrayLike], *, tolerance: float = 1e-12, iterations: int = 10_000
) -> tuple[np.ndarray, np.ndarray]:
    """(cells, shares): the sample's distinct answer combinations and their raked population shares.

    ``answers``: (n, Q) direct answers (integers, column q in [0, len(margins[q]))); ``margins[q]``:
    question q's population shares. Iterative proportional fitting (ref. 2) until every margin
    holds within ``tolerance``.

    >>> cells, shares = rake([[0, 0], [0, 1], [1, 0], [1, 1], [1, 1]], [[0.5, 0.5], [0.5, 0.5]])
    >>> shares.round(4).tolist()
    [0.2929, 0.2071, 0.2071, 0.2929]
    """
    table = np.asarray(answers)
    if table.ndim != 2 or table.shape[1] != len(margins) or not np.issubdtype(table.dtype, np.integer):
        raise ValueError(f"answers must be an (n, {len(margins)}) integer matrix, got shape {table.shape}")
    targets = [np.asarray(m, dtype=float) for m in margins]
    for q, target in enumerate(targets):
        if np.any(target < 0) or not np.isclose(target.sum(), 1.0, atol=1e-9):
            raise ValueError(f"margins[{q}] must be non-negative shares summing to 1, got {margins[q]!r}")
        if np.any((table[:, q] < 0) | (table[:, q] >= target.size)):
            raise ValueError(f"answers[:, {q}] must lie in [0, {target.size}), got {table[:, q]!r}")
        if np.any((target > 0) & (np.bincount(table[:, q], minlength=target.size) == 0)):
            raise ValueError(f"margins[{q}] gives weight to a level no respondent has")
    cells, counts = np.unique(table, axis=0, return_counts=True)
    shares = counts / counts.sum()
    for _ in range(iterations):
        for q, target in enumerate(targets):
            current = np.bincount(cells[:, q], weights=shares, minlength=target.size)
            factor = np.divide(target, current, out=np.zeros_like(target), where=current > 0)
            shares = shares * factor[cells[:, q]]
        worst = max(
            np.max(np.abs(np.bincount(cells[:, q], weights=shares, minlength=t.size) - t))
            for q, t in enumerate(targets)
        )
        if worst <= tolerance:
            return cells, shares
    raise ValueError(f"raking did not converge in {iterations} iterations (margins may be incompatible)")


def raked_estimate(
    mechanism: Any, reports: ArrayLike, answers: ArrayLike, margins: Sequence[ArrayLike]
) -> WeightedEstimate:
    """The randomized question's shares weighted by :func:`rake` to the margins of the direct questions."""
    channel, y = _check_reports(mechanism, reports)
    table = np.asarray(answers)
    if table.ndim != 2 or table.shape[0] != y.size:
        raise ValueError(f"answers must have one row per report ({y.size}), got shape {table.shape}")
    cells, weights = rake(table, margins)
    cell_of = np.unique(table, axis=0, return_inverse=True)[1].ravel()
    estimate, covariance = _weighted(channel, y, cell_of, weights)
    return WeightedEstimate(estimate, covariance, weights, cells, int(y.size))
