"""Privacy arithmetic: epsilon <-> probabilities, posterior bounds, exact ratio checks.

A mechanism is epsilon-locally differentially private when, for every report y and every
pair of true values v, v',

    P[y | v] <= e^epsilon * P[y | v'].

Every mechanism in :mod:`ldp.mechanisms` states the *exact* worst case of that ratio, and
:func:`worst_case_log_ratio` enumerates it from a table of report probabilities so the two can
be checked against each other.

References
----------
1. Seed 000 (k-RR blog post): p / q = e^epsilon, p = e^epsilon / (e^epsilon + k - 1).
2. Seed 001 (An, Kang, Hong), after Evfimievski, Gehrke, Srikant (PODS 2003): a gamma-amplifying
   mechanism admits no rho1-to-rho2 privacy breach when gamma <= rho2 (1 - rho1) / (rho1 (1 - rho2)).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, special, stats

__all__ = [
    "EPSILON_MAX",
    "EPSILON_MIN",
    "binary_keep_probability",
    "check_epsilon",
    "gdp_delta",
    "gdp_mu",
    "memoized_bit_log_ratios",
    "posterior_bound",
    "worst_case_log_ratio",
]

#: Budgets outside this range are refused: below it no survey size gives a usable estimate,
#: above it the report is (almost) the true answer and "privacy" would be a label only.
EPSILON_MIN = 0.01
EPSILON_MAX = 10.0


def check_epsilon(epsilon: float) -> float:
    """Return ``epsilon`` as a float, or raise ``ValueError`` naming the bad value.

    >>> check_epsilon(1)
    1.0
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating, np.integer)):
        raise ValueError(f"epsilon must be a number, got {epsilon!r}")
    value = float(epsilon)
    if not math.isfinite(value) or not EPSILON_MIN <= value <= EPSILON_MAX:
        raise ValueError(f"epsilon must lie in [{EPSILON_MIN}, {EPSILON_MAX}], got {epsilon!r}")
    return value


def binary_keep_probability(epsilon: float) -> float:
    """Probability that binary randomized response keeps a bit: e^epsilon / (e^epsilon + 1).

    This is k-RR with k = 2 (seed 000); CMS and dBitFlip use it per coordinate with epsilon / 2.

    >>> round(binary_keep_probability(math.log(3)), 12)
    0.75
    """
    # 1 / (1 + e^-epsilon) is the same number without overflow for large epsilon.
    return 1.0 / (1.0 + math.exp(-epsilon))


def posterior_bound(prior: ArrayLike, epsilon: float) -> np.ndarray:
    """Largest posterior belief an observer can reach from ``prior`` after one report.

    For an epsilon-LDP report, gamma = e^epsilon bounds the likelihood ratio, and by Bayes'
    rule a prior rho1 that the respondent's answer is X rises to at most

        rho2 = gamma * rho1 / (1 + (gamma - 1) * rho1),

    which is seed 001's breach condition gamma <= rho2 (1 - rho1) / (rho1 (1 - rho2)) solved
    for rho2 at equality.

    >>> float(posterior_bound(0.1, math.log(3)))
    0.25
    """
    rho1 = np.asarray(prior, dtype=float)
    if np.any((rho1 < 0) | (rho1 > 1)):
        raise ValueError(f"prior must lie in [0, 1], got {prior!r}")
    if math.isinf(epsilon):  # no privacy (an answer stored as given): any positive prior becomes certainty
        return np.where(rho1 > 0, 1.0, 0.0)
    gamma = math.exp(epsilon)
    return gamma * rho1 / (1.0 + (gamma - 1.0) * rho1)


def worst_case_log_ratio(report_probabilities: ArrayLike) -> float:
    """max over reports y and values v, v' of ln(P[y | v] / P[y | v']), by enumeration.

    ``report_probabilities[v, y]`` is P[report = y | true value = v]; each row sums to 1.
    A report impossible under one value but possible under another makes the ratio infinite.

    >>> p = binary_keep_probability(1.0)
    >>> round(worst_case_log_ratio([[p, 1 - p], [1 - p, p]]), 12)
    1.0
    """
    table = np.asarray(report_probabilities, dtype=float)
    if table.ndim != 2:
        raise ValueError(f"report_probabilities must be a 2-d table, got shape {table.shape}")
    if not np.allclose(table.sum(axis=1), 1.0, rtol=0, atol=1e-9):
        raise ValueError("each row of report_probabilities must sum to 1")
    possible = table > 0
    if np.any(possible.any(axis=0) & ~possible.all(axis=0)):
        return math.inf
    logs = np.log(table[:, possible.all(axis=0)])
    return float(np.max(logs.max(axis=0) - logs.min(axis=0)))


def gdp_delta(epsilon: float, mu: float) -> float:
    """delta(epsilon) of a mu-GDP mechanism: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).

    Seed 002, section 4 (after Dong, Roth, Su 2022, Corollary 2.13).

    >>> round(gdp_delta(1.0, 0.5), 6)
    0.00683
    """
    return float(stats.norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2))


def gdp_mu(epsilon: float, delta: float) -> float:
    """The mu whose mu-GDP mechanism is exactly (epsilon, delta)-DP (delta grows with mu).

    Solves :func:`gdp_delta` (seed 002) for mu; seed 002's table prints mu 1-2 % below this root.

    >>> round(gdp_mu(1.0, 1e-5), 4)
    0.2681
    """
    return float(optimize.brentq(lambda mu: gdp_delta(epsilon, mu) - delta, 1e-6, 50.0, xtol=1e-14, rtol=1e-14))


def memoized_bit_log_ratios(
    permanent: tuple[float, float], instant: tuple[float, float], rounds: int
) -> tuple[float, float]:
    """Worst log-ratios of ``rounds`` reports of one bit whose permanent layer is memoized.

    The true bit b gives a permanent bit b' that is 1 with probability ``permanent[b]`` and is kept
    for every round; each round reports a fresh bit that is 1 with probability ``instant[b']``.
    The rounds' bits matter through their number of ones s, with likelihood
    L_b(s) = permanent[b] q^s (1 - q)^(r - s) + (1 - permanent[b]) p^s (1 - p)^(r - s), (p, q) = instant.
    Returns (max_s ln L_1(s)/L_0(s), max_s ln L_0(s)/L_1(s)), exact. As r grows an observer learns
    b' and both tend to the permanent layer's own log-ratios; at r = 1 they are one report's.

    >>> a, b = memoized_bit_log_ratios((0.25, 0.75), (0.0, 1.0), 3)  # instant layer reveals b'
    >>> round(a, 12), round(b, 12)
    (1.098612288668, 1.098612288668)
    """
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    low, high = permanent
    p, q = instant
    s = np.arange(rounds + 1)
    # xlogy: 0 log 0 = 0, so deterministic instant layers (p = 0, q = 1) are allowed.
    log_q = special.xlogy(s, q) + special.xlogy(rounds - s, 1 - q)
    log_p = special.xlogy(s, p) + special.xlogy(rounds - s, 1 - p)

    def log_likelihood(one: float) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.logaddexp(np.log(one) + log_q, np.log1p(-one) + log_p)

    first, second = log_likelihood(high), log_likelihood(low)
    possible = np.isfinite(first) & np.isfinite(second)
    if np.any(np.isfinite(first) != np.isfinite(second)):
        return math.inf, math.inf
    difference = first[possible] - second[possible]
    return float(difference.max()), float(-difference.min())
