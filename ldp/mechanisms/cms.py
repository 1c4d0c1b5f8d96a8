"""Apple's Count Mean Sketch (CMS) for a finite list of options (seed 004, Fig. 5-7).

Client (Fig. 5): pick j uniformly from the ``hash_count`` hash functions; start from
v = -1 in R^m and set v[h_j(d)] = +1; flip every coordinate independently, keeping it with
probability e^(epsilon/2) / (e^(epsilon/2) + 1); send (v_tilde, j).

Server (Fig. 6-7): with c = (e^(epsilon/2) + 1) / (e^(epsilon/2) - 1), each report becomes
x = K (c/2 v_tilde + 1/2) added to row j of a K x m sketch M, and

    f_tilde(d) = (m / (m - 1)) * ((1/K) sum_i M[i, h_i(d)] - n / m).

For a *finite* option list the sketch is not needed: (1/K) sum_i M[i, h_i(d)] is n times the
mean of z_d = c/2 v_tilde[h_j(d)] + 1/2 over reports, so n and one count per option (how often
the report's coordinate h_j(d) was +1) are sufficient statistics. The paper's estimator is
unbiased only on average over random hash families; for the one fixed family a question uses,
E[z_bar] = A f exactly, with A[d, d'] = (1/K) #{j : h_j(d) = h_j(d')}. Murmur's unbiased
estimate is therefore A^-1 z_bar (:meth:`CountMeanSketch.estimate`); the paper's formula, which
replaces A by its expectation (1 - 1/m) I + 1/m, is :meth:`CountMeanSketch.sketch_estimate`.

Privacy: two answers change the encoded vector in at most two coordinates (none if they share
h_j), each by a likelihood factor e^(epsilon/2): the worst-case ratio is exactly e^epsilon.

Hash family: h_j(x) = ((a_j x^2 + b_j x + c_j) mod P) mod m with P = 2^31 - 1 and a_j, b_j, c_j
drawn from ``numpy.random.default_rng(hash_seed)``; a degree-2 polynomial over Z_P is 3-wise
independent (Wegman and Carter), as Fig. 4 asks. x is the option's index. The client spec
carries the table h_j(x) for every j and option, so the browser hashes nothing.

References
----------
1. Apple Differential Privacy Team. "Learning with privacy at scale." Apple ML Journal, 2017.
2. M. N. Wegman, J. L. Carter. "New hash functions and their use in authentication and set
   equality." JCSS 22(3), 1981.
3. Seed 004 (Jeong, Hong, Seo 2020), section 3.2.1 and Table 1.
"""

from __future__ import annotations

import itertools
import math
from abc import abstractmethod
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from ldp.mechanisms.base import (
    InvalidReport,
    Mechanism,
    Tally,
    check_counts,
    check_values,
    require_bits,
    require_fields,
    require_int,
)
from ldp.privacy import binary_keep_probability

__all__ = ["CountMeanSketch", "HashedSketch", "collision_matrix", "polynomial_hash_table"]

MERSENNE_PRIME = 2**31 - 1
MAX_HASH_COUNT = 2**16
MAX_WIDTH = 4096
_CHUNK = 1 << 15
_ENUMERATION_LIMIT = 200_000


def polynomial_hash_table(hash_count: int, width: int, k: int, seed: int) -> np.ndarray:
    """h_j(x) for j < hash_count and x < k: the seeded 3-wise independent family above.

    >>> polynomial_hash_table(2, 128, 3, seed=0).shape
    (2, 3)
    """
    rng = np.random.default_rng(seed)
    a, b, c = (rng.integers(0, MERSENNE_PRIME, size=(hash_count, 1), dtype=np.int64) for _ in range(3))
    x = np.arange(k, dtype=np.int64)[None, :]
    # Horner's rule, reducing mod P after each step so every product stays below 2^62.
    value = (a * x % MERSENNE_PRIME + b) % MERSENNE_PRIME
    value = (value * x % MERSENNE_PRIME + c) % MERSENNE_PRIME
    return (value % width).astype(np.int32)


def collision_matrix(hash_table: np.ndarray) -> np.ndarray:
    """A[d, d'] = share of hash functions under which options d and d' share a cell.

    >>> collision_matrix(np.array([[0, 0, 1], [0, 1, 1]])).tolist()
    [[1.0, 0.5, 0.0], [0.5, 1.0, 0.5], [0.0, 0.5, 1.0]]
    """
    return (hash_table[:, :, None] == hash_table[:, None, :]).mean(axis=0)


