"""Cross-tabulation of two choice questions: the joint distribution of their answers.

Post hoc (any two questions already asked, each randomized on its own). Every mechanism here is
linear: a report's statistic z has E[z | answer t] = A e_t, so u = A^-1 z is a per-respondent
*unbiased indicator* of the answer (E[u | t] = e_t). The two questions are randomized
independently, so for a respondent with answers (t1, t2), E[u1 u2^T] = e_t1 e_t2^T, and

    F_hat = (1/n) sum_i u1_i u2_i^T = A1^-1 (L1^T T L2 / n) A2^-T,

with T = sum_i c1_i c2_i^T the k1' x k2' table of the two reports' *tally counts* (c, one row of
the mechanism's tally per report) and L the linear map from a report's counts to z. For k-RR,
c is the one-hot reported option, L = I, and F_hat = A1^-1 (T / n) A2^-T: the inverse of the
Kronecker product A1 (x) A2 applied to the table of report pairs. For the unary encodings c
holds the sent bits, and F_hat is the mean of the products of per-respondent unbiased indicators.

T is the sufficient statistic; the app sums it in the database from the stored report pairs
(``surveys.results.crosstabs.PAIRS_SQL``). This needs a statistic linear in the counts (z = c L, checked
by :func:`crosses_post_hoc`): the count-mean sketches' is affine and is refused.

Covariance, for a fixed population with joint answer shares F (derived here): with
S[t] = E[u u^T | t] (the one-report covariance plus e_t e_t^T),

    n Cov(vec F_hat) = sum_{t1, t2} F[t1, t2] S1[t1] (x) S2[t2] - diag(vec F),

and per cell n Var(F_hat[a, b]) = (W1 F W2^T - F)[a, b] with W = E[u_a^2 | t] (the mechanism's
``unit_variances`` + I): the cells' one-report variances are kron(W1, W2) - I, affine in F, so
the per-cell bands are the same unified intervals as a single question's.

Declared pairs: the browser encodes (v1, v2) as one answer v1 k2 + v2 of k1 k2 options and
randomizes it once with any mechanism at epsilon; the estimate is that mechanism's, reshaped.
The respondent spends that one epsilon for both questions (post hoc: epsilon1 + epsilon2, the
two questions' own budgets; a post-hoc cross-tab spends nothing more).

Conditional shares P(Q2 = b | Q1 = a) = F[a, b] / sum_b' F[a, b'] get delta-method intervals:
the gradient with respect to row a is (e_b - c_a) / R_a, c_a the row's conditional shares.

Bands for all at once: the cells' ``simultaneous`` bands (:func:`ldp.intervals.simultaneous_bands`
over the k1 k2 cells), and, on request, the marginals' and the conditional shares' normal bands at
Šidák's level (:func:`ldp.intervals.simultaneous_level`) for the k options of a marginal or the
k1 k2 shares given one question.

References
----------
1. T. Wang, J. Blocki, N. Li, S. Jha. "Locally differentially private protocols for frequency
   estimation." USENIX Security 2017. (The linear estimators.)
2. G. Fanti, V. Pihur, U. Erlingsson. "Building a RAPPOR with the unknown: privacy-preserving
   learning of associations and data dictionaries." PETS 2016. (Joint distributions of two
   randomized reports.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ldp.estimates import FrequencyEstimate
from ldp.intervals import (
    Interval,
    affine_unified_interval,
    affine_variance_terms,
    simultaneous_bands,
    simultaneous_level,
)
from ldp.mechanisms import KRandomizedResponse, Mechanism, Tally, make_mechanism
from ldp.mechanisms.bitflip import SampledUnaryEncoding
from ldp.mechanisms.cms import CountMeanSketch
from ldp.mechanisms.local_hashing import OptimalLocalHashing
from ldp.simplex import project_onto_simplex

__all__ = [
    "ConditionalShares",
    "CrosstabErrors",
    "JointEstimate",
    "Marginal",
    "PairTally",
    "crosses_post_hoc",
    "declared_estimate",
    "declared_joint",
    "declared_mechanism",
    "decode_pair",
    "encode_pair",
    "expected_errors",
    "pair_tally",
    "posthoc_estimate",
    "posthoc_expected_half_width",
    "report_counts",
]

Z_95 = float(stats.norm.ppf(0.975))
#: Largest k1 k2 for which the full covariance (k1 k2)^2 is computed.
MAX_CELLS = 1024
#: A row of conditional shares is "too noisy to read" when its total's standard error exceeds half
#: of it, or when any of its intervals reaches more than 0.25 either side (over half of [0, 1]).
NOISY_RELATIVE_ERROR = 0.5
NOISY_HALF_WIDTH = 0.25


@dataclass(frozen=True, eq=False)
class PairTally:
    """Sufficient statistic of post-hoc cross-tabs: n respondents and T = sum_i c1_i c2_i^T.

    >>> (PairTally(1, np.array([[1, 0], [0, 0]])) + PairTally(1, np.array([[0, 0], [0, 1]]))).table.tolist()
    [[1, 0], [0, 1]]
    """

    n: int
    table: np.ndarray

    def __add__(self, other: PairTally) -> PairTally:
        if self.table.shape != other.table.shape:
            raise ValueError(f"cannot add pair tallies of shapes {self.table.shape} and {other.table.shape}")
        return PairTally(self.n + other.n, self.table + other.table)


def report_counts(mechanism: Mechanism, packed: np.ndarray) -> np.ndarray:
    """Each packed report's own tally counts, shape (n, tally size): the rows whose sum is the tally."""
    if isinstance(mechanism, KRandomizedResponse):
        return np.eye(mechanism.k, dtype=np.int64)[packed[:, 0]]
    if isinstance(mechanism, SampledUnaryEncoding):
        return np.hstack(mechanism._unpack(packed)).astype(np.int64)
    if isinstance(mechanism, OptimalLocalHashing):
        coefficients, y = mechanism._unpack(packed)
        return (mechanism.hash_values(coefficients, np.arange(mechanism.k)[None, :]) == y[:, None]).astype(np.int64)
    if isinstance(mechanism, CountMeanSketch):
        return mechanism.report_signs(packed)
    return np.array([mechanism.tally(packed[i : i + 1]).counts for i in range(packed.shape[0])], dtype=np.int64)


