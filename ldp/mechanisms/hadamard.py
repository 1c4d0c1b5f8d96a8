"""Hadamard response (Acharya, Sun, Zhang 2019).

Let K be the smallest power of 2 above k and H the K x K Sylvester-Hadamard matrix,
H[a, b] = (-1)^popcount(a & b). Option v owns the set C_v = {j : H[v + 1, j] = +1} of K/2 indices
(row 0, all +1, is skipped). Client: report one index j,

    P(j | v) = 2 e^eps / (K (e^eps + 1)) if j in C_v,   2 / (K (e^eps + 1)) otherwise,

i.e. with probability e^eps / (e^eps + 1) a uniform index of C_v, else one of its complement.
Privacy: the two likelihoods differ by e^eps exactly.

Server: z_v = [j in C_v]. Any two distinct non-zero rows agree on exactly K/2 columns, so
|C_v ∩ C_t| = K/4 and E[z_v] = e^eps/(e^eps+1) for the answer, 1/2 for the others. The report
space has only K values, so A = M P and the covariance M diag(P f) M^T - A diag(f) A^T are computed
exactly from the membership matrix M[v, j] = [j in C_v] and the table P[j, t] = P(j | t). Since
A = (p - 1/2) I + 1/2 11^T has the inverse a I + b 11^T, each n Var(f_hat_v) takes O(K) work:
a^2 C_vv + 2 a b (C 1)_v + b^2 1^T C 1 - f_v with C = M diag(P f) M^T (:meth:`HadamardResponse.report_variances`).

One index per report (log2 K bits), and for large k the accuracy of the best schemes (ref. 1).

References
----------
1. J. Acharya, Z. Sun, H. Zhang. "Hadamard response: estimating distributions privately,
   efficiently, and with little communication." AISTATS 2019.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from ldp.mechanisms.base import Mechanism, Tally, check_counts, check_values
from ldp.mechanisms.reports import require_fields, require_int
from ldp.mechanisms.symmetric import symmetric_inverse
from ldp.privacy import binary_keep_probability

__all__ = ["HadamardResponse", "hadamard_signs"]


def hadamard_signs(rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """H[a, b] = (-1)^popcount(a & b) for broadcastable integer arrays a, b.

    >>> hadamard_signs(np.arange(4)[:, None], np.arange(4)[None, :]).tolist()
    [[1, 1, 1, 1], [1, -1, 1, -1], [1, 1, -1, -1], [1, -1, -1, 1]]
    """
    parity = np.bitwise_count(np.bitwise_and(rows, columns).astype(np.uint64)) & 1
    return np.where(parity == 1, -1, 1)


@dataclass(frozen=True, eq=False)
class HadamardResponse(Mechanism):
    """Hadamard response for k options.

    >>> m = HadamardResponse(k=5, epsilon=1.0)
    >>> m.size, len(m.client_spec()["sets"][0])
    (8, 4)
    """

    name: ClassVar[str] = "hadamard"
    k: int
    epsilon: float

    def __post_init__(self) -> None:
        self._check_common()

    @property
    def size(self) -> int:
        """K: the smallest power of 2 greater than k."""
        return 1 << self.k.bit_length()

    @property
    def in_probability(self) -> float:
        """Probability that the reported index is in the answer's set: e^eps / (e^eps + 1)."""
        return binary_keep_probability(self.epsilon)

    @cached_property
    def membership(self) -> np.ndarray:
        """M[v, j] = 1 when index j is in option v's set C_v."""
        return (hadamard_signs(np.arange(1, self.k + 1)[:, None], np.arange(self.size)[None, :]) == 1).astype(float)

    @cached_property
    def index_probabilities(self) -> np.ndarray:
        """P[j, t] = P(report j | answer t)."""
        half = self.size / 2
        m = self.membership.T
        return m * self.in_probability / half + (1 - m) * (1 - self.in_probability) / half

    def params(self) -> dict[str, Any]:
        return {}

    def client_spec(self) -> dict[str, Any]:
        sets = [np.flatnonzero(row).tolist() for row in self.membership]
        return {**self.spec_header(), "size": self.size, "in_probability": self.in_probability, "sets": sets}

    @property
    def report_width(self) -> int:
        return 2

    def randomize(self, values: ArrayLike, *, rng: Any = None) -> np.ndarray:
        rng = np.random.default_rng(rng)
        truth = check_values(values, self.k)
        inside = rng.random(truth.size) < self.in_probability
        # The k-th member of C_v or of its complement, for a uniform k in [0, K/2).
        position = rng.integers(0, self.size // 2, size=truth.size)
        wanted = self.membership[truth].astype(bool) == inside[:, None]
        index = np.argmax(np.cumsum(wanted, axis=1) > position[:, None], axis=1)
        return np.column_stack([index >> 8, index & 0xFF]).astype(np.uint8)

    def parse_report(self, obj: Any) -> bytes:
        index = require_int(require_fields(obj, {"index"})["index"], "index", 0, self.size - 1)
        return bytes([index >> 8, index & 0xFF])

    def unpack_report(self, packed: bytes) -> dict[str, Any]:
        return {"index": packed[0] << 8 | packed[1]}

    def tally(self, packed: np.ndarray) -> Tally:
        """Counts: how often each of the K indices was reported."""
        index = packed[:, 0].astype(np.intp) << 8 | packed[:, 1]
        return Tally(int(index.size), np.bincount(index, minlength=self.size).astype(np.int64))

    def observed_mean(self, tally: Tally) -> np.ndarray:
        return tally.counts @ self.membership.T / tally.n

    @cached_property
    def response_matrix(self) -> np.ndarray:
        return self.membership @ self.index_probabilities

    def report_covariance(self, frequencies: np.ndarray) -> np.ndarray:
        m, a = self.membership, self.response_matrix
        return (m * (self.index_probabilities @ frequencies)) @ m.T - (a * frequencies) @ a.T

    @property
    def _inverse_coefficients(self) -> tuple[float, float]:
        """A^-1 = a I + b 11^T: A is e^eps/(e^eps + 1) on the diagonal and 1/2 off it (module docstring)."""
        return symmetric_inverse(self.in_probability, 0.5, self.k)

    def report_variances(self, frequencies: ArrayLike | None = None) -> np.ndarray:
        # With C = M diag(P f) M^T the second moment of z and A^-1 = a I + b 11^T:
        # Var_v = a^2 C_vv + 2 a b (C 1)_v + b^2 1^T C 1 - f_v, where, M being 0/1 with column
        # sums c, C_vv = (M P f)_v, C 1 = M (P f * c) and 1^T C 1 = sum_j (P f)_j c_j^2. O(k K).
        f = self._shares(frequencies)
        a, b = self._inverse_coefficients
        m = self.membership
        index = self.index_probabilities @ f
        members = m.sum(axis=0)
        rows = m @ (index * members)
        return a * a * (m @ index) + 2 * a * b * rows + b * b * float(index @ members**2) - f

    @cached_property
    def unit_variances(self) -> np.ndarray:
        # W[v, t] = sum_j ((A^-1 M)[v, j])^2 P[j, t]; A^-1 M = a M + b 1 c^T.
        a, b = self._inverse_coefficients
        projected = a * self.membership + b * self.membership.sum(axis=0)
        return (projected**2) @ self.index_probabilities - np.eye(self.k)

    def worst_case_log_ratio(self) -> float:
        return math.log(self.in_probability / (1 - self.in_probability))

    def guess_probability(self) -> float:
        return float(self.index_probabilities.max(axis=1).sum() / self.k)

    def sample_tallies(self, true_counts: ArrayLike, repetitions: int, *, rng: Any = None) -> np.ndarray:
        rng = np.random.default_rng(rng)
        counts = check_counts(true_counts, self.k)
        return sum(
            rng.multinomial(n_t, self.index_probabilities[:, t], size=repetitions) for t, n_t in enumerate(counts)
        )

    def report_probabilities(self) -> np.ndarray:
        return self.index_probabilities.T.copy()
