"""omega-subset selection (Wang et al. 2016; Ye and Barg 2018).

Client: report a set Y of omega options, chosen with probability proportional to e^epsilon if
Y contains the true answer and 1 otherwise:

    P(Y | v) = e^eps / Z if v in Y, 1 / Z if not,   Z = C(k-1, omega-1) e^eps + C(k-1, omega).

Equivalently: with probability p_in = C(k-1, omega-1) e^eps / Z, Y is the answer plus omega - 1
other options chosen uniformly; otherwise omega options chosen uniformly among the others.

Server: z_v = [v in Y]. E[z_v] = p_in for the answer, q_in = (p_in (omega-1) + (1-p_in) omega)/(k-1)
for any other option, so A = (p_in - q_in) I + q_in 11^T. Pairs (v != v') are named together with
probability p_in (omega-1)/(k-1) when one is the answer, and
p_in (omega-1)(omega-2)/((k-1)(k-2)) + (1-p_in) omega (omega-1)/((k-1)(k-2)) when neither is.

Variance: A = (p_in - q_in) I + q_in 11^T has the inverse a I + b 11^T (Sherman-Morrison), so
n Var(f_hat_v) = a^2 P_vv + 2 a b (P 1)_v + b^2 1^T P 1 - f_v with P the second moment of z (the
pair probabilities above): O(1) per option, :func:`~ldp.mechanisms.symmetric.symmetric_report_variances`.

Privacy: P(Y | v) / P(Y | v') = e^eps exactly when Y holds v but not v'.

The default omega minimizes the analytic variance at evenly spread answers; it is near
k / (e^eps + 1) (ref. 2).

References
----------
1. S. Wang, L. Huang, P. Wang, Y. Nie, H. Xu, W. Yang, X.-Y. Li, C. Qiao. "Mutual information
   optimally local private discrete distribution estimation." arXiv:1607.08025, 2016.
2. M. Ye, A. Barg. "Optimal schemes for discrete distribution estimation under locally
   differential privacy." IEEE Trans. Inf. Theory 64(8), 2018.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from ldp.mechanisms.base import Mechanism, Tally, check_counts, check_values, resolved
from ldp.mechanisms.reports import require_distinct, require_fields, require_int, require_list
from ldp.mechanisms.symmetric import (
    symmetric_covariance,
    symmetric_report_variances,
    symmetric_uniform_variance,
    symmetric_unit_variances,
)

__all__ = ["SubsetSelection", "optimal_subset_size"]

_ENUMERATION_LIMIT = 200_000


def optimal_subset_size(k: int, epsilon: float) -> int:
    """The omega in [1, k-1] with the smallest variance at evenly spread answers (ties: smaller).

    The variance of each omega is the closed form of :meth:`SubsetSelection.report_variances` at
    f = 1/k (:func:`~ldp.mechanisms.symmetric.symmetric_uniform_variance`), all omegas at once: O(k).
    """
    sizes = np.arange(1, k)
    p = np.array([in_probability(k, int(w), epsilon) for w in sizes])
    pairs = np.array([pair_probabilities(k, int(w), float(p_w)) for w, p_w in zip(sizes, p, strict=True)])
    variances = symmetric_uniform_variance(p, other_probability(k, sizes, p), pairs[:, 0], pairs[:, 1], k)
    return int(sizes[np.argmin(variances)])


def in_probability(k: int, subset_size: int, epsilon: float) -> float:
    """p_in = C(k-1, omega-1) e^eps / Z: the reported set contains the true answer."""
    with_answer = math.comb(k - 1, subset_size - 1) * math.exp(epsilon)
    return with_answer / (with_answer + math.comb(k - 1, subset_size))


def other_probability(k: int, subset_size: ArrayLike, p: ArrayLike) -> Any:
    """q_in = (p_in (omega - 1) + (1 - p_in) omega) / (k - 1): the set contains a given other option."""
    w, p = np.asarray(subset_size), np.asarray(p)
    return (p * (w - 1) + (1 - p) * w) / (k - 1)


def pair_probabilities(k: int, subset_size: int, p: float) -> tuple[float, float]:
    """P(v, v' both in the set), v != v': when one of them is the answer, and when neither is."""
    w = subset_size
    with_answer = p * (w - 1) / (k - 1)
    without = 0.0 if k < 3 else (p * (w - 1) * (w - 2) + (1 - p) * w * (w - 1)) / ((k - 1) * (k - 2))
    return with_answer, without


@dataclass(frozen=True, eq=False)
class SubsetSelection(Mechanism):
    """omega-subset selection; ``subset_size`` (omega) defaults to the variance-optimal one.

    >>> m = SubsetSelection(k=5, epsilon=0.5)
    >>> m.subset_size, m.parse_report({"subset": [3, 1]}).hex()
    (2, '0a')
    """

    name: ClassVar[str] = "subset"
    k: int
    epsilon: float
    subset_size: int | None = None

    def __post_init__(self) -> None:
        self._check_common()
        if self.subset_size is None:
            object.__setattr__(self, "subset_size", optimal_subset_size(self.k, self.epsilon))
        w = self.subset_size
        if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or not 1 <= w <= self.k - 1:
            raise ValueError(f"subset_size must be an integer in [1, k-1={self.k - 1}], got {w!r}")
        object.__setattr__(self, "subset_size", int(w))

    @property
    def omega(self) -> int:
        """The subset size omega (``subset_size`` as chosen)."""
        return resolved(self.subset_size, "subset_size")

    @property
    def in_probability(self) -> float:
        """p_in: probability that the reported set contains the true answer."""
        return in_probability(self.k, self.omega, self.epsilon)

    @property
    def _other_probability(self) -> float:
        return float(other_probability(self.k, self.omega, self.in_probability))

    def params(self) -> dict[str, Any]:
        return {"subset_size": self.omega}

    def client_spec(self) -> dict[str, Any]:
        return {**self.spec_header(), "subset_size": self.omega, "in_probability": self.in_probability}

    @property
    def report_width(self) -> int:
        return (self.k + 7) // 8

    def randomize(self, values: ArrayLike, *, rng: Any = None) -> np.ndarray:
        rng = np.random.default_rng(rng)
        truth = check_values(values, self.k)
        n, w = truth.size, self.omega
        include = rng.random(n) < self.in_probability
        # Rank the other options by random keys (the answer's key is pushed last); take the first
        # omega - 1 of them when the answer is included, the first omega otherwise.
        keys = rng.random((n, self.k))
        keys[np.arange(n), truth] = 2.0
        order = np.argsort(keys, axis=1)
        chosen = np.zeros((n, self.k), dtype=bool)
        take = np.where(include, w - 1, w)
        rank = np.arange(self.k)[None, :] < take[:, None]
        np.put_along_axis(chosen, order, rank, axis=1)
        chosen[np.arange(n), truth] |= include
        return np.packbits(chosen, axis=1, bitorder="little")

    def parse_report(self, obj: Any) -> bytes:
        subset = require_fields(obj, {"subset"})["subset"]
        require_list(subset, "subset", self.omega)
        for i, option in enumerate(subset):
            require_int(option, "subset", 0, self.k - 1, position=i)
        require_distinct(subset, "subset")
        chosen = np.zeros(self.k, dtype=bool)
        chosen[subset] = True
        return np.packbits(chosen, bitorder="little").tobytes()

    def unpack_report(self, packed: bytes) -> dict[str, Any]:
        chosen = np.unpackbits(np.frombuffer(packed, dtype=np.uint8), count=self.k, bitorder="little")
        return {"subset": np.flatnonzero(chosen).tolist()}

    def tally(self, packed: np.ndarray) -> Tally:
        """Counts: how many reported sets contain each option."""
        chosen = np.unpackbits(packed, axis=1, count=self.k, bitorder="little")
        return Tally(int(packed.shape[0]), chosen.sum(axis=0, dtype=np.int64))

    def observed_mean(self, tally: Tally) -> np.ndarray:
        return tally.counts / tally.n

    @property
    def response_matrix(self) -> np.ndarray:
        p, q = self.in_probability, self._other_probability
        return (p - q) * np.eye(self.k) + q

    @property
    def _pair_probabilities(self) -> tuple[float, float]:
        return pair_probabilities(self.k, self.omega, self.in_probability)

    def report_covariance(self, frequencies: np.ndarray) -> np.ndarray:
        return symmetric_covariance(self.response_matrix, frequencies, *self._pair_probabilities)

    def report_variances(self, frequencies: ArrayLike | None = None) -> np.ndarray:
        # Closed form (Wang et al. 2016, ref. 1): A is p_in - q_in on the diagonal, q_in off it.
        p, q = self.in_probability, self._other_probability
        return symmetric_report_variances(p, q, *self._pair_probabilities, self._shares(frequencies))

    @cached_property
    def unit_variances(self) -> np.ndarray:
        return symmetric_unit_variances(self.in_probability, self._other_probability, *self._pair_probabilities, self.k)

    def worst_case_log_ratio(self) -> float:
        return self.epsilon  # e^eps / 1: the only two likelihood values (module docstring)

    def guess_probability(self) -> float:
        # Any option of the reported set is a best guess: (1/k) C(k, omega) e^eps / Z.
        w, k, e = self.omega, self.k, math.exp(self.epsilon)
        return math.comb(k, w) * e / (math.comb(k - 1, w - 1) * e + math.comb(k - 1, w)) / k

    def sample_tallies(self, true_counts: ArrayLike, repetitions: int, *, rng: Any = None) -> np.ndarray:
        # How many of each answer group include the answer is binomial; the uniform choice of the
        # other options is multinomial when it picks one (or all but one) of them, else simulated.
        rng = np.random.default_rng(rng)
        counts = check_counts(true_counts, self.k)
        total = np.zeros((repetitions, self.k), dtype=np.int64)
        others_size = self.k - 1
        for t, n_t in enumerate(counts):
            others = np.delete(np.arange(self.k), t)
            included = rng.binomial(n_t, self.in_probability, size=repetitions)
            total[:, t] += included
            for group, size in ((included, self.omega - 1), (n_t - included, self.omega)):
                total[:, others] += _uniform_subset_counts(group, size, others_size, rng)
        return total

    def report_probabilities(self) -> np.ndarray:
        """P[Y | answer] over all C(k, omega) sets, for enumeration."""
        import itertools

        sets = list(itertools.combinations(range(self.k), self.omega))
        if len(sets) > _ENUMERATION_LIMIT:
            raise ValueError("report space too large to enumerate")
        e = math.exp(self.epsilon)
        z = math.comb(self.k - 1, self.omega - 1) * e + math.comb(self.k - 1, self.omega)
        return np.array([[(e if v in y else 1.0) / z for y in sets] for v in range(self.k)])


def _uniform_subset_counts(groups: np.ndarray, size: int, population: int, rng: np.random.Generator) -> np.ndarray:
    """Per repetition, how often each of ``population`` items is in ``groups[r]`` uniform ``size``-subsets."""
    repetitions = groups.size
    if size == 0:
        return np.zeros((repetitions, population), dtype=np.int64)
    if size == population:
        return np.repeat(groups[:, None], population, axis=1)
    uniform = np.full(population, 1.0 / population)
    if size == 1:
        return rng.multinomial(groups, uniform)
    if size == population - 1:
        return groups[:, None] - rng.multinomial(groups, uniform)
    # Each subset: the ``size`` smallest of ``population`` uniform draws. The repetitions' subsets
    # are drawn in blocks (the same draws, in the same order, as one repetition at a time) and
    # counted with one bincount per block, each repetition's items offset by its row.
    out = np.empty((repetitions, population), dtype=np.int64)
    block = max(1, _SUBSET_BLOCK // (population * max(int(np.max(groups)), 1)))
    for start in range(0, repetitions, block):
        m = np.asarray(groups[start : start + block], dtype=np.int64)
        picks = np.argpartition(rng.random((int(m.sum()), population)), size - 1, axis=1)[:, :size]
        rows = np.repeat(np.arange(m.size) * population, m)[:, None]
        counts = np.bincount((rows + picks).ravel(), minlength=m.size * population)
        out[start : start + m.size] = counts.reshape(m.size, population)
    return out


#: How many uniform draws :func:`_uniform_subset_counts` makes at once (8 bytes each; blocks that fit
#: in the cache were faster than larger ones).
_SUBSET_BLOCK = 60_000
