"""Apple's Hadamard Count Mean Sketch (HCMS; seed 004, Fig. 8-10), for a finite list of options.

Client (Fig. 9): pick j uniformly from the hash functions and l uniformly from [m] (m a power
of 2); w_l = H[l, h_j(d)] = (-1)^popcount(l & h_j(d)) is coordinate l of the Hadamard transform of
the one-hot vector at h_j(d); send (j, l, s) with s = b w_l, where b = +1 with probability
p = e^eps / (e^eps + 1) and -1 otherwise. One bit, besides the two indices.

Server (Fig. 10, for a finite option list): z_d = c_eps s H[l, h_j(d)] with
c_eps = (e^eps + 1)/(e^eps - 1). Rows of H are orthogonal, so E[z_d | answer t] = A[d, t], the
share of hash functions under which d and t share a cell: the same matrix as CMS, and the same
exact estimator A^-1 z_bar. Since (s H[l, h_j(d)]) (s H[l, h_j(d')]) averages over l to
[h_j(d) = h_j(d')], the per-report covariance is Sigma(f) = c_eps^2 A - A diag(f) A^T, and
n Var(f_hat_v) = c_eps^2 (A^-1)_vv - f_v (A^-1 A A^-T = A^-1; A is CMS's, cached with the family).

Privacy: answers d and d' change the sent bit's probability from p to 1 - p for some (j, l):
worst-case ratio p/(1-p) = e^eps exactly.

References
----------
1. Apple Differential Privacy Team. "Learning with privacy at scale." Apple ML Journal, 2017.
2. Seed 004 (Jeong, Hong, Seo 2020), section 3.2.2 and Table 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from ldp.mechanisms.base import Tally, check_values
from ldp.mechanisms.cms import HashedSketch
from ldp.mechanisms.hadamard import hadamard_signs
from ldp.mechanisms.reports import require_fields, require_int
from ldp.privacy import binary_keep_probability

__all__ = ["HadamardCountMeanSketch"]

MAX_WIDTH = 4096


@dataclass(frozen=True, eq=False)
class HadamardCountMeanSketch(HashedSketch):
    """HCMS with ``hash_count`` hash functions and ``width`` m (a power of 2).

    >>> m = HadamardCountMeanSketch(k=5, epsilon=2.0, hash_count=64, width=32)
    >>> m.parse_report({"hash_index": 3, "coefficient": 17, "bit": 1}).hex()
    '0003001101'
    """

    name: ClassVar[str] = "hcms"
    k: int
    epsilon: float
    hash_count: int = 512
    width: int = 128
    hash_seed: int = 0

    def __post_init__(self) -> None:
        self._check_common()
        self._check_sketch(MAX_WIDTH)
        if self.width & (self.width - 1):
            raise ValueError(f"width must be a power of 2 (the Hadamard transform), got {self.width}")

    @property
    def keep_probability(self) -> float:
        """p = e^eps / (e^eps + 1): probability that the sent bit is the transform's sign."""
        return binary_keep_probability(self.epsilon)

    @property
    def scale(self) -> float:
        """c_eps = (e^eps + 1) / (e^eps - 1)."""
        return 1.0 / math.tanh(self.epsilon / 2)

    @property
    def report_width(self) -> int:
        return 5  # hash index (2 bytes), coefficient (2 bytes), bit

    def randomize(self, values: ArrayLike, *, rng: Any = None) -> np.ndarray:
        rng = np.random.default_rng(rng)
        truth = check_values(values, self.k)
        j = rng.integers(0, self.hash_count, size=truth.size)
        l = rng.integers(0, self.width, size=truth.size)  # noqa: E741 - the paper's name
        sign = hadamard_signs(l, self.hash_table[j, truth])
        keep = rng.random(truth.size) < self.keep_probability
        bit = ((np.where(keep, sign, -sign)) > 0).astype(np.uint8)
        return np.column_stack([j >> 8, j & 0xFF, l >> 8, l & 0xFF, bit]).astype(np.uint8)

    def parse_report(self, obj: Any) -> bytes:
        report = require_fields(obj, {"hash_index", "coefficient", "bit"})
        j = require_int(report["hash_index"], "hash_index", 0, self.hash_count - 1)
        l = require_int(report["coefficient"], "coefficient", 0, self.width - 1)  # noqa: E741
        bit = require_int(report["bit"], "bit", 0, 1)
        return bytes([j >> 8, j & 0xFF, l >> 8, l & 0xFF, bit])

    def unpack_report(self, packed: bytes) -> dict[str, Any]:
        return {"hash_index": packed[0] << 8 | packed[1], "coefficient": packed[2] << 8 | packed[3], "bit": packed[4]}

    def tally(self, packed: np.ndarray) -> Tally:
        """Counts: for each option d, how many reports had s H[l, h_j(d)] = +1."""
        j = packed[:, 0].astype(np.intp) << 8 | packed[:, 1]
        l = packed[:, 2].astype(np.intp) << 8 | packed[:, 3]  # noqa: E741
        sent = np.where(packed[:, 4] == 1, 1, -1)
        agree = sent[:, None] * hadamard_signs(l[:, None], self.hash_table[j]) > 0
        return Tally(int(j.size), agree.sum(axis=0, dtype=np.int64))

    def observed_mean(self, tally: Tally) -> np.ndarray:
        return self.scale * (2.0 * tally.counts / tally.n - 1.0)

    def report_covariance(self, frequencies: np.ndarray) -> np.ndarray:
        a = self.response_matrix
        return self.scale**2 * a - (a * frequencies) @ a.T

    def report_variances(self, frequencies: ArrayLike | None = None) -> np.ndarray:
        # diag(A^-1 (c^2 A - A diag(f) A^T) A^-T) = c^2 diag(A^-1) - f.
        return self.scale**2 * np.diagonal(self._inverse_response) - self._shares(frequencies)

    @cached_property
    def unit_variances(self) -> np.ndarray:
        return self.scale**2 * np.diagonal(self._inverse_response)[:, None] - np.eye(self.k)

    def worst_case_log_ratio(self) -> float:
        return math.log(self.keep_probability / (1 - self.keep_probability))

    def guess_probability(self) -> float:
        # Given (j, l), a sent sign s is likeliest (p) under an option whose transform sign is s,
        # if one exists, else (1 - p). Sum over s, average over (j, l), divide by k.
        # H[l, c] = -1 where popcount(l & c) is odd; 16-bit cells and 8-bit parities keep the
        # (K, m, k) array small (k = 256: 17 MB instead of 134 MB of signs).
        rows = np.arange(self.width, dtype=np.uint16)[None, :, None]
        odd = np.bitwise_count(rows & self.hash_table.astype(np.uint16)[:, None, :]) & 1
        p = self.keep_probability
        has_plus, has_minus = (odd == 0).any(axis=2), odd.any(axis=2)
        best = np.where(has_plus, p, 1 - p) + np.where(has_minus, p, 1 - p)
        return float(best.mean() / self.k)

    def report_probabilities(self) -> np.ndarray:
        """P[(j, l, s) | answer] over all reports (small configurations only)."""
        if self.hash_count * self.width * 2 > 200_000:
            raise ValueError("report space too large to enumerate")
        signs = hadamard_signs(np.arange(self.width)[None, :, None], self.hash_table[:, None, :])  # (K, m, k)
        p, scale = self.keep_probability, 1.0 / (self.hash_count * self.width)
        plus = np.where(signs > 0, p, 1 - p) * scale
        return np.concatenate([plus.reshape(-1, self.k), (scale - plus).reshape(-1, self.k)]).T
