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

Variance (law of total covariance over j; :meth:`CountMeanSketch.report_covariance`): per report,

    Sigma(f) = (c^2 - 1)/4 A + S(f) - A diag(f) A^T,  S(f) = (1/K) sum_j sum_t f_t s_jt s_jt^T,

with s_jt[d] = [h_j(d) = h_j(t)], so n Var(f_hat_v) = (c^2 - 1)/4 (A^-1)_vv + (A^-1 S(f) A^-T)_vv - f_v.
Only c depends on epsilon: A, A^-1 and S are the family's (:class:`SketchFamily`, computed once per
family from its same-cell pairs, about K k^2 / m of them, instead of K k^2 comparisons).

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
from functools import cached_property, lru_cache
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse

from ldp.mechanisms.base import Mechanism, Tally, check_counts, check_values
from ldp.mechanisms.reports import InvalidReport, require_bits, require_fields, require_int
from ldp.privacy import binary_keep_probability

__all__ = [
    "CountMeanSketch",
    "HashedSketch",
    "SketchFamily",
    "collision_matrix",
    "polynomial_hash_table",
    "sketch_family",
]

MERSENNE_PRIME = 2**31 - 1
MAX_HASH_COUNT = 2**16
MAX_WIDTH = 4096  # cells fit 16 bits (SketchFamily sorts them as int16)
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

    Counted from the same-cell pairs of :class:`SketchFamily` (about K k^2 / m of them), not by
    comparing every pair under every hash function (K k^2).

    >>> collision_matrix(np.array([[0, 0, 1], [0, 1, 1]])).tolist()
    [[1.0, 0.5, 0.0], [0.5, 1.0, 0.5], [0.0, 0.5, 1.0]]
    """
    return SketchFamily(hash_table).collisions.copy()


@dataclass(frozen=True, eq=False)
class SketchFamily:
    """A hash family for k options, and what CMS and HCMS compute from it (read-only, shared).

    Everything here depends on the family only, not on epsilon: the collision matrix A, its inverse,
    and the second moments that make the sketches' variances (:func:`sketch_family` caches families,
    so that the advisor evaluates one once for all budgets). Built from the K k entries
    (j, h_j(x)) sorted by cell, so that options sharing a cell are neighbours.
    """

    hash_table: np.ndarray

    @cached_property
    def _sorted(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per entry in cell order: its option, its cell number (0, 1, ... over occupied cells), its key."""
        hash_count, k = self.hash_table.shape
        width = int(self.hash_table.max()) + 1
        # Each hash function's row sorted by cell (a radix sort on 16-bit cells), rows in order of j.
        order = np.argsort(self.hash_table.astype(np.int16), axis=1, kind="stable")
        cells = np.take_along_axis(self.hash_table, order, axis=1)
        keys = (np.arange(hash_count, dtype=np.int64)[:, None] * width + cells).ravel()
        cell = np.concatenate([[0], np.cumsum(keys[1:] != keys[:-1], dtype=np.int32)])
        return order.ravel().astype(np.int32), cell, keys  # 32-bit: a family at k = 256 holds ~1M of these

    @cached_property
    def _pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every unordered pair of distinct options sharing a cell: (option, other option, cell number)."""
        option, cell, _ = self._sorted
        first, second, where = [], [], []
        # Entries i and i + offset share a cell only if i and i + offset - 1 do: follow those.
        start = np.flatnonzero(cell[:-1] == cell[1:])
        offset = 1
        while start.size:
            first.append(option[start])
            second.append(option[start + offset])
            where.append(cell[start])
            offset += 1
            start = start[start + offset < cell.size]
            start = start[cell[start] == cell[start + offset]]
        empty = np.zeros(0, dtype=np.int32)
        options, others, cells = (np.concatenate(part) if part else empty for part in (first, second, where))
        return options, others, cells

    def _pair_sum(self, diagonal: np.ndarray, pair_weights: np.ndarray | None) -> np.ndarray:
        """Symmetric k x k: ``diagonal``, plus each same-cell pair's weight at (d, e) and at (e, d)."""
        k = self.hash_table.shape[1]
        first, second, _ = self._pairs
        upper = np.bincount(first * k + second, weights=pair_weights, minlength=k * k).reshape(k, k)
        return upper + upper.T + np.diag(diagonal)

    @cached_property
    def collisions(self) -> np.ndarray:
        """A = (K I + same-cell pair counts) / K (:func:`collision_matrix`)."""
        hash_count, k = self.hash_table.shape
        return _frozen(self._pair_sum(np.full(k, float(hash_count)), None) / hash_count)

    @cached_property
    def inverse(self) -> np.ndarray:
        """A^-1."""
        return _frozen(np.linalg.inv(self.collisions))

    def shared_cell_moment(self, frequencies: np.ndarray) -> np.ndarray:
        """S(f) = (1/K) sum_j sum_t f_t s_jt s_jt^T, s_jt[d] = [h_j(d) = h_j(t)].

        (s_jt s_jt^T)[d, e] is 1 when d, e and t share a cell under h_j; summed over t with weights
        f_t it is [h_j(d) = h_j(e)] times the share f of the options in that cell.
        """
        option, cell, _ = self._sorted
        in_cell = np.bincount(cell, weights=np.asarray(frequencies, dtype=float)[option])  # share per cell
        diagonal = np.bincount(option, weights=in_cell[cell], minlength=self.hash_table.shape[1])
        return self._pair_sum(diagonal, in_cell[self._pairs[2]]) / self.hash_table.shape[0]

    @cached_property
    def uniform_moment_diagonal(self) -> np.ndarray:
        """diag(A^-1 S(1/k) A^-T), the hash-sharing part of CMS's variance at evenly spread answers."""
        k = self.hash_table.shape[1]
        inverse = self.inverse
        return _frozen(((inverse @ self.shared_cell_moment(np.full(k, 1.0 / k))) * inverse).sum(axis=1))

    @cached_property
    def cells(self) -> sparse.csr_matrix:
        """E[c, x] = 1 when option x is in occupied cell c (cells in order of (j, cell))."""
        option, cell, _ = self._sorted
        return sparse.csr_matrix((np.ones(option.size), (cell, option)), shape=(cell[-1] + 1, self.hash_table.shape[1]))

    @cached_property
    def cell_pairs(self) -> np.ndarray:
        """The occupied (j, cell) pairs, in order, shape (cells, 2)."""
        _, cell, keys = self._sorted
        width = int(self.hash_table.max()) + 1
        occupied = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]
        return _frozen(np.column_stack([occupied // width, occupied % width]))

    @cached_property
    def unit_moments(self) -> np.ndarray:
        """W[v, t] = diag(A^-1 S(e_t) A^-T)_v = (1/K) sum_j (sum_{d : h_j(d) = h_j(t)} A^-1[v, d])^2.

        Q = E A^-T holds, per occupied cell, the sum of A^-1's columns in it; W^T = E^T (Q * Q) / K.
        Chunked over cells so that Q never needs more than a few MiB.
        """
        k = self.hash_table.shape[1]
        moments = np.zeros((k, k))
        step = max(1, (1 << 19) // k)
        for start in range(0, self.cells.shape[0], step):
            block = self.cells[start : start + step]
            projected = block @ self.inverse.T
            moments += block.T @ (projected * projected)
        return _frozen(moments.T / self.hash_table.shape[0])


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@lru_cache(maxsize=8)
def sketch_family(hash_count: int, width: int, k: int, seed: int) -> SketchFamily:
    """The :func:`polynomial_hash_table` family for these knobs, built once per (K, m, k, seed)."""
    return SketchFamily(_frozen(polynomial_hash_table(hash_count, width, k, seed)))


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

    @property
    def hash_family(self) -> SketchFamily:
        """The hash family and its derived matrices, shared by every sketch with the same knobs."""
        return sketch_family(self.hash_count, self.width, self.k, self.hash_seed)

    @property
    def hash_table(self) -> np.ndarray:
        """h_j(option), shape (hash_count, k), read-only."""
        return self.hash_family.hash_table

    @property
    def response_matrix(self) -> np.ndarray:
        return self.hash_family.collisions

    @property
    def _inverse_response(self) -> np.ndarray:
        return self.hash_family.inverse

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
        return Tally(int(packed.shape[0]), self.report_signs(packed).sum(axis=0, dtype=np.int64))

    def report_signs(self, packed: np.ndarray) -> np.ndarray:
        """Each report's own counts, shape (n, k): 1 where report i had +1 at coordinate h_j(d)."""
        j = packed[:, 0].astype(np.intp) << 8 | packed[:, 1]
        if j.size and j.max() >= self.hash_count:
            high = self.hash_count - 1
            raise InvalidReport(
                f"hash_index must lie in [0, {high}], got {j.max()}",
                "out-of-range",
                field="hash_index",
                position=None,
                low=0,
                high=high,
                value=int(j.max()),
            )
        positions = self.hash_table[j]  # (n, k)
        cells = np.take_along_axis(packed, 2 + (positions >> 3), axis=1)
        return ((cells >> (positions & 7)) & 1).astype(np.int64)

    def observed_mean(self, tally: Tally) -> np.ndarray:
        signs = 2.0 * tally.counts / tally.n - 1.0  # mean of v_tilde[h_j(d)]
        return self.scale / 2 * signs + 0.5

    def report_covariance(self, frequencies: np.ndarray) -> np.ndarray:
        # Given j, z_d = c/2 v_tilde[h_j(d)] + 1/2 has conditional mean B_j[d, t] = [h_j(d) = h_j(t)]
        # for answer t and conditional covariance (c^2 - 1)/4 [h_j(d) = h_j(d')]. By the law of
        # total covariance, averaged over t ~ f:
        #   Sigma = (c^2 - 1)/4 A + sum_t f_t (E_j[B_t B_t^T] - a_t a_t^T),  a_t = A[:, t],
        # where sum_t f_t E_j[B_t B_t^T] is SketchFamily.shared_cell_moment(f).
        a, f = self.response_matrix, np.asarray(frequencies, dtype=float)
        within = (self.scale**2 - 1) / 4 * a
        return within + self.hash_family.shared_cell_moment(f) - (a * f) @ a.T

    @property
    def _within_factor(self) -> float:
        return (self.scale**2 - 1) / 4

    def report_variances(self, frequencies: ArrayLike | None = None) -> np.ndarray:
        # diag(A^-1 Sigma(f) A^-T) = (c^2 - 1)/4 diag(A^-1) + diag(A^-1 S(f) A^-T) - f, since
        # A^-1 A A^-T = A^-T and A^-1 A diag(f) A^T A^-T = diag(f). At f = 1/k the middle term is
        # cached with the hash family.
        family, f = self.hash_family, self._shares(frequencies)
        if frequencies is None or np.array_equal(f, np.full(self.k, 1.0 / self.k)):
            shared = family.uniform_moment_diagonal
        else:
            inverse = family.inverse
            shared = ((inverse @ family.shared_cell_moment(f)) * inverse).sum(axis=1)
        return self._within_factor * np.diagonal(family.inverse) + shared - f

    @cached_property
    def unit_variances(self) -> np.ndarray:
        # V = (c^2 - 1)/4 diag(A^-1) 1^T + W - I, W from the family (SketchFamily.unit_moments).
        family = self.hash_family
        return self._within_factor * np.diagonal(family.inverse)[:, None] + family.unit_moments - np.eye(self.k)

    def sketch_estimate(self, tally: Tally) -> np.ndarray:
        """The paper's f_tilde / n (Fig. 7): (m / (m - 1)) (z_bar - 1/m), as proportions."""
        return self.width / (self.width - 1) * (self.observed_mean(tally) - 1.0 / self.width)

    def worst_case_log_ratio(self) -> float:
        table = self.hash_table
        differ = (table != table[:, :1]).any()  # some hash function separates some pair of options
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
        family = self.hash_family
        return family.cell_pairs, family.cells.toarray().astype(np.int64)

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
