"""Padding-and-sampling for multi-select questions (Wang, Li, Jha, IEEE S&P 2018, ref. 1).

Client: the chosen set x (at most l options) is padded to exactly l items with the dummy items
k, k + 1, ..., k + l - |x| - 1; one of the l items is sampled uniformly; the sampled item s is
reported with a frequency oracle over the d = k + l items: k-RR (``padding-krr``) or OLH
(``padding-olh``). A respondent who chose option j samples it with probability exactly 1/l.

Server: the oracle's unbiased estimate f_hat over the d items estimates the sampled items'
distribution f, whose entry for option j is pi_j / l; so pi_hat_j = l f_hat_j.

Privacy (derived here). With P(s | x) in {0, 1/l} for every item and k-RR's P(y | s) = p if
y = s, q otherwise, P(y | x) = q + (p - q) P(s = y | x), so the worst ratio is
(q + (p - q) / l) / q = 1 + (e^epsilon' - 1) / l for the oracle's epsilon', attained by
y = j, x = {j}, x' = {} (the paper spends epsilon' and states it as the bound). Sampling
amplifies: Murmur runs k-RR at e^epsilon' = 1 + l (e^epsilon - 1), so that the respondent spends
*exactly* the epsilon stated. OLH cannot use this: for one hash function all of a set's padded
items may hash to the reported value and none of another set's, so its worst case is p / q of
the oracle itself, and ``padding-olh`` runs OLH at epsilon (a bound; enumeration over a small
hash family attains it).

Variance (derived here). Each respondent's sampled item is random, so the per-report covariance
of the oracle's statistic averages E[z z^T | s] over s (as for one fixed answer) but subtracts
A M A^T with M = mean_i P(.|x_i) P(.|x_i)^T instead of A diag(f) A^T. Hence

    n Cov(f_hat) = [oracle's covariance at answers f] + diag(f) - M,

and M's diagonal is f / l (each probability is 0 or 1/l): per option,
n Var(pi_hat_j) = l^2 ((V f)_j + (1 - 1/l) f_j) with V the oracle's one-report variances, affine
in f, which the bands use. M's off-diagonal (pairs chosen together) is not identified by one
sampled item per respondent; ``covariance`` sets it to 0 between options, which overstates the
variance of sums. The mean number chosen, m = sum_j pi_j = l sum_{j<k} f_j, needs only
1^T M 1 over the options, = E|x|^2 / l^2, and the dummies identify the distribution of |x|:
P(|x| <= l - i) = l f_(k+i-1), so E|x|^2 = sum_{m=1..l} (2m - 1) P(|x| >= m).

References
----------
1. T. Wang, N. Li, S. Jha. "Locally differentially private frequent itemset mining." IEEE S&P
   2018, section 4 (padding-and-sampling, LDPMiner's successor SVIM).
2. T. Wang, J. Blocki, N. Li, S. Jha. "Locally differentially private protocols for frequency
   estimation." USENIX Security 2017. (k-RR, OLH.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ldp.intervals import Interval
from ldp.mechanisms.base import Mechanism, Tally, check_options, resolved
from ldp.mechanisms.krr import KRandomizedResponse
from ldp.mechanisms.local_hashing import OptimalLocalHashing
from ldp.multiselect.base import (
    SharesEstimate,
    StoredReports,
    all_sets,
    check_max_choices,
    check_sets,
    share_bands,
    spec_header,
)
from ldp.privacy import check_epsilon
from ldp.simplex import project_onto_simplex

__all__ = ["PaddingAndSampling", "padded_items"]

ORACLES = ("krr", "olh")


@dataclass(frozen=True, eq=False)
class AmplifiedRandomizedResponse(KRandomizedResponse):
    """k-RR whose own epsilon may exceed EPSILON_MAX: padding-and-sampling's amplified oracle.

    The respondent's budget is checked by :class:`PaddingAndSampling`; this oracle's epsilon'
    is ln(1 + l (e^epsilon - 1)), which can pass 10 when epsilon does not.
    """

    def _check_common(self) -> None:
        object.__setattr__(self, "k", check_options(self.k))
        epsilon = float(self.epsilon)
        if not (math.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"epsilon must be a positive number, got {self.epsilon!r}")
        object.__setattr__(self, "epsilon", epsilon)


def padded_items(sets: np.ndarray, max_choices: int) -> np.ndarray:
    """Each set padded to l items: its options in increasing order, then dummies k, k + 1, ...

    >>> padded_items(np.array([[True, False, True], [False, False, False]]), 2).tolist()
    [[0, 2], [3, 4]]
    """
    n, k = sets.shape
    sizes = sets.sum(axis=1)
    rank = np.arange(max_choices)[None, :]
    order = np.argsort(~sets, axis=1, kind="stable")[:, :max_choices]  # chosen options first
    return np.where(rank < sizes[:, None], order, k + rank - sizes[:, None]).astype(np.int64)


@dataclass(frozen=True, eq=False)
class PaddingAndSampling(StoredReports):
    """Padding-and-sampling with a k-RR (``oracle="krr"``) or OLH oracle over k + l items.

    >>> m = PaddingAndSampling(k=4, epsilon=1.0, max_choices=2)
    >>> m.domain_size, round(m.worst_case_log_ratio(), 12)
    (6, 1.0)
    >>> round(m.oracle.epsilon, 6)  # ln(1 + 2 (e - 1))
    1.48988
    """

    k: int
    epsilon: float
    max_choices: int | None = None
    oracle_name: str = "krr"
    oracle: Mechanism = field(init=False, repr=False)

    def __post_init__(self) -> None:
        k, ell = check_max_choices(self.k, self.max_choices)
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "max_choices", ell)
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        if self.oracle_name not in ORACLES:
            raise ValueError(f"oracle must be one of {ORACLES}, got {self.oracle_name!r}")
        if self.oracle_name == "krr":
            amplified = math.log1p(ell * math.expm1(self.epsilon))
            oracle: Mechanism = AmplifiedRandomizedResponse(k=k + ell, epsilon=amplified)
        else:
            oracle = OptimalLocalHashing(k=k + ell, epsilon=self.epsilon)
        object.__setattr__(self, "oracle", oracle)

    @property
    def ell(self) -> int:
        return resolved(self.max_choices, "max_choices")

    @property
    def domain_size(self) -> int:
        """d = k + l: the options and the l dummy items."""
        return self.k + self.ell

    @property
    def name(self) -> str:
        """The registered name (:data:`ldp.multiselect.SET_MECHANISMS`): padding-krr or padding-olh."""
        return f"padding-{self.oracle_name}"

    @property
    def mechanism_name(self) -> str:
        return self.name

    def params(self) -> dict[str, Any]:
        return {"max_choices": self.ell, "oracle": self.oracle_name}

    def client_spec(self) -> dict[str, Any]:
        return {**spec_header(self.mechanism_name, self.k, self.ell, self.epsilon), "oracle": self.oracle.client_spec()}

    @property
    def report_width(self) -> int:
        return self.oracle.report_width

    def sample_items(self, sets: ArrayLike, rng: np.random.Generator) -> np.ndarray:
        """Pad each set and sample one of its l items uniformly."""
        padded = padded_items(check_sets(sets, self.k, self.ell), self.ell)
        pick = rng.integers(0, self.ell, size=padded.shape[0])
        return padded[np.arange(padded.shape[0]), pick]

    def randomize(self, sets: ArrayLike, *, rng: Any = None) -> np.ndarray:
        rng = np.random.default_rng(rng)
        return self.oracle.randomize(self.sample_items(sets, rng), rng=rng)

    def parse_report(self, obj: Any) -> bytes:
        return self.oracle.parse_report(obj)

    def unpack_report(self, packed: bytes) -> dict[str, Any]:
        return self.oracle.unpack_report(packed)

    def tally(self, packed: np.ndarray) -> Tally:
        """The oracle's tally over the k + l items."""
        return self.oracle.tally(packed)

    def sample_tallies(self, sets: ArrayLike, repetitions: int, *, rng: Any = None) -> np.ndarray:
        """Tally counts of ``repetitions`` randomizations of the population ``sets``.

        Respondents with the same set sample their items as one multinomial draw; with k-RR the
        reports of the respondents who sampled item t are one more multinomial draw (A[:, t]);
        OLH reports are made one by one.
        """
        rng = np.random.default_rng(rng)
        padded = padded_items(check_sets(sets, self.k, self.ell), self.ell)
        kinds, counts = np.unique(padded, axis=0, return_counts=True)
        items = np.zeros((repetitions, self.domain_size), dtype=np.int64)
        uniform = np.full(self.ell, 1.0 / self.ell)
        for row, count in zip(kinds, counts, strict=True):
            np.add.at(items, (np.arange(repetitions)[:, None], row), rng.multinomial(count, uniform, size=repetitions))
        if not isinstance(self.oracle, KRandomizedResponse):
            values = [np.repeat(np.arange(self.domain_size), r) for r in items]
            return np.array([self.oracle.tally(self.oracle.randomize(v, rng=rng)).counts for v in values])
        a = self.oracle.response_matrix
        return sum(rng.multinomial(items[:, t], a[:, t]) for t in range(self.domain_size))

    @property
    def unit_variances(self) -> np.ndarray:
        """V'[v, t] over the d items: the oracle's one-report variances plus (1 - 1/l) on the diagonal."""
        return self.oracle.unit_variances + (1.0 - 1.0 / self.ell) * np.eye(self.domain_size)

    def item_estimate(self, tally: Tally) -> np.ndarray:
        """The oracle's unbiased estimate f_hat of the sampled items' distribution (d entries)."""
        oracle = self.oracle
        return np.linalg.solve(oracle.response_matrix, oracle.observed_mean(tally))

    def estimate(self, tally: Tally) -> SharesEstimate:
        if tally.n == 0:
            raise ValueError("cannot estimate from zero reports")
        k, ell, n = self.k, self.ell, tally.n
        f_hat = self.item_estimate(tally)
        plug_in = project_onto_simplex(f_hat)
        base = self.oracle.covariance(plug_in, n) * n  # one-answer covariance at f
        covariance = ell * ell * (base[:k, :k] + np.diag(plug_in[:k] * (1.0 - 1.0 / ell))) / n
        bands, joint = share_bands(self.unit_variances, f_hat, n, k)
        scale = [Interval(np.minimum(ell * b.low[:k], 1.0), np.minimum(ell * b.high[:k], 1.0)) for b in (bands, joint)]
        mean = ell * float(plug_in[:k].sum())
        size_square = self._mean_square_size(plug_in)
        count_variance = ell * ell * float(base[:k, :k].sum()) + ell * mean - size_square
        return SharesEstimate(ell * f_hat[:k], covariance, n, ell * float(f_hat[:k].sum()), count_variance / n, *scale)

    def _mean_square_size(self, f: np.ndarray) -> float:
        """E|x|^2 from the dummies' shares (module docstring), cut to [m^2, l m]."""
        k, ell = self.k, self.ell
        at_most = np.clip(ell * f[k + ell - np.arange(1, ell + 1)], 0.0, 1.0)  # P(|x| <= m - 1), m = 1..l
        second = float(np.sum((2 * np.arange(1, ell + 1) - 1) * (1.0 - at_most)))
        mean = ell * float(f[:k].sum())
        return min(max(second, mean * mean), ell * mean)

    def worst_case_log_ratio(self) -> float:
        if self.oracle_name == "krr":
            return math.log1p(math.expm1(self.oracle.epsilon) / self.ell)
        return self.oracle.worst_case_log_ratio()

    def sampling_matrix(self) -> np.ndarray:
        """P(s | x): rows are the admissible sets (:func:`all_sets` order), columns the d items."""
        padded = padded_items(all_sets(self.k, self.ell), self.ell)
        table = np.zeros((padded.shape[0], self.domain_size))
        np.add.at(table, (np.arange(padded.shape[0])[:, None], padded), 1.0 / self.ell)
        return table

    def report_probabilities(self) -> np.ndarray:
        """P[report | set] over every admissible set and every oracle report, for enumeration."""
        return self.sampling_matrix() @ self.oracle.report_probabilities()