class HashedSketch(Mechanism):
    """What CMS and HCMS share: a seeded hash family into a sketch of width m, and its collisions.

    Subclasses are frozen dataclasses with the fields ``hash_count``, ``width`` and ``hash_seed``
    and a ``keep_probability``. The exact finite-domain estimator of both uses A = the share of hash
    functions under which two options share a cell (:func:`collision_matrix`).
    """

    hash_count: int
    width: int
    hash_seed: int

    @property
    @abstractmethod
    def keep_probability(self) -> float:
        """Probability that a randomized coordinate or bit keeps its true value."""

    def _check_sketch(self, max_width: int) -> None:
        """Validate and normalize the sketch's knobs; refuse options no hash function separates."""
        for field, low, high in (
            ("hash_count", 1, MAX_HASH_COUNT),
            ("width", 2, max_width),
            ("hash_seed", 0, 2**32 - 1),
        ):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
                raise ValueError(f"{field} must be an integer in [{low}, {high}], got {value!r}")
            object.__setattr__(self, field, int(value))
        colliding = np.argwhere(np.triu(self.response_matrix == 1.0, k=1))
        if colliding.size:
            a, b = colliding[0]
            raise ValueError(
                f"options {a} and {b} share a coordinate under every hash function, so they cannot be "
                f"told apart; use another hash_seed or more hash functions"
            )

    @cached_property
    def hash_table(self) -> np.ndarray:
        """h_j(option), shape (hash_count, k)."""
        return polynomial_hash_table(self.hash_count, self.width, self.k, self.hash_seed)

    @cached_property
    def response_matrix(self) -> np.ndarray:
        return collision_matrix(self.hash_table)

    def params(self) -> dict[str, Any]:
        return {"hash_count": self.hash_count, "width": self.width, "hash_seed": self.hash_seed}

    def client_spec(self) -> dict[str, Any]:
        return {
            **self.spec_header(),
            "hash_count": self.hash_count,
            "width": self.width,
            "keep_probability": self.keep_probability,
            "hashes": self.hash_table.tolist(),
        }


