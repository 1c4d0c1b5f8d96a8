"""Error bands for frequency estimates: per option, and for all options at once.

``unit_variances[v, t]`` is the variance of option v's unbiased estimate from one report with
answer t; with the other shares held in proportion to the Norm-Sub estimate, n times the
variance of option v's estimate is affine in its share theta, a_v + b_v theta
(:func:`affine_variance_terms`). The bands invert tests under that normal model: by |x - theta|
(:func:`score_interval`, like Wilson's) or by the likelihood ratio against the best share in
[0, 1] (:func:`unified_interval`, Feldman and Cousins'); :func:`simultaneous_bands` makes either,
or their hull, hold for every option at once (Šidák's level, :func:`simultaneous_level`).

References
----------
1. E. B. Wilson. "Probable inference, the law of succession, and statistical inference."
   JASA 22, 1927.
2. G. J. Feldman, R. D. Cousins. "Unified approach to the classical statistical analysis of small
   signals." Phys. Rev. D 57, 1998.
3. Z. Šidák. "Rectangular confidence regions for the means of multivariate normal
   distributions." JASA 62, 1967.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from ldp.simplex import project_onto_simplex

__all__ = [
    "Interval",
    "affine_unified_interval",
    "affine_variance_terms",
    "containing",
    "score_interval",
    "simultaneous_bands",
    "simultaneous_level",
    "unified_covers",
    "unified_interval",
]


class Interval(NamedTuple):
    """Lower and upper ends of a confidence interval, one entry per option."""

    low: np.ndarray
    high: np.ndarray


def containing(band: Interval, point: ArrayLike) -> Interval:
    """The smallest band that contains ``band`` and the point shown with it, per option.

    A results page shows a point estimate inside its band; the bands here are made from the
    unbiased estimate (so that their coverage does not depend on which consistent estimate is
    shown), and a consistent point can lie outside them. Widening the band to the point keeps every
    share the band held, so its coverage can only rise.

    >>> containing(Interval(np.array([0.1, 0.2]), np.array([0.3, 0.4])), [0.35, 0.3]).high.tolist()
    [0.35, 0.4]
    """
    p = np.asarray(point, dtype=float)
    return Interval(np.minimum(band.low, p), np.maximum(band.high, p))


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
    c = float(special.ndtri(0.5 + level / 2)) ** 2 / n
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


def _unified_acceptance(d0: np.ndarray, d1: np.ndarray, level: float, iterations: int = 64) -> Interval:
    """Acceptance interval [L, U] of Feldman and Cousins' ordering for u ~ N(0, 1) on [-d0, d1].

    With x = theta + sd u and the fitted share clip(x, 0, 1), the likelihood-ratio statistic is
    u^2 inside [-d0, d1], and -2 u d0 - d0^2 below, 2 u d1 - d1^2 above (Feldman, Cousins 1998,
    for a Gaussian mean known to lie in an interval). Ranking u by it, the accepted set is
    {t(u) <= c}: L = -(c + d0^2) / (2 d0) when d0 < sqrt(c), else -sqrt(c), and likewise U; c is
    the root of g(c) = Phi(U) - Phi(L) - level, which increases with c.

    The root is found by Newton's method kept inside a bisection bracket (a Newton step that
    leaves the bracket is replaced by its midpoint), with g'(c) = phi(U) U'(c) - phi(L) L'(c),
    U'(c) = 1 / (2 d1) when d1 < sqrt(c), else 1 / (2 sqrt(c)) (and likewise L'): 5 to 8 steps to
    |g| < 1e-14 where plain bisection took 48.
    """
    d0, d1 = np.maximum(d0, 1e-12), np.maximum(d1, 1e-12)

    def bounds(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r = np.sqrt(c)
        lower = np.where(d0 < r, -(c + d0**2) / (2 * d0), -r)
        upper = np.where(d1 < r, (c + d1**2) / (2 * d1), r)
        return lower, upper

    # Away from both edges (d0, d1 >= the two-sided quantile) the region is the usual |u| <= z.
    z = float(special.ndtri(0.5 + level / 2))
    c = np.full_like(d0, z * z)
    near = (d0 < z) | (d1 < z)
    if near.any():
        full_d0, full_d1 = d0, d1
        d0, d1 = d0[near], d1[near]
        # At c = z^2 the region contains [-z, z] (since (c + d^2) / (2 d) >= sqrt(c)): g >= 0 there.
        below, above = np.zeros_like(d0), np.full_like(d0, z * z)
        guess = np.full_like(d0, z * z)
        active = np.ones(d0.shape, dtype=bool)
        for _ in range(iterations):
            r = np.sqrt(guess)
            lower, upper = bounds(guess)
            gap = special.ndtr(upper) - special.ndtr(lower) - level
            short = gap < 0
            below, above = np.where(short, guess, below), np.where(short, above, guess)
            active &= (np.abs(gap) > 1e-14) & (above - below > 1e-13)
            if not active.any():
                break
            slope = (np.exp(-(upper**2) / 2) / np.where(d1 < r, 2 * d1, 2 * r)) + (
                np.exp(-(lower**2) / 2) / np.where(d0 < r, 2 * d0, 2 * r)
            )
            step = guess - gap * math.sqrt(2 * math.pi) / np.maximum(slope, 1e-300)
            inside = (step > below) & (step < above)
            guess = np.where(active, np.where(inside, step, (below + above) / 2), guess)
        c[near] = guess
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