def crosses_post_hoc(mechanism: Mechanism) -> bool:
    """Whether a report's statistic is linear in its tally counts, z = c @ L, as the post-hoc estimator needs.

    It is for k-RR, the unary encodings, OLH, subset selection, Hadamard response and d-bit flip.
    The sketches (CMS, HCMS) are affine, z = scale c + (1 - scale) / 2: with counts c that do not sum
    to a constant, L^T T L would drop the offset's cross terms (they need each question's own counts
    among the pairs, which T does not hold), so their post-hoc cells are biased and they are refused.

    >>> from ldp import make_mechanism
    >>> [crosses_post_hoc(make_mechanism(name, k=3, epsilon=1.0)) for name in ("krr", "cms")]
    [True, False]
    """
    size = mechanism.empty_tally().counts.size
    return bool(np.allclose(mechanism.observed_mean(Tally(1, np.zeros(size))), 0.0, atol=1e-12))


def _statistic_map(mechanism: Mechanism) -> np.ndarray:
    """L with z = c @ L for one report's counts c (observed_mean is linear in the counts at n = 1)."""
    if not crosses_post_hoc(mechanism):
        raise ValueError(f"{mechanism.name} reports are not linear in their counts, so they cannot be crossed post hoc")
    size = mechanism.empty_tally().counts.size
    return np.asarray(mechanism.observed_mean(Tally(1, np.eye(size))), dtype=float)


def pair_tally(first: Mechanism, second: Mechanism, packed_first: np.ndarray, packed_second: np.ndarray) -> PairTally:
    """T from the two questions' reports, row i of each from the same submission."""
    if packed_first.shape[0] != packed_second.shape[0]:
        raise ValueError(
            f"need one report of each question per respondent, got {packed_first.shape[0]} and {packed_second.shape[0]}"
        )
    c1, c2 = report_counts(first, packed_first), report_counts(second, packed_second)
    return PairTally(int(c1.shape[0]), c1.T @ c2)


