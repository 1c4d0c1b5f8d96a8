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
to err less by at least ``margin``. With ``focus`` it also scores focused response
(:class:`~ldp.mechanisms.focus.FocusedResponse`) on the m options phase 1 found largest,
m = 1 .. :data:`MAX_FOCUS`: the named options by the same E max |Z_v|, the options left in the
bucket by E max |Z_v| with phase 1's variances (their split comes from phase 1's reports alone),
the design's risk the larger of the two.

Joint estimate. Versions whose reports do not identify every option on their own (focused response)
are combined by the joint likelihood of all versions' tallies, :func:`joint_shares`: with version
i's n_i reports read as draws from Mult(n_i, C_i f) (C_i the report-given-answer matrix, columns
summing to 1: exact for k-RR and focused response; for subset selection, OUE and OLH the support
counts' pseudo-likelihood of :func:`ldp.ibu.support_bayesian_update`), EM for incomplete
multinomial data (Dempster, Laird and Rubin 1977, ref. 3; Agrawal and Aggarwal 2001, ref. 4)
iterates

    f <- sum_i (n_i / N) f * C_i^T (s_i / (C_i f)),       s_i = version i's tally / its total,

which keeps f on the simplex and increases the joint (pseudo-)likelihood. The phase-2 bucket total
and the phase-1 reports together identify every option.

References
----------
1. W. G. Cochran. "The combination of estimates from different experiments." Biometrics 10, 1954.
2. T. Wang, J. Blocki, N. Li, S. Jha. "Locally differentially private protocols for frequency
   estimation." USENIX Security 2017. (The candidates' variances.)
3. A. P. Dempster, N. M. Laird, D. B. Rubin. "Maximum likelihood from incomplete data via the EM
   algorithm." JRSS B 39(1), 1977.
4. D. Agrawal, C. C. Aggarwal. "On the design and quantification of privacy preserving data
   mining algorithms." PODS 2001.
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
from ldp.ibu import SUPPORT_COUNT_MECHANISMS, support_counts
from ldp.intervals import simultaneous_bands, unified_interval
from ldp.mechanisms import Mechanism, make_mechanism
from ldp.selection import expected_largest
from ldp.simplex import project_onto_simplex

ArrayLikeShares = Sequence[float] | np.ndarray

__all__ = [
    "Combination",
    "Design",
    "combine",
    "combined_consistent",
    "design_candidates",
    "focus_candidates",
    "joint_shares",
    "retune",
    "retune_from_tally",
]


#: A new design must be expected to err this much less than the advisor's (a fraction) to replace it.
MARGIN = 0.05
#: The most options focused response names (:func:`focus_candidates`).
MAX_FOCUS = 8


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


def focus_candidates(shares: ArrayLikeShares, k: int, epsilon: float) -> list[Mechanism]:
    """Focused response on the m largest options of ``shares``, m = 1 .. min(k - 2, MAX_FOCUS).

    The bucket's split (``within``) is the other options' shares, floored at 1e-6 of the bucket.
    """
    f = project_onto_simplex(np.asarray(shares, dtype=float))
    order = np.argsort(-f, kind="stable")
    designs = []
    for m in range(1, min(k - 2, MAX_FOCUS) + 1):
        focus, rest = order[:m], np.sort(order[m:])
        within = np.maximum(f[rest], 1e-6 * max(f[rest].sum(), 1e-12))
        designs.append(make_mechanism("focus", k=k, epsilon=epsilon, focus=focus.tolist(), within=within.tolist()))
    return designs


def _risk(mechanism: Mechanism, shares: np.ndarray, n: int, left: np.ndarray | None = None) -> float:
    """E max |error| of ``mechanism``'s version from n reports at ``shares``; for focused response,
    the larger of its named options' and the bucket's (``left``: per-option variances of phase 1's
    estimate, which alone splits the bucket; by default the bucket's phase-1 shares themselves)."""
    variances = np.maximum(mechanism.unit_variances @ shares, 0.0) / n
    focus = mechanism.params().get("focus")
    if focus is None:
        return float(expected_largest(variances[None, :])[0])
    named = float(expected_largest(variances[focus][None, :])[0])
    if left is None:
        return max(named, float(np.delete(shares, focus).max(initial=0.0)))
    return max(named, float(expected_largest(np.delete(left, focus)[None, :])[0]))


