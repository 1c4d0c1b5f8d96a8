"""Two-phase (adaptive) designs: re-tune a question's randomization from the first respondents' estimate.

The advisor (:mod:`ldp.advisor`) chooses a mechanism before any answer arrives, for evenly spread
answers. A live survey can do better: after the first part of the expected respondents (phase 1,
say 10-20 %), :func:`retune` chooses the mechanism and parameters for everyone after (phase 2) from
the phase-1 estimate, and :func:`combine` merges the versions' unbiased estimates by inverse
variance.

Privacy. Every respondent is randomized by one fixed epsilon-LDP mechanism (each is checked exactly
by tests/ldp/test_privacy_exact.py), chosen before their answer is read: phase 2's mechanism is a
function of phase-1 reports only, which are already randomized, so choosing it is post-processing of
epsilon-LDP outputs of *other* respondents and costs nothing to anyone; a phase-2 respondent's report
is the output of an epsilon-LDP mechanism fixed before they answered. (Sequential composition does
not enter: nobody answers twice. tests/ldp/test_adaptive.py checks that the choice reads nothing but
the phase-1 estimate, and that each candidate's worst-case log ratio is epsilon.)

Combination. With u_i the unbiased estimate of version i from n_i reports and V_i its mechanism's
per-report variances (:attr:`~ldp.mechanisms.base.Mechanism.unit_variances`), option v's variance
is s_iv^2 = (V_i f)_v / n_i. The combination sum_i w_iv u_iv with w_iv proportional to 1 / s_iv^2,
evaluated at one common plug-in f (the pooled Norm-Sub estimate, not each version's own: weights
that move with a version's own error would bias the result), is unbiased, and among per-option
weightings it has the smallest variance, 1 / sum_i (1 / s_iv^2) (the inverse-variance rule; e.g.
Cochran 1954). Its per-report variances, n sum_i w_iv^2 V_i[v, t] / n_i, let the same consistent
estimators and bands as a single version apply (:func:`combined_consistent`).

Design choice. :func:`retune` scores each candidate design (k-RR, subset selection of every size,
OUE, OLH) by the expected largest error of its unbiased estimate from the phase-2 reports at the
phase-1 estimate, E max_v |Z_v| with Z_v ~ N(0, (V f_hat)_v / n_2) (independence approximation:
:func:`ldp.selection.expected_largest`), and keeps the advisor's design unless another is expected
to err less by at least ``margin``.

References
----------
1. W. G. Cochran. "The combination of estimates from different experiments." Biometrics 10, 1954.
2. T. Wang, J. Blocki, N. Li, S. Jha. "Locally differentially private protocols for frequency
   estimation." USENIX Security 2017. (The candidates' variances.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ldp.advisor import recommend
from ldp.consistency import (
    EMPIRICAL_BAYES_OPTIONS,
    EVEN_TEST_LEVEL,
    choose_consistency,
    empirical_bayes_shares,
    evenness_p_value,
    share_prior,
)
from ldp.estimates import FrequencyEstimate
from ldp.intervals import simultaneous_bands, unified_interval
from ldp.mechanisms import Mechanism, make_mechanism
from ldp.selection import expected_largest
from ldp.simplex import project_onto_simplex

ArrayLikeShares = Sequence[float] | np.ndarray

__all__ = ["Combination", "Design", "combine", "combined_consistent", "design_candidates", "retune"]


#: A new design must be expected to err this much less than the advisor's (a fraction) to replace it.
MARGIN = 0.05


@dataclass(frozen=True)
class Design:
    """A mechanism and its parameters, and the largest error it is expected to make."""

    mechanism: str
    params: dict[str, Any]
    expected_largest_error: float

    def build(self, k: int, epsilon: float) -> Mechanism:
        return make_mechanism(self.mechanism, k=k, epsilon=epsilon, **self.params)


def design_candidates(k: int, epsilon: float) -> list[Mechanism]:
    """k-RR, subset selection of every size 2 .. k - 1 (size 1 is k-RR), OUE and OLH."""
    designs = [make_mechanism("krr", k=k, epsilon=epsilon)]
    designs += [make_mechanism("subset", k=k, epsilon=epsilon, subset_size=d) for d in range(2, k)]
    designs += [make_mechanism("oue", k=k, epsilon=epsilon), make_mechanism("olh", k=k, epsilon=epsilon)]
    return designs


def _risk(mechanism: Mechanism, shares: np.ndarray, n: int) -> float:
    return float(expected_largest(np.maximum(mechanism.unit_variances @ shares, 0.0)[None, :] / n)[0])


def retune(
    phase_one: ArrayLikeShares,
    k: int,
    epsilon: float,
    n_remaining: int,
    *,
    margin: float = MARGIN,
    evenness_p: float | None = None,
) -> Design:
    """The design for the respondents still to come, chosen from the phase-1 estimate alone.

    ``phase_one`` is the phase-1 consistent estimate (shares summing to 1); ``n_remaining`` the
    number of respondents expected after it. The advisor's design (for evenly spread answers) is
    kept unless a candidate of :func:`design_candidates` is expected to err less by a factor
    (1 - ``margin``) at ``phase_one``, and, when ``evenness_p`` (the phase-1 chi-square test of
    evenly spread answers, :func:`~ldp.consistency.evenness_p_value`) is given, only if that test
    rejects them at :data:`~ldp.consistency.EVEN_TEST_LEVEL`: answers that still look even are what
    the advisor's design was chosen for, and switching designs then only splits the reports into
    versions (measured: docs/experiments/adaptive.md). Nothing here reads a phase-2 respondent's
    answer: the design is fixed before they answer.

    >>> design = retune(np.r_[0.9, np.full(9, 0.1 / 9)], 10, 1.0, 1000)
    >>> design.mechanism, design.params, round(design.expected_largest_error, 3)
    ('subset', {'subset_size': 3}, 0.102)
    """
    shares = project_onto_simplex(np.asarray(phase_one, dtype=float))
    best = recommend(k, epsilon, n_remaining).best
    current = make_mechanism(best.mechanism, k=k, epsilon=epsilon, **best.params)
    chosen, risk = current, _risk(current, shares, n_remaining)
    if evenness_p is not None and evenness_p > EVEN_TEST_LEVEL:
        return Design(current.name, current.params(), risk)
    for candidate in design_candidates(k, epsilon):
        candidate_risk = _risk(candidate, shares, n_remaining)
        if candidate_risk < (1 - margin) * risk and candidate_risk < _risk(chosen, shares, n_remaining):
            chosen = candidate
    final = _risk(chosen, shares, n_remaining)
    return Design(chosen.name, chosen.params(), final)


@dataclass(frozen=True)
class Combination:
    """The inverse-variance combination of several versions' unbiased estimates."""

    unbiased: np.ndarray
    n: int
    unit_variances: np.ndarray
    """n Var(u_v) = (unit_variances @ f)_v for the combined estimate (weights held fixed)."""
    weights: np.ndarray
    """Per version and option, shape (versions, k); each column sums to 1."""

    def variances(self, shares: np.ndarray) -> np.ndarray:
        return self.unit_variances @ shares / self.n


