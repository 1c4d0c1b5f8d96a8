"""Power and sample size for comparisons of randomized answers, from each mechanism's variance.

One respondent's report y, drawn through the channel M[v, y] = P(report y | answer v) of a
mechanism whose report is one option, estimates the answer shares pi by B e_y (B = M^-T), with
per-respondent variance (Warner 1965, ref. 1, for k = 2)

    V_v(pi) = sum_y B[v, y]^2 lambda_y - pi_v^2,    lambda = M^T pi,

so the moment estimate from n respondents has variance V_v / n. For a two-sided Wald test at level
alpha with power 1 - beta (Chow, Shao and Wang 2008, ref. 2, section 4.2):

- two groups, or two rounds with different respondents, whose shares of option v are a and b:
  n per group = (z_{1-alpha/2} + z_{1-beta})^2 (V_v(a) + V_v(b)) / (a - b)^2;
- a coefficient beta_j of the regression of the answer on direct covariates
  (:mod:`ldp.regression`): n = (z_{1-alpha/2} + z_{1-beta})^2 [I^-1]_jj / beta_j^2, where I is one
  respondent's expected information, sum_r q_r sum_y P(y | x_r) s s^T over covariate rows x_r of
  population shares q_r, s = x_r (w - pi)_free the score of report y (w the posterior of the
  answer given y; Louis 1982, ref. 3).

Blair, Imai and Zhou (2015, ref. 4, section 5) give the same normal-approximation power analysis
for randomized response; here it holds for every design and LDP mechanism with a one-option report.

References
----------
1. S. L. Warner. "Randomized response: a survey technique for eliminating evasive answer bias."
   JASA 60(309), 63-69, 1965.
2. S.-C. Chow, J. Shao, H. Wang. "Sample Size Calculations in Clinical Research." 2nd ed.,
   Chapman & Hall/CRC, 2008.
3. T. A. Louis. "Finding the observed information matrix when using the EM algorithm." JRSS B
   44(2), 226-233, 1982.
4. G. Blair, K. Imai, Y.-Y. Zhou. "Design and analysis of the randomized response technique."
   JASA 110(511), 1304-1319, 2015.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats

from ldp.regression import channel_of

__all__ = [
    "per_respondent_variance",
    "regression_information",
    "regression_sample_size",
    "two_shares_power",
    "two_shares_sample_size",
]


def _check_test(power: float, alpha: float) -> float:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    if not alpha / 2 < power < 1:
        raise ValueError(f"power must lie in (alpha / 2, 1), got {power!r}")
    return float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))


def _shares(channel: np.ndarray, share: float, option: int) -> np.ndarray:
    """Answer shares with ``share`` on ``option`` and the rest spread evenly over the others."""
    k = channel.shape[0]
    if not 0 <= option < k:
        raise ValueError(f"option must lie in [0, {k}), got {option!r}")
    if not 0 <= share <= 1:
        raise ValueError(f"shares must lie in [0, 1], got {share!r}")
    pi = np.full(k, (1 - share) / (k - 1))
    pi[option] = share
    return pi


def per_respondent_variance(mechanism: Any, share: float, *, option: int = 0) -> float:
    """V_v(pi) = sum_y B[v, y]^2 lambda_y - pi_v^2 at a share of ``option`` (others even).

    >>> from ldp.designs import Warner
    >>> per_respondent_variance(Warner(k=2, epsilon=float(np.log(3)), p="3/4"), 0.5)  # (1/4) / (1/2)^2
    1.0
    """
    channel = channel_of(mechanism)
    pi = _shares(channel, share, option)
    inverse = np.linalg.inv(channel.T)
    return float((inverse[option] ** 2) @ (channel.T @ pi) - pi[option] ** 2)


def two_shares_sample_size(
    mechanism: Any, share_a: float, share_b: float, *, option: int = 0, power: float = 0.8, alpha: float = 0.05
) -> int:
    """Respondents per group (or per round) to tell shares a and b of ``option`` apart.

    >>> from ldp.designs import Warner
    >>> two_shares_sample_size(Warner(k=2, epsilon=float(np.log(3)), p="3/4"), 0.3, 0.4)
    1531
    """
    if share_a == share_b:
        raise ValueError(f"share_a and share_b must differ, got {share_a!r} twice")
    z = _check_test(power, alpha)
    total = per_respondent_variance(mechanism, share_a, option=option) + per_respondent_variance(
        mechanism, share_b, option=option
    )
    return math.ceil(z * z * total / (share_a - share_b) ** 2)


def two_shares_power(
    mechanism: Any, share_a: float, share_b: float, n: int, *, option: int = 0, alpha: float = 0.05
) -> float:
    """Power of the two-sided Wald test at n respondents per group: both tails of the normal.

    >>> from ldp.designs import Warner
    >>> round(two_shares_power(Warner(k=2, epsilon=float(np.log(3)), p="3/4"), 0.3, 0.4, 1531), 3)
    0.8
    """
    if not n > 0:
        raise ValueError(f"n must be a positive number of respondents, got {n!r}")
    _check_test(0.5, alpha)
    sd = math.sqrt(
        (
            per_respondent_variance(mechanism, share_a, option=option)
            + per_respondent_variance(mechanism, share_b, option=option)
        )
        / n
    )
    shift, z = abs(share_a - share_b) / sd, float(stats.norm.ppf(1 - alpha / 2))
    return float(stats.norm.cdf(shift - z) + stats.norm.cdf(-shift - z))


def regression_information(
    mechanism: Any, rows: ArrayLike, row_shares: ArrayLike, beta: ArrayLike, *, baseline: int | None = None
) -> np.ndarray:
    """One respondent's expected information about the coefficients (flattened (p, k - 1), C order).

    sum_r q_r sum_y P(y | x_r) s_ry s_ry^T with s_ry = x_r (w_ry - pi_r)_free (module docstring).
    """
    channel = channel_of(mechanism)
    k = channel.shape[0]
    x = np.atleast_2d(np.asarray(rows, dtype=float))
    q = np.asarray(row_shares, dtype=float)
    coefficients = np.asarray(beta, dtype=float).reshape(x.shape[1], k - 1)
    if q.shape != (x.shape[0],) or np.any(q < 0) or not np.isclose(q.sum(), 1.0, atol=1e-9):
        raise ValueError(f"row_shares must be {x.shape[0]} non-negative shares summing to 1, got {row_shares!r}")
    base = k - 1 if baseline is None else baseline
    free = [v for v in range(k) if v != base]
    pi = special.softmax(np.insert(x @ coefficients, base, 0.0, axis=1), axis=1)
    information = np.zeros((coefficients.size, coefficients.size))
    for xr, pr, qr in zip(x, pi, q, strict=True):
        reports = channel.T @ pr  # P(y | x_r)
        for y in range(k):
            posterior = pr * channel[:, y] / reports[y]
            score = np.outer(xr, (posterior - pr)[free]).ravel()
            information += qr * reports[y] * np.outer(score, score)
    return information


def regression_sample_size(
    mechanism: Any,
    rows: ArrayLike,
    row_shares: ArrayLike,
    beta: ArrayLike,
    coefficient: tuple[int, int] = (1, 0),
    *,
    baseline: int | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
) -> int:
    """Respondents needed to detect coefficient ``coefficient`` = (covariate j, option column) of beta.

    ``rows``: the distinct covariate rows (with intercept), ``row_shares`` their population shares.

    >>> from ldp.designs import ForcedResponse
    >>> design = ForcedResponse(k=2, epsilon=float(np.log(5)), forced=["1/6", "1/6"])
    >>> regression_sample_size(design, [[1, 0], [1, 1]], [0.5, 0.5], [[-0.4], [0.5]])
    1169
    """
    z = _check_test(power, alpha)
    information = regression_information(mechanism, rows, row_shares, beta, baseline=baseline)
    columns = channel_of(mechanism).shape[0] - 1
    j, column = coefficient
    size = float(np.asarray(beta, dtype=float).reshape(-1, columns)[j, column])
    if size == 0:
        raise ValueError(f"coefficient {coefficient!r} of beta, the effect to detect, must not be 0")
    variance = float(np.linalg.inv(information)[j * columns + column, j * columns + column])
    return math.ceil(z * z * variance / size**2)