def retune(
    phase_one: ArrayLikeShares,
    k: int,
    epsilon: float,
    n_remaining: int,
    *,
    margin: float = MARGIN,
    evenness_p: float | None = None,
    focus: bool = False,
    phase_one_variances: ArrayLikeShares | None = None,
    current: Mechanism | None = None,
) -> Design:
    """The design for the respondents still to come, chosen from the phase-1 estimate alone.

    ``phase_one`` is the phase-1 consistent estimate (shares summing to 1); ``n_remaining`` the
    number of respondents expected after it. The advisor's design (for evenly spread answers) is
    kept unless a candidate of :func:`design_candidates` is expected to err less by a factor
    (1 - ``margin``) at ``phase_one``, and, when ``evenness_p`` (the phase-1 chi-square test of
    evenly spread answers, :func:`~ldp.consistency.evenness_p_value`) is given, only if that test
    rejects them at :data:`~ldp.consistency.EVEN_TEST_LEVEL`: answers that still look even are what
    the advisor's design was chosen for, and switching designs then only splits the reports into
    versions (measured: docs/experiments/adaptive.md). With ``focus``, focused response on the
    options phase 1 found largest is a candidate too (:func:`focus_candidates`; its versions are
    estimated together by :func:`joint_shares`). Its bucket's options are scored by
    ``phase_one_variances`` (each option's variance of the phase-1 estimate, V_1 f_hat / n_1),
    the error phase 1's reports alone leave them, when given; else by their phase-1 shares (an
    optimistic bound that assumes phase 1 named the right options: measured in
    docs/experiments/adaptive.md, it loses). ``current`` is the design to keep unless another
    wins (by default the advisor's). Nothing here reads a phase-2 respondent's answer: the design
    is fixed before they answer.

    >>> design = retune(np.r_[0.9, np.full(9, 0.1 / 9)], 10, 1.0, 1000)
    >>> design.mechanism, design.params, round(design.expected_largest_error, 3)
    ('subset', {'subset_size': 3}, 0.102)
    """
    shares = project_onto_simplex(np.asarray(phase_one, dtype=float))
    if current is None:
        best = recommend(k, epsilon, n_remaining).best
        current = make_mechanism(best.mechanism, k=k, epsilon=epsilon, **best.params)
    chosen, risk = current, _risk(current, shares, n_remaining)
    if evenness_p is not None and evenness_p > EVEN_TEST_LEVEL:
        return Design(current.name, current.params(), risk)
    bound = None if phase_one_variances is None else np.asarray(phase_one_variances, dtype=float)
    candidates = design_candidates(k, epsilon) + (focus_candidates(shares, k, epsilon) if focus else [])
    for candidate in candidates:
        candidate_risk = _risk(candidate, shares, n_remaining, bound)
        if candidate_risk < (1 - margin) * risk and candidate_risk < _risk(chosen, shares, n_remaining, bound):
            chosen = candidate
    final = _risk(chosen, shares, n_remaining, bound)
    return Design(chosen.name, chosen.params(), final)