@dataclass(frozen=True, eq=False)
class JointEstimate:
    """Estimated joint shares F[a, b] of (Q1 = a, Q2 = b), with covariance and 95 % bands.

    ``cells`` is unbiased (entries may be negative); ``consistent_cells`` is its projection onto
    the simplex. ``bands`` hold per cell, ``simultaneous`` for all k1 k2 cells at once.
    """

    cells: np.ndarray
    covariance: np.ndarray
    n: int
    bands: Interval
    simultaneous: Interval

    @property
    def shape(self) -> tuple[int, int]:
        return self.cells.shape

    @property
    def standard_errors(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None)).reshape(self.shape)

    @property
    def consistent_cells(self) -> np.ndarray:
        return project_onto_simplex(self.cells.reshape(-1)).reshape(self.shape)

    def marginal(self, which: str = "first", level: float = 0.95, *, simultaneous: bool = False) -> Marginal:
        """One question's shares, summed from the joint cells, with normal bands from the covariance.

        For a declared pair these are that question's shares as its respondents answered it within the
        pair: unbiased (sums of unbiased cells) with variance a' Cov a for the 0/1 summing vector a.
        With ``simultaneous`` the bands hold for all of the question's options at once: each is made at
        Šidák's per-option level (:func:`~ldp.intervals.simultaneous_level`), valid for a normal vector
        with any correlation.

        >>> from ldp import Tally
        >>> m = make_mechanism("krr", k=4, epsilon=2.0)
        >>> est = declared_estimate(m, Tally(1000, np.array([400, 100, 200, 300])), 2, 2)
        >>> [round(float(x), 3) for x in est.marginal("first").shares] == [round(float(x), 3) for x in est.cells.sum(1)]
        True
        """
        if which not in ("first", "second"):
            raise ValueError(f"which must be 'first' or 'second', got {which!r}")
        k1, k2 = self.shape
        summing = np.kron(np.eye(k1), np.ones((1, k2))) if which == "first" else np.kron(np.ones((1, k1)), np.eye(k2))
        shares = summing @ self.cells.reshape(-1)
        errors = np.sqrt(np.clip(np.diag(summing @ self.covariance @ summing.T), 0.0, None))
        z = _z(simultaneous_level(level, shares.size) if simultaneous else level)
        return Marginal(shares, errors, Interval(shares - z * errors, shares + z * errors))

    def conditional(
        self, given: str = "first", level: float = 0.95, *, simultaneous: bool = False
    ) -> ConditionalShares:
        """Shares of the other question's options among those who chose each option of ``given``.

        With ``simultaneous`` the intervals hold for all k1 k2 conditional shares given that question at
        once: each is made at Šidák's per-share level for k1 k2 shares. Which rows are too noisy to read
        does not depend on it (it is judged at ``level`` for each share on its own), so the choice of
        bands never hides or shows a row.

        >>> m = make_mechanism("krr", k=4, epsilon=2.0)
        >>> est = declared_estimate(m, Tally(2000, np.array([700, 300, 300, 700])), 2, 2)
        >>> own, joint = est.conditional(), est.conditional(simultaneous=True)
        >>> bool(np.all(joint.bands.high - joint.bands.low >= own.bands.high - own.bands.low))
        True
        """
        if given not in ("first", "second"):
            raise ValueError(f"given must be 'first' or 'second', got {given!r}")
        k1, k2 = self.shape
        cells, covariance = self.consistent_cells, self.covariance.reshape(k1, k2, k1, k2)
        unbiased = self.cells
        if given == "second":
            cells, unbiased = cells.T, unbiased.T
            covariance = covariance.transpose(1, 0, 3, 2)
        rows, columns = cells.shape
        z = _z(level)
        shares = np.full((rows, columns), np.nan)
        errors = np.full((rows, columns), np.nan)
        noisy = np.ones(rows, dtype=bool)
        for a in range(rows):
            block = covariance[a, :, a, :]
            total_se = math.sqrt(max(float(block.sum()), 0.0))
            total = float(cells[a].sum())
            noisy[a] = not (float(unbiased[a].sum()) > 0 and total_se <= NOISY_RELATIVE_ERROR * total)
            if total <= 0:
                continue
            shares[a] = cells[a] / total
            gradient = (np.eye(columns) - shares[a][:, None]) / total  # row b: d c_b / d F[a, :]
            errors[a] = np.sqrt(np.clip(np.einsum("bi,ij,bj->b", gradient, block, gradient), 0.0, None))
            noisy[a] |= bool(z * errors[a].max() > NOISY_HALF_WIDTH)
        half = errors * (_z(simultaneous_level(level, rows * columns)) if simultaneous else z)
        low, high = np.clip(shares - half, 0.0, 1.0), np.clip(shares + half, 0.0, 1.0)
        return ConditionalShares(given, shares, Interval(low, high), noisy, simultaneous)


@dataclass(frozen=True, eq=False)
class Marginal:
    """One question's shares derived from a joint estimate, their standard errors and 95 % bands."""

    shares: np.ndarray
    standard_errors: np.ndarray
    bands: Interval