def combine(versions: Sequence[tuple[Mechanism, np.ndarray, int]]) -> Combination:
    """Combine (mechanism, unbiased estimate, n) of each version by per-option inverse variance.

    The weights are evaluated at the pooled Norm-Sub estimate (each version's unbiased estimate
    weighted by its n), the same for every version.

    >>> from ldp import make_mechanism
    >>> a, b = make_mechanism("krr", k=3, epsilon=1.0), make_mechanism("krr", k=3, epsilon=2.0)
    >>> c = combine([(a, np.array([0.5, 0.3, 0.2]), 100), (b, np.array([0.4, 0.4, 0.2]), 100)])
    >>> bool(np.all(c.weights[1] > c.weights[0]))
    True
    """
    total = sum(n for _, _, n in versions)
    pooled = project_onto_simplex(sum(n * np.asarray(u, dtype=float) for _, u, n in versions) / total)
    precision = np.array([n / np.maximum(m.unit_variances @ pooled, 1e-300) for m, _, n in versions])
    weights = precision / precision.sum(axis=0, keepdims=True)
    unbiased = np.sum([w * np.asarray(u, dtype=float) for w, (_, u, _) in zip(weights, versions, strict=True)], axis=0)
    unit = sum(total * (w**2)[:, None] * m.unit_variances / n for w, (m, _, n) in zip(weights, versions, strict=True))
    return Combination(unbiased, total, np.asarray(unit), weights)


def combined_consistent(combination: Combination, method: str = "auto") -> FrequencyEstimate:
    """The combined estimate made consistent, as :meth:`Mechanism.consistent_estimate` does for one version.

    ``"auto"`` follows :meth:`~ldp.mechanisms.base.Mechanism.automatic_consistency` with the
    combination's variances: empirical Bayes when 5 <= k <= 64 and the chi-square test does not reject
    evenly spread answers (the test's covariance is taken diagonal here: the versions'
    covariances do not combine into one mechanism's), else Norm-Sub or clipping by
    :func:`~ldp.consistency.choose_consistency` with a diagonal covariance. The bands are the unified
    bands of the combined unbiased estimate.
    """
    u, n, v = combination.unbiased, combination.n, combination.unit_variances
    k = u.size

    def covariance(f: np.ndarray) -> np.ndarray:
        return np.diag(np.maximum(v @ f, 0.0) / n)

    bands = unified_interval(v, u, n)
    if method == "auto":
        even = np.full(k, 1.0 / k)
        precision = np.diag(1.0 / np.maximum(v @ even, 1e-300))
        if k in EMPIRICAL_BAYES_OPTIONS and evenness_p_value(u, n, precision, k) > EVEN_TEST_LEVEL:
            method = "eb"
        else:
            region = simultaneous_bands(v, u, n, correction="bonferroni", interval="score")
            method = choose_consistency(u, covariance, region, prior=share_prior(v, u, n))
    base = FrequencyEstimate(u, covariance(project_onto_simplex(u)), n)
    if method == "eb":
        shares = empirical_bayes_shares(v, u, n)
        return FrequencyEstimate(shares, base.covariance, n, "eb", unbiased=u, bands=bands)
    return base.consistent(method, bands=bands)  # type: ignore[arg-type]