@dataclass(frozen=True, eq=False)
class CountMeanSketch(HashedSketch):
    """CMS with ``hash_count`` hash functions (the paper's k) and sketch width ``width`` (m).

    The defaults are the paper's survey setting, 512 hash functions and m = 128 (seed 004,
    section 4.3).

    Examples
    --------
    >>> m = CountMeanSketch(k=5, epsilon=2.0)
    >>> (m.hash_count, m.width, m.report_width)
    (512, 128, 18)
    >>> round(m.worst_case_log_ratio(), 12)
    2.0
    """

    name: ClassVar[str] = "cms"
    k: int
    epsilon: float
    hash_count: int = 512
    width: int = 128
    hash_seed: int = 0

    def __post_init__(self) -> None:
        self._check_common()
        self._check_sketch(MAX_WIDTH)

    @property
    def keep_probability(self) -> float:
        """Probability that one coordinate keeps its sign: e^(epsilon/2) / (e^(epsilon/2) + 1)."""
        return binary_keep_probability(self.epsilon / 2)

    @property
    def scale(self) -> float:
        """c_epsilon = (e^(epsilon/2) + 1) / (e^(epsilon/2) - 1) (Fig. 6, line 1)."""
        return 1.0 / math.tanh(self.epsilon / 4)

    @property
    def report_width(self) -> int:
        # Two bytes of hash index (big-endian), then the m signs as bits (+1 -> 1), little-endian.
        return 2 + (self.width + 7) // 8

    def randomize(self, values: ArrayLike, *, rng: Any = None) -> np.ndarray:
        rng = np.random.default_rng(rng)
        truth = check_values(values, self.k)
        out = np.empty((truth.size, self.report_width), dtype=np.uint8)
        for start in range(0, truth.size, _CHUNK):
            chunk = truth[start : start + _CHUNK]
            j = rng.integers(0, self.hash_count, size=chunk.size)
            encoded = np.zeros((chunk.size, self.width), dtype=bool)
            encoded[np.arange(chunk.size), self.hash_table[j, chunk]] = True
            flip = rng.random((chunk.size, self.width)) >= self.keep_probability
            out[start : start + chunk.size, 0] = j >> 8
            out[start : start + chunk.size, 1] = j & 0xFF
            out[start : start + chunk.size, 2:] = np.packbits(encoded ^ flip, axis=1, bitorder="little")
        return out

    def parse_report(self, obj: Any) -> bytes:
        report = require_fields(obj, {"hash_index", "bits"})
        j = require_int(report["hash_index"], "hash_index", 0, self.hash_count - 1)
        bits = np.array(require_bits(report["bits"], "bits", self.width), dtype=bool)
        return bytes([j >> 8, j & 0xFF]) + np.packbits(bits, bitorder="little").tobytes()

    def unpack_report(self, packed: bytes) -> dict[str, Any]:
        bits = np.unpackbits(np.frombuffer(packed[2:], dtype=np.uint8), count=self.width, bitorder="little")
        return {"hash_index": packed[0] << 8 | packed[1], "bits": bits.astype(int).tolist()}

    def tally(self, packed: np.ndarray) -> Tally:
        """Counts: for each option d, how many reports had +1 at coordinate h_j(d)."""
        j = packed[:, 0].astype(np.intp) << 8 | packed[:, 1]
        if j.size and j.max() >= self.hash_count:
            raise InvalidReport(f"hash index {j.max()} out of range")
        positions = self.hash_table[j]  # (n, k)
        cells = np.take_along_axis(packed, 2 + (positions >> 3), axis=1)
        plus = (cells >> (positions & 7)) & 1
        return Tally(int(j.size), plus.sum(axis=0, dtype=np.int64))

    def observed_mean(self, tally: Tally) -> np.ndarray:
        signs = 2.0 * tally.counts / tally.n - 1.0  # mean of v_tilde[h_j(d)]
        return self.scale / 2 * signs + 0.5

    @cached_property
    def _same_cell(self) -> np.ndarray:
        """same[j, d, d'] = 1 when h_j(d) = h_j(d'), as floats."""
        table = self.hash_table
        return (table[:, :, None] == table[:, None, :]).astype(float)

    def report_covariance(self, frequencies: np.ndarray) -> np.ndarray:
        # Given j, z_d = c/2 v_tilde[h_j(d)] + 1/2 has conditional mean B_j[d, t] = [h_j(d) = h_j(t)]
        # for answer t and conditional covariance (c^2 - 1)/4 [h_j(d) = h_j(d')]. By the law of
        # total covariance, averaged over t ~ f:
        #   Sigma = (c^2 - 1)/4 A + sum_t f_t (E_j[B_t B_t^T] - a_t a_t^T),  a_t = A[:, t].
        same, a, f = self._same_cell, self.response_matrix, frequencies
        within = (self.scale**2 - 1) / 4 * a
        second_moment = np.einsum("jdt,t,jet->de", same, f, same, optimize=True) / self.hash_count
        return within + second_moment - (a * f) @ a.T

    def sketch_estimate(self, tally: Tally) -> np.ndarray:
        """The paper's f_tilde / n (Fig. 7): (m / (m - 1)) (z_bar - 1/m), as proportions."""
        return self.width / (self.width - 1) * (self.observed_mean(tally) - 1.0 / self.width)

    def worst_case_log_ratio(self) -> float:
        table = self.hash_table
        differ = (table[:, :, None] != table[:, None, :]).any()
        return 2 * int(differ) * math.log(self.keep_probability / (1 - self.keep_probability))

    def sample_tallies(self, true_counts: ArrayLike, repetitions: int, *, rng: Any = None) -> np.ndarray:
        # Respondents with answer t split over the hash functions multinomially. Within (t, j), each
        # distinct cell among h_j(options) is one flipped coordinate: its +1 count is binomial with
        # p (the answer's cell) or 1 - p (any other cell), and options sharing the cell share it.
        rng = np.random.default_rng(rng)
        counts = check_counts(true_counts, self.k)
        cells, owner = self._distinct_cells
        p = self.keep_probability
        total = np.zeros((repetitions, self.k), dtype=np.int64)
        for t, n_t in enumerate(counts):
            if n_t == 0:
                continue
            per_hash = rng.multinomial(n_t, np.full(self.hash_count, 1.0 / self.hash_count), size=repetitions)
            is_answer_cell = cells[:, 1] == self.hash_table[cells[:, 0], t]
            plus = rng.binomial(per_hash[:, cells[:, 0]], np.where(is_answer_cell, p, 1 - p))
            total += plus @ owner
        return total

    @cached_property
    def _distinct_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct (j, cell) pairs of the hash table, and which options each one serves."""
        pairs = np.unique(
            np.column_stack([np.repeat(np.arange(self.hash_count), self.k), self.hash_table.ravel()]), axis=0
        )
        index = {(int(j), int(c)): i for i, (j, c) in enumerate(pairs)}
        owner = np.zeros((len(pairs), self.k), dtype=np.int64)
        for j in range(self.hash_count):
            for option in range(self.k):
                owner[index[(j, int(self.hash_table[j, option]))], option] = 1
        return pairs, owner

    def guess_probability(self) -> float:
        # Given j only the u_j distinct cells h_j(option) matter. With s of them +1, the best
        # guess is an option in a +1 cell: likelihood p (1-p)^(s-1) p^(u-s); with none, any
        # option: (1-p) p^(u-1). Sum over s, average over j, divide by k.
        p = self.keep_probability
        cells = np.array([np.unique(row).size for row in self.hash_table])
        totals = [
            sum(math.comb(u, s) * p * (1 - p) ** (s - 1) * p ** (u - s) for s in range(1, u + 1))
            + (1 - p) * p ** (u - 1)
            for u in range(cells.max() + 1)
        ]
        return float(np.mean(np.take(totals, cells))) / self.k

    def report_probabilities(self) -> np.ndarray:
        """P[(j, bits) | answer] over all hash_count * 2^width reports, for enumeration."""
        if self.hash_count * 2**self.width > _ENUMERATION_LIMIT:
            raise ValueError("report space too large to enumerate")
        patterns = np.array(list(itertools.product((0, 1), repeat=self.width)), dtype=bool)
        p = self.keep_probability
        rows = []
        for answer in range(self.k):
            encoded = np.arange(self.width)[None, :] == self.hash_table[:, answer][:, None]  # (K, m)
            agree = patterns[None, :, :] == encoded[:, None, :]  # (K, 2^m, m)
            rows.append((np.where(agree, p, 1 - p).prod(axis=2) / self.hash_count).ravel())
        return np.array(rows)