@dataclass(frozen=True, eq=False)
class ConditionalShares:
    """shares[a, b]: of those who chose a in the ``given`` question, the share choosing b in the other.

    ``noisy[a]`` flags rows too noisy to read (the dashboard's small-n notice): the row total's
    standard error is more than half of it, its unbiased estimate is not positive, or an interval
    reaches more than :data:`NOISY_HALF_WIDTH` either side (each share's own 95 % interval); undefined
    rows are NaN. ``simultaneous``: whether ``bands`` hold for all the shares at once (Šidák).
    """

    given: str
    shares: np.ndarray
    bands: Interval
    noisy: np.ndarray
    simultaneous: bool = False


def _z(level: float) -> float:
    """The two-sided normal quantile of a band at ``level``."""
    return float(stats.norm.ppf(0.5 + level / 2))


def _second_moments(mechanism: Mechanism) -> np.ndarray:
    """S[t] = E[u u^T | answer t], shape (k, k, k)."""
    return mechanism.unit_covariances + np.eye(mechanism.k)[:, :, None] * np.eye(mechanism.k)[:, None, :]


def joint_covariance(first: Mechanism, second: Mechanism, cells: np.ndarray, n: int) -> np.ndarray:
    """n Cov(vec F_hat) / n for the fixed population with joint shares ``cells`` (module docstring)."""
    k1, k2 = cells.shape
    if k1 * k2 > MAX_CELLS:
        raise ValueError(f"a cross-tab of {k1} x {k2} cells is too large (at most {MAX_CELLS} cells)")
    s1, s2 = _second_moments(first), _second_moments(second)
    inner = np.einsum("ab,bkl->akl", cells, s2)  # (k1, k2, k2)
    outer = np.einsum("aij,akl->ikjl", s1, inner).reshape(k1 * k2, k1 * k2)
    return (outer - np.diag(cells.reshape(-1))) / n


def joint_unit_variances(first: Mechanism, second: Mechanism) -> np.ndarray:
    """kron(W1, W2) - I: the variance of one cell's estimate from one respondent with answers (t1, t2)."""
    w1 = first.unit_variances + np.eye(first.k)
    w2 = second.unit_variances + np.eye(second.k)
    return np.kron(w1, w2) - np.eye(first.k * second.k)


def _joint_estimate(cells: np.ndarray, covariance: np.ndarray, unit_variances: np.ndarray, n: int) -> JointEstimate:
    flat = cells.reshape(-1)
    a, b = (np.round(x, 12) for x in affine_variance_terms(unit_variances, flat))
    bands = affine_unified_interval(a, b, flat, n)
    joint = simultaneous_bands(unit_variances, flat, n)
    shape = cells.shape
    reshape = [Interval(i.low.reshape(shape), i.high.reshape(shape)) for i in (bands, joint)]
    return JointEstimate(cells, covariance, n, *reshape)


def posthoc_estimate(first: Mechanism, second: Mechanism, tally: PairTally) -> JointEstimate:
    """The joint distribution's unbiased estimate from the table of report pairs (module docstring).

    >>> from ldp import make_mechanism
    >>> m1, m2 = make_mechanism("krr", k=2, epsilon=2.0), make_mechanism("krr", k=3, epsilon=2.0)
    >>> answers1, answers2 = np.repeat([0, 1], 3000), np.tile([0, 1, 2], 2000)
    >>> t = pair_tally(m1, m2, m1.randomize(answers1, rng=1), m2.randomize(answers2, rng=2))
    >>> est = posthoc_estimate(m1, m2, t)
    >>> bool(np.all(np.abs(est.cells - 1 / 6) < 4 * est.standard_errors))
    True
    """
    if tally.n == 0:
        raise ValueError("cannot estimate from zero pairs of reports")
    l1, l2 = _statistic_map(first), _statistic_map(second)
    if tally.table.shape != (l1.shape[0], l2.shape[0]):
        raise ValueError(f"pair table must have shape {(l1.shape[0], l2.shape[0])}, got {tally.table.shape}")
    moments = l1.T @ tally.table @ l2 / tally.n
    cells = np.linalg.solve(first.response_matrix, np.linalg.solve(second.response_matrix, moments.T).T)
    plug_in = project_onto_simplex(cells.reshape(-1)).reshape(cells.shape)
    covariance = joint_covariance(first, second, plug_in, tally.n)
    return _joint_estimate(cells, covariance, joint_unit_variances(first, second), tally.n)


def encode_pair(first: ArrayLike, second: ArrayLike, k2: int) -> np.ndarray:
    """A declared pair's one answer: v1 k2 + v2.

    >>> encode_pair([0, 2], [1, 0], 3).tolist()
    [1, 6]
    """
    return np.asarray(first, dtype=np.int64) * k2 + np.asarray(second, dtype=np.int64)