def retune_from_tally(mechanism: Mechanism, tally: Any, n_remaining: int, *, margin: float = MARGIN) -> Design:
    """:func:`retune` as a live survey runs it: from phase 1's tally alone (``mechanism``'s reports).

    The phase-1 estimate is the tally's "auto" consistent estimate and ``evenness_p`` its chi-square
    test of evenly spread answers; ``mechanism`` itself is the design to keep unless a candidate of
    :func:`design_candidates` is expected to err less by ``margin``. The tally holds randomized
    reports only, so the choice is post-processing of other respondents' epsilon-LDP outputs.

    >>> from ldp import make_mechanism
    >>> from ldp.tally import Tally
    >>> krr = make_mechanism("krr", k=3, epsilon=1.0)
    >>> retune_from_tally(krr, Tally(100, np.array([40, 30, 30])), 900).mechanism
    'krr'
    """
    unbiased = mechanism.estimate(tally).proportions
    p_value = evenness_p_value(unbiased, tally.n, *mechanism.even_test)
    shares = mechanism.consistent_estimate(tally, "auto").proportions
    return retune(
        shares, mechanism.k, mechanism.epsilon, n_remaining, margin=margin, evenness_p=p_value, current=mechanism
    )


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


def _channel(mechanism: Mechanism, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(C, s): version's report-given-answer matrix (columns summing to 1) and its tally's shares."""
    if mechanism.name in SUPPORT_COUNT_MECHANISMS:
        supports, a, b = support_counts(mechanism, np.atleast_2d(np.asarray(counts, dtype=float)))
        k = mechanism.k
        channel = ((a - b) * np.eye(k) + b) / (a + (k - 1) * b)
    else:
        supports, channel = np.atleast_2d(np.asarray(counts, dtype=float)), mechanism.response_matrix
        if channel.shape[0] != supports.shape[1] or not np.allclose(channel.sum(axis=0), 1.0):
            raise ValueError(f"{mechanism.name} tallies no multinomial of its reports; joint_shares cannot read it")
    totals = supports.sum(axis=1, keepdims=True)
    s = np.divide(supports, totals, out=np.zeros(supports.shape), where=totals > 0)
    return channel, s


def joint_shares(
    versions: Sequence[tuple[Mechanism, np.ndarray, int]], *, iterations: int = 10_000, tolerance: float = 1e-9
) -> np.ndarray:
    """Every option's share from all versions' tallies at once, by EM on their joint likelihood.

    ``versions`` are (mechanism, tally counts, n), one per version of the question (k options each);
    tally counts may be 2-d (one survey per row, the same versions), and the result then has a row
    per survey. EM as the module docstring states, from evenly spread shares, until no share moves
    by more than ``tolerance`` or after ``iterations`` steps (the cap of
    :func:`ldp.ibu.support_bayesian_update`). A k-RR version alone gives k-RR's maximum likelihood.

    >>> from ldp import make_mechanism
    >>> one, two = make_mechanism("krr", k=4, epsilon=1.0), make_mechanism("focus", k=4, epsilon=1.0, focus=[0])
    >>> f = np.array([0.5, 0.3, 0.1, 0.1])
    >>> versions = [(one, 1000 * one.response_matrix @ f, 1000), (two, 4000 * two.response_matrix @ f, 4000)]
    >>> joint_shares(versions).round(6).tolist()
    [0.5, 0.3, 0.1, 0.1]
    """
    channels = [_channel(mechanism, counts) for mechanism, counts, _ in versions]
    weights = np.array([n for _, _, n in versions], dtype=float)
    rows = channels[0][1].shape[0]
    present = np.stack([s.sum(axis=1) > 0 for _, s in channels])  # a version with no report says nothing
    share = np.where(present, weights[:, None], 0.0)
    share = share / np.maximum(share.sum(axis=0, keepdims=True), 1e-300)
    k = channels[0][0].shape[1]
    f = np.full((rows, k), 1.0 / k)
    active = np.arange(rows)
    for _ in range(iterations):
        g = f[active]
        updated = np.zeros_like(g)
        for (channel, s), w in zip(channels, share, strict=True):
            expected = g @ channel.T  # (rows, reports): C f
            ratio = np.divide(s[active], expected, out=np.zeros_like(expected), where=expected > 0)
            updated += w[active, None] * g * (ratio @ channel)
        moving = np.max(np.abs(updated - g), axis=1) >= tolerance
        f[active] = updated
        active = active[moving]
        if active.size == 0:
            break
    return f[0] if np.ndim(versions[0][1]) == 1 else f
