"""Optimal local hashing (OLH; Wang, Blocki, Li, Jha 2017).

Client: draw a hash function h from a family mapping options to [g], and report (h, y) where y is
k-ary randomized response over [g] applied to h(v): y = h(v) with p = e^eps / (e^eps + g - 1),
otherwise one of the other g - 1 values, each with q = 1 / (e^eps + g - 1). OLH takes
g = e^eps + 1 (rounded; here the integer with the smallest variance).

Hash family: h(x) = ((a x^2 + b x + c) mod P) mod g with a, b, c uniform in [0, P), P = 2^31 - 1 by
default. For 2 or 3 distinct inputs the values mod P are uniform and independent (a degree-2
polynomial through 3 points is unique), so with n_r = #{u < P : u mod g = r} the collision
probabilities are exactly c2 = sum n_r^2 / P^2 (pairs) and c3 = sum n_r^3 / P^3 (triples).

Server: z_v = [h(v) = y]. E[z_v] = p for the answer and q* = c2 p + (1 - c2) q for other options:
A = (p - q*) I + q* 11^T. Pairs are named together with probability c2 p when one is the answer,
c3 p + (c2 - c3) q when neither is (exact, by 3-wise independence).

Privacy: for any fixed h, two answers change y's likelihood by at most p/q = e^eps, attained when
h(v) != h(v'): exactly e^eps.

References
----------
1. T. Wang, J. Blocki, N. Li, S. Jha. "Locally differentially private protocols for frequency
   estimation." USENIX Security 2017, section 4.4.
2. M. N. Wegman, J. L. Carter. "New hash functions and their use in authentication and set
   equality." JCSS 22(3), 1981.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from ldp.mechanisms.base import Mechanism, Tally, check_values, resolved
from ldp.mechanisms.reports import require_fields, require_int, require_list
from ldp.mechanisms.symmetric import symmetric_covariance, symmetric_report_variances, symmetric_unit_variances

__all__ = ["OptimalLocalHashing", "optimal_range_size"]

MERSENNE_PRIME = 2**31 - 1
MAX_RANGE = 65_535


def optimal_range_size(k: int, epsilon: float) -> int:
    """The g near e^eps + 1 with the smallest variance at evenly spread answers."""
    centre = math.exp(epsilon) + 1
    candidates = {max(2, min(MAX_RANGE, g)) for g in (math.floor(centre), math.ceil(centre))}
    uniform = np.full(k, 1.0 / k)
    return min(
        sorted(candidates),
        key=lambda g: OptimalLocalHashing(k=k, epsilon=epsilon, range_size=g).report_variances(uniform)[0],
    )


def _is_prime(number: int) -> bool:
    return number >= 2 and all(number % d for d in range(2, math.isqrt(number) + 1))


@dataclass(frozen=True, eq=False)
class OptimalLocalHashing(Mechanism):
    """OLH; ``range_size`` (g) defaults to the best integer near e^eps + 1.

    >>> m = OptimalLocalHashing(k=5, epsilon=1.0)
    >>> m.range_size, m.parse_report({"hash": [1, 2, 3], "value": 0}).hex()
    (3, '0000000100000002000000030000')
    """

    name: ClassVar[str] = "olh"
    k: int
    epsilon: float
    range_size: int | None = None
    prime: int = MERSENNE_PRIME

    def __post_init__(self) -> None:
        self._check_common()
        if self.range_size is None:
            object.__setattr__(self, "range_size", optimal_range_size(self.k, self.epsilon))
        g = self.range_size
        if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or not 2 <= g <= MAX_RANGE:
            raise ValueError(f"range_size must be an integer in [2, {MAX_RANGE}], got {g!r}")
        object.__setattr__(self, "range_size", int(g))
        if not (isinstance(self.prime, int) and self.prime > max(self.k, int(g)) and self.prime < 2**32):
            raise ValueError(f"prime must exceed k and range_size and fit 32 bits, got {self.prime!r}")
        if self.prime != MERSENNE_PRIME and not _is_prime(self.prime):
            raise ValueError(f"prime must be prime, got {self.prime}")

    @property
    def g(self) -> int:
        """The hash range g (``range_size`` as chosen)."""
        return resolved(self.range_size, "range_size")

    @property
    def keep_probability(self) -> float:
        """p = e^eps / (e^eps + g - 1)."""
        return 1.0 / (1.0 + (self.g - 1) * math.exp(-self.epsilon))

    @property
    def other_probability(self) -> float:
        """q = 1 / (e^eps + g - 1)."""
        return (1.0 - self.keep_probability) / (self.g - 1)

    @cached_property
    def _collisions(self) -> tuple[float, float]:
        """(c2, c3): exact pair and triple collision probabilities of the hash family."""
        g, prime = self.g, self.prime
        n = np.full(g, prime // g, dtype=float)
        n[: prime % g] += 1
        return float((n**2).sum() / prime**2), float((n**3).sum() / prime**3)

    def hash_values(self, coefficients: np.ndarray, options: np.ndarray) -> np.ndarray:
        """h(x) for coefficient rows (a, b, c) and options x (broadcast), by Horner's rule mod P."""
        a, b, c = (coefficients[..., i : i + 1].astype(np.int64) for i in range(3))
        x = np.asarray(options, dtype=np.int64)
        value = (a * x % self.prime + b) % self.prime
        return (value * x % self.prime + c) % self.prime % self.g

    def params(self) -> dict[str, Any]:
        return {"range_size": self.g} | ({} if self.prime == MERSENNE_PRIME else {"prime": self.prime})

    def client_spec(self) -> dict[str, Any]:
        return {
            **self.spec_header(),
            "range_size": self.g,
            "prime": self.prime,
            "keep_probability": self.keep_probability,
        }

    @property
    def report_width(self) -> int:
        return 14  # a, b, c (4 bytes each, big-endian), y (2 bytes)

    def _pack(self, coefficients: np.ndarray, y: np.ndarray) -> np.ndarray:
        words = coefficients.astype(">u4").view(np.uint8).reshape(-1, 12)
        return np.hstack([words, y.astype(">u2").view(np.uint8).reshape(-1, 2)])

    def randomize(self, values: ArrayLike, *, rng: Any = None) -> np.ndarray:
        rng = np.random.default_rng(rng)
        truth = check_values(values, self.k)
        coefficients = rng.integers(0, self.prime, size=(truth.size, 3))
        hashed = self.hash_values(coefficients, truth[:, None])[:, 0]
        keep = rng.random(truth.size) < self.keep_probability
        other = rng.integers(0, self.g - 1, size=truth.size)
        other += other >= hashed
        return self._pack(coefficients, np.where(keep, hashed, other))

    def parse_report(self, obj: Any) -> bytes:
        report = require_fields(obj, {"hash", "value"})
        coefficients = require_list(report["hash"], "hash", 3)
        for i, coefficient in enumerate(coefficients):
            require_int(coefficient, "hash", 0, self.prime - 1, position=i)
        y = require_int(report["value"], "value", 0, self.g - 1)
        return self._pack(np.array([coefficients]), np.array([y]))[0].tobytes()

    def _unpack(self, packed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        coefficients = packed[:, :12].copy().view(">u4").reshape(-1, 3).astype(np.int64)
        y = packed[:, 12:].copy().view(">u2").reshape(-1).astype(np.int64)
        return coefficients, y

    def unpack_report(self, packed: bytes) -> dict[str, Any]:
        coefficients, y = self._unpack(np.frombuffer(packed, dtype=np.uint8).reshape(1, -1))
        return {"hash": coefficients[0].tolist(), "value": int(y[0])}

    def tally(self, packed: np.ndarray) -> Tally:
        """Counts: for each option, how many reports hash it to their value y."""
        coefficients, y = self._unpack(packed)
        support = self.hash_values(coefficients, np.arange(self.k)[None, :]) == y[:, None]
        return Tally(int(y.size), support.sum(axis=0, dtype=np.int64))

    def observed_mean(self, tally: Tally) -> np.ndarray:
        return tally.counts / tally.n

    @property
    def response_matrix(self) -> np.ndarray:
        p, q = self.keep_probability, self.other_probability
        c2, _ = self._collisions
        other = c2 * p + (1 - c2) * q
        return (p - other) * np.eye(self.k) + other

    @property
    def _pair_probabilities(self) -> tuple[float, float]:
        """P(h(v) = h(v') = y), v != v': when one of them is the answer, and when neither is."""
        p, q = self.keep_probability, self.other_probability
        c2, c3 = self._collisions
        return c2 * p, c3 * p + (c2 - c3) * q

    @property
    def _off_diagonal(self) -> float:
        """q* = c2 p + (1 - c2) q: E[z_v] for an option other than the answer."""
        c2, _ = self._collisions
        return c2 * self.keep_probability + (1 - c2) * self.other_probability

    def report_covariance(self, frequencies: np.ndarray) -> np.ndarray:
        return symmetric_covariance(self.response_matrix, frequencies, *self._pair_probabilities)

    def report_variances(self, frequencies: ArrayLike | None = None) -> np.ndarray:
        p, other = self.keep_probability, self._off_diagonal
        return symmetric_report_variances(p, other, *self._pair_probabilities, self._shares(frequencies))

    @cached_property
    def unit_variances(self) -> np.ndarray:
        return symmetric_unit_variances(self.keep_probability, self._off_diagonal, *self._pair_probabilities, self.k)

    def worst_case_log_ratio(self) -> float:
        return math.log(self.keep_probability / self.other_probability)

    def guess_probability(self) -> float:
        # A report's best guesses are the options that hash to y (likelihood p), if any, else any
        # option (q): (1/k) (p E|image| + q (g - E|image|)) for the image of the k options under h.
        # E|image| needs the k-wise law of the family: exact over all P^3 functions for a small
        # prime, else estimated from 20,000 functions drawn with a fixed seed (error below 1e-3).
        image = self.image_sizes().mean()
        p, q = self.keep_probability, self.other_probability
        return float((p * image + q * (self.g - image)) / self.k)

    def image_sizes(self, samples: int = 20_000, seed: int = 0) -> np.ndarray:
        """|h({0, ..., k-1})| for every hash function (small prime) or a seeded sample of them."""
        if self.prime**3 <= 200_000:
            coefficients = np.array(np.meshgrid(*[np.arange(self.prime)] * 3, indexing="ij")).reshape(3, -1).T
        else:
            coefficients = np.random.default_rng(seed).integers(0, self.prime, size=(samples, 3))
        # Values are below range_size <= 65,535: a 16-bit radix sort per row.
        hashed = np.sort(
            self.hash_values(coefficients, np.arange(self.k)[None, :]).astype(np.uint16), axis=1, kind="stable"
        )
        return 1 + (np.diff(hashed, axis=1) != 0).sum(axis=1)

    def report_probabilities(self) -> np.ndarray:
        """P[((a, b, c), y) | answer] over all P^3 g reports (small primes only)."""
        if self.prime**3 * self.g > 200_000:
            raise ValueError("report space too large to enumerate")
        grid = np.array(np.meshgrid(*[np.arange(self.prime)] * 3, indexing="ij")).reshape(3, -1).T
        hashed = self.hash_values(grid, np.arange(self.k)[None, :])  # (P^3, k)
        y = np.arange(self.g)
        table = np.where(hashed[:, :, None] == y[None, None, :], self.keep_probability, self.other_probability)
        return (table / self.prime**3).transpose(1, 0, 2).reshape(self.k, -1)