def decode_pair(values: ArrayLike, k2: int) -> tuple[np.ndarray, np.ndarray]:
    """(v1, v2) from v1 k2 + v2."""
    values = np.asarray(values, dtype=np.int64)
    return values // k2, values % k2


def declared_mechanism(name: str, k1: int, k2: int, epsilon: float, **params: Any) -> Mechanism:
    """The mechanism randomizing a declared pair as one answer of k1 k2 options."""
    return make_mechanism(name, k=k1 * k2, epsilon=epsilon, **params)


def _check_declared(mechanism: Mechanism, k1: int, k2: int) -> None:
    if mechanism.k != k1 * k2:
        raise ValueError(f"a declared pair of {k1} x {k2} options needs a mechanism over {k1 * k2}, got {mechanism.k}")


def declared_estimate(mechanism: Mechanism, tally: Tally, k1: int, k2: int) -> JointEstimate:
    """A declared pair's joint estimate: the mechanism's estimate over k1 k2 options, reshaped."""
    _check_declared(mechanism, k1, k2)
    return declared_joint(mechanism, mechanism.estimate(tally), tally.n, k1, k2)


def declared_joint(mechanism: Mechanism, estimate: FrequencyEstimate, n: int, k1: int, k2: int) -> JointEstimate:
    """:func:`declared_estimate` from the mechanism's estimate over k1 k2 options of n reports, already made.

    >>> m = make_mechanism("krr", k=4, epsilon=2.0)
    >>> tally = Tally(1000, np.array([400, 100, 200, 300]))
    >>> joint = declared_joint(m, m.estimate(tally), 1000, 2, 2)
    >>> bool(np.array_equal(joint.cells, declared_estimate(m, tally, 2, 2).cells))
    True
    """
    _check_declared(mechanism, k1, k2)
    return _joint_estimate(estimate.proportions.reshape(k1, k2), estimate.covariance, mechanism.unit_variances, n)


def posthoc_expected_half_width(first: Mechanism, second: Mechanism, n: int) -> float:
    """Expected half-width of the widest 95 % cell band of a post-hoc cross-tab, at evenly spread answers.

    n Var(F_hat[a, b]) = (W1 F W2^T - F)[a, b] at F = 1 / (k1 k2) (module docstring): the
    fixed-population variance, so it is the randomization's noise alone.

    >>> from ldp import make_mechanism
    >>> m = make_mechanism("krr", k=2, epsilon=1.0)
    >>> # p = e / (1 + e): W = I + pq / (p - q)^2 = [[1.921, 0.921], ...]; 1.96 sqrt((2.842^2 / 4 - 1/4) / 1000)
    >>> round(posthoc_expected_half_width(m, m, 1000), 3)
    0.082
    """
    if n < 1:
        raise ValueError(f"n must be a positive number of respondents, got {n!r}")
    k1, k2 = first.k, second.k
    uniform = np.full((k1, k2), 1.0 / (k1 * k2))
    w1 = first.unit_variances + np.eye(k1)
    w2 = second.unit_variances + np.eye(k2)
    return Z_95 * math.sqrt(float(np.max(w1 @ uniform @ w2.T - uniform)) / n)


@dataclass(frozen=True)
class CrosstabErrors:
    """Expected half-width of the widest 95 % cell band, post hoc and declared, at evenly spread answers."""

    posthoc: float
    declared: float
    posthoc_epsilon: float
    declared_epsilon: float


def expected_errors(first: Mechanism, second: Mechanism, declared: Mechanism, n: int) -> CrosstabErrors:
    """What the builder shows: both ways' expected errors, and what each costs a respondent.

    Post hoc at F = 1/(k1 k2): n Var(F_hat[a, b]) = (W1 F W2^T)[a, b] - 1/(k1 k2); declared: the
    pair mechanism's own variance at evenly spread answers.

    >>> from ldp import make_mechanism
    >>> e = expected_errors(make_mechanism("krr", k=3, epsilon=1.0), make_mechanism("krr", k=3, epsilon=1.0),
    ...                     make_mechanism("krr", k=9, epsilon=2.0), 1000)
    >>> e.declared < e.posthoc, e.posthoc_epsilon == e.declared_epsilon
    (True, True)
    """
    if declared.k != first.k * second.k:
        raise ValueError(f"the declared mechanism must have {first.k * second.k} options, got {declared.k}")
    declared_variance = float(np.max(declared.report_variances()))
    return CrosstabErrors(
        posthoc_expected_half_width(first, second, n),
        Z_95 * math.sqrt(declared_variance / n),
        first.epsilon + second.epsilon,
        declared.epsilon,
    )
