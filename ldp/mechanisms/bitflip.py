"""Microsoft's dBitFlip (Ding, Kulkarni, Yekhanin 2017; seed 004, Fig. 13).

Client: sample d of the k buckets uniformly without replacement; for each sampled bucket j
send one bit b_j that is 1 with probability

    p1 = e^(epsilon/2) / (e^(epsilon/2) + 1)  if j is the true answer,
    p0 = 1 / (e^(epsilon/2) + 1)              otherwise.

Server (ref. 1, Theorem 3.2): for every bucket v,

    h_hat(v) = k / (n d) * sum over reports sampling v of (b_v - p0) / (p1 - p0)
             = k / (n d) * sum of (b_v (e^(epsilon/2) + 1) - 1) / (e^(epsilon/2) - 1).

Privacy: two answers v, v' change at most the two bits of buckets v and v', each by a
likelihood factor p1/p0 = e^(epsilon/2), so the worst-case ratio is exactly e^epsilon when
d >= 2. With d = 1 only one bit is sent and the paper's calibration would spend only
epsilon/2; Murmur calibrates that single bit with e^epsilon instead, so that every question
spends exactly the budget it states (a documented departure from the paper).

Variance of h_hat(v) for a fixed population with answer shares f (derived from the above):

    Var = (1/n) * [ (k/d) (f_v m_true + (1 - f_v) m_false) - f_v ],
    m_true = (p1 (1 - p0)^2 + (1 - p1) p0^2) / (p1 - p0)^2,  m_false = p0 (1 - p0) / (p1 - p0)^2.

Presets: 5BitFlip on a 5-option question is d = k = 5; 4BitFlip is d = 4 (seed 004, sec. 4.2).

The same module holds symmetric and optimized unary encoding (SUE, OUE), which send every bucket's
bit with other probabilities; all three share :class:`SampledUnaryEncoding`.

References
----------
1. B. Ding, J. Kulkarni, S. Yekhanin. "Collecting telemetry data privately." NeurIPS 2017.
2. Seed 004 (Jeong, Hong, Seo 2020), sections 3.3.2 and 4.2-4.3.
3. T. Wang, J. Blocki, N. Li, S. Jha. "Locally differentially private protocols for frequency
   estimation." USENIX Security 2017. (SUE, OUE.)
4. U. Erlingsson, V. Pihur, A. Korolova. "RAPPOR: randomized aggregatable privacy-preserving
   ordinal response." CCS 2014.
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

from ldp.mechanisms.base import Mechanism, Tally, check_counts, check_values
from ldp.mechanisms.reports import require_bits, require_distinct, require_fields, require_int, require_list
from ldp.privacy import binary_keep_probability

__all__ = ["DBitFlip", "OptimizedUnaryEncoding", "SampledUnaryEncoding", "SymmetricUnaryEncoding"]

_ENUMERATION_LIMIT = 200_000


class SampledUnaryEncoding(Mechanism):
    """Unary encoding with d sampled buckets: the shared machinery of dBitFlip, SUE and OUE.

    The respondent samples d of the k buckets uniformly without replacement and sends one bit per
    sampled bucket: 1 with probability p1 for the answer's bucket, p0 for any other. Subclasses
    fix d, p1 and p0; reports, tallies, estimation and privacy follow from them.
    """

    d: int

    @property
    @abstractmethod
    def true_bit_probability(self) -> float:
        """p1: probability that the answer's bucket, if sampled, sends 1."""

    @property
    @abstractmethod
    def other_bit_probability(self) -> float:
        """p0: probability that another sampled bucket sends 1."""

    def _check_d(self) -> None:
        if isinstance(self.d, bool) or not isinstance(self.d, (int, np.integer)) or not 1 <= self.d <= self.k:
            raise ValueError(f"d must be an integer in [1, k={self.k}], got {self.d!r}")
        object.__setattr__(self, "d", int(self.d))

    def params(self) -> dict[str, Any]:
        return {"d": self.d}

    def client_spec(self) -> dict[str, Any]:
        return {
            **self.spec_header(),
            "d": self.d,
            "true_bit_probability": self.true_bit_probability,
            "other_bit_probability": self.other_bit_probability,
        }

    @property
    def _mask_bytes(self) -> int:
        return (self.k + 7) // 8

    @property
    def report_width(self) -> int:
        # A bucket mask then a bit mask, each little-endian over buckets (bucket j is bit j % 8
        # of byte j // 8).
        return 2 * self._mask_bytes

    def randomize(self, values: ArrayLike, *, rng: Any = None) -> np.ndarray:
        rng = np.random.default_rng(rng)
        truth = check_values(values, self.k)
        n = truth.size
        # d buckets without replacement: the d smallest of k i.i.d. uniform keys per row.
        keys = rng.random((n, self.k))
        chosen = np.argpartition(keys, self.d - 1, axis=1)[:, : self.d] if self.d < self.k else None
        sampled = np.ones((n, self.k), dtype=bool)
        if chosen is not None:
            sampled[:] = False
            np.put_along_axis(sampled, chosen, True, axis=1)
        is_true = np.arange(self.k) == truth[:, None]
        one_probability = np.where(is_true, self.true_bit_probability, self.other_bit_probability)
        bits = (rng.random((n, self.k)) < one_probability) & sampled
        return np.hstack(
            [np.packbits(sampled, axis=1, bitorder="little"), np.packbits(bits, axis=1, bitorder="little")]
        )

    def parse_report(self, obj: Any) -> bytes:
        report = require_fields(obj, {"buckets", "bits"})
        buckets = require_list(report["buckets"], "buckets", self.d)
        for i, bucket in enumerate(buckets):
            require_int(bucket, "buckets", 0, self.k - 1, position=i)
        require_distinct(buckets, "buckets")
        bits = require_bits(report["bits"], "bits", self.d)
        sampled = np.zeros(self.k, dtype=bool)
        ones = np.zeros(self.k, dtype=bool)
        sampled[buckets] = True
        ones[[b for b, bit in zip(buckets, bits, strict=True) if bit]] = True
        return np.packbits(sampled, bitorder="little").tobytes() + np.packbits(ones, bitorder="little").tobytes()

    def unpack_report(self, packed: bytes) -> dict[str, Any]:
        sampled, ones = self._unpack(np.frombuffer(packed, dtype=np.uint8).reshape(1, -1))
        buckets = np.flatnonzero(sampled[0])
        return {"buckets": buckets.tolist(), "bits": ones[0, buckets].astype(int).tolist()}

    def _unpack(self, packed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        width = self._mask_bytes
        sampled = np.unpackbits(packed[:, :width], axis=1, count=self.k, bitorder="little")
        ones = np.unpackbits(packed[:, width:], axis=1, count=self.k, bitorder="little")
        return sampled, ones

    def tally(self, packed: np.ndarray) -> Tally:
        """Counts: times each bucket was sampled (k entries), then times it sent 1 (k entries)."""
        sampled, ones = self._unpack(packed)
        counts = np.concatenate([sampled.sum(axis=0, dtype=np.int64), ones.sum(axis=0, dtype=np.int64)])
        return Tally(int(packed.shape[0]), counts)

    def observed_mean(self, tally: Tally) -> np.ndarray:
        sampled, ones = tally.counts[..., : self.k], tally.counts[..., self.k :]
        p1, p0 = self.true_bit_probability, self.other_bit_probability
        return self.k / (tally.n * self.d) * (ones - p0 * sampled) / (p1 - p0)

    @property
    def response_matrix(self) -> np.ndarray:
        return np.eye(self.k)

    @property
    def _second_moments(self) -> tuple[float, float]:
        """(m_true, m_false) of the module docstring: E[((b - p0 s) / (p1 - p0))^2] per sampled bucket."""
        p1, p0 = self.true_bit_probability, self.other_bit_probability
        spread = (p1 - p0) ** 2
        return (p1 * (1 - p0) ** 2 + (1 - p1) * p0**2) / spread, p0 * (1 - p0) / spread

    def report_covariance(self, frequencies: np.ndarray) -> np.ndarray:
        # Distinct buckets' statistics are uncorrelated given the answer (one has mean 0).
        return np.diag(self.report_variances(frequencies))

    def report_variances(self, frequencies: ArrayLike | None = None) -> np.ndarray:
        # The module docstring's (k/d) (f_v m_true + (1 - f_v) m_false) - f_v; A = I.
        m_true, m_false = self._second_moments
        f = self._shares(frequencies)
        return self.k / self.d * (f * m_true + (1 - f) * m_false) - f

    @cached_property
    def unit_variances(self) -> np.ndarray:
        m_true, m_false = self._second_moments
        answer = np.eye(self.k)
        return self.k / self.d * (answer * m_true + (1 - answer) * m_false) - answer

    def worst_case_log_ratio(self) -> float:
        # Answers v and v' change only the bits of buckets v and v'. With both sampled (d >= 2) the
        # worst report has b_v = 1 and b_v' = 0: ratio p1 (1 - p0) / (p0 (1 - p1)). With d = 1 only
        # one of them is ever sampled: the larger of p1/p0 and (1 - p0)/(1 - p1).
        p1, p0 = self.true_bit_probability, self.other_bit_probability
        if self.d >= 2:
            return math.log(p1 * (1 - p0) / (p0 * (1 - p1)))
        return max(math.log(p1 / p0), math.log((1 - p0) / (1 - p1)))

    def sample_tallies(self, true_counts: ArrayLike, repetitions: int, *, rng: Any = None) -> np.ndarray:
        # How often each bucket is sampled: always (d = k); the complement of one uniform bucket
        # per respondent (d = k - 1, a multinomial); in general, simulated respondent by respondent.
        # Given those counts, the ones are binomial: p1 for the true bucket, p0 for the others.
        rng = np.random.default_rng(rng)
        counts = check_counts(true_counts, self.k)
        sampled_total = np.zeros((repetitions, self.k), dtype=np.int64)
        ones_total = np.zeros((repetitions, self.k), dtype=np.int64)
        for t, n_t in enumerate(counts):
            sampled = self._sample_bucket_counts(int(n_t), repetitions, rng)
            one_probability = np.where(np.arange(self.k) == t, self.true_bit_probability, self.other_bit_probability)
            ones_total += rng.binomial(sampled, one_probability)
            sampled_total += sampled
        return np.hstack([sampled_total, ones_total])

    def _sample_bucket_counts(self, n: int, repetitions: int, rng: np.random.Generator) -> np.ndarray:
        if self.d == self.k:
            return np.full((repetitions, self.k), n, dtype=np.int64)
        if self.d == self.k - 1:
            return n - rng.multinomial(n, np.full(self.k, 1.0 / self.k), size=repetitions)
        out = np.empty((repetitions, self.k), dtype=np.int64)
        for r in range(repetitions):
            chosen = np.argpartition(rng.random((n, self.k)), self.d - 1, axis=1)[:, : self.d]
            out[r] = np.bincount(chosen.ravel(), minlength=self.k)
        return out

    def guess_probability(self) -> float:
        # A sampled bucket that sent 1 is e^(bit epsilon) times likelier to be the answer than an
        # unsampled one, which beats a sampled 0. With s ones among the d bits the best guess's
        # likelihood is p1 p0^(s-1) (1-p0)^(d-s) per bucket set; with none it is (1-p0)^d (an
        # unsampled bucket) or, when d = k, (1-p1)(1-p0)^(d-1). Sum over s, divide by k.
        p1, p0, d = self.true_bit_probability, self.other_bit_probability, self.d
        total = sum(math.comb(d, s) * p1 * p0 ** (s - 1) * (1 - p0) ** (d - s) for s in range(1, d + 1))
        total += (1 - p0) ** d if d < self.k else (1 - p1) * (1 - p0) ** (d - 1)
        return total / self.k

    def report_probabilities(self) -> np.ndarray:
        """P[report | answer] over every (bucket set, bits) report, for enumeration."""
        subsets = list(itertools.combinations(range(self.k), self.d))
        if len(subsets) * 2**self.d > _ENUMERATION_LIMIT:
            raise ValueError("report space too large to enumerate")
        p1, p0 = self.true_bit_probability, self.other_bit_probability
        patterns = np.array(list(itertools.product((0, 1), repeat=self.d)), dtype=bool)
        rows = []
        for answer in range(self.k):
            row = []
            for subset in subsets:
                one = np.where(np.array(subset) == answer, p1, p0)
                row.append(np.prod(np.where(patterns, one, 1 - one), axis=1) / len(subsets))
            rows.append(np.concatenate(row))
        return np.array(rows)


@dataclass(frozen=True, eq=False)
class DBitFlip(SampledUnaryEncoding):
    """dBitFlip with ``d`` sampled buckets (1 <= d <= k; by default every bucket, d = k: SUE's report).

    Examples
    --------
    >>> m = DBitFlip(k=5, epsilon=1.0, d=4)
    >>> m.parse_report({"buckets": [0, 1, 3, 4], "bits": [0, 1, 1, 0]}).hex()
    '1b0a'
    >>> round(m.worst_case_log_ratio(), 12)
    1.0
    """

    name: ClassVar[str] = "dbitflip"
    k: int
    epsilon: float
    d: int = None  # type: ignore[assignment]  # None: d = k, set by __post_init__, an int after

    def __post_init__(self) -> None:
        self._check_common()
        if self.d is None:
            object.__setattr__(self, "d", self.k)
        self._check_d()

    @property
    def bit_epsilon(self) -> float:
        """Budget of one bit: epsilon/2 (two bits can differ), or epsilon when d = 1."""
        return self.epsilon if self.d == 1 else self.epsilon / 2

    @property
    def true_bit_probability(self) -> float:
        return binary_keep_probability(self.bit_epsilon)

    @property
    def other_bit_probability(self) -> float:
        return 1.0 - self.true_bit_probability


class FullUnaryEncoding(SampledUnaryEncoding):
    """A unary encoding that sends every bucket's bit (d = k) and has no knobs beyond epsilon."""

    def __post_init__(self) -> None:
        self._check_common()
        object.__setattr__(self, "d", self.k)

    def params(self) -> dict[str, Any]:
        return {}


@dataclass(frozen=True, eq=False)
class SymmetricUnaryEncoding(FullUnaryEncoding):
    """Symmetric unary encoding (SUE; basic one-time RAPPOR): every bucket, p1 = e^(eps/2)/(e^(eps/2)+1).

    p0 = 1 - p1, so SUE on k options is dBitFlip with d = k (5BitFlip on 5 options). Refs. 3, 4.

    >>> SymmetricUnaryEncoding(k=5, epsilon=1.0).client_spec()["d"]
    5
    """

    name: ClassVar[str] = "sue"
    k: int
    epsilon: float

    @property
    def true_bit_probability(self) -> float:
        return binary_keep_probability(self.epsilon / 2)

    @property
    def other_bit_probability(self) -> float:
        return 1.0 - self.true_bit_probability


@dataclass(frozen=True, eq=False)
class OptimizedUnaryEncoding(FullUnaryEncoding):
    """Optimized unary encoding (OUE, Wang et al. 2017): every bucket, p1 = 1/2, p0 = 1/(e^eps + 1).

    Sending the answer's bit as a fair coin and the others at the lowest rate the budget allows
    minimizes the variance among unary encodings: Var = 4 e^eps / (n (e^eps - 1)^2) at f = 0
    (ref. 3, section 4.3). Privacy: p1 (1 - p0) / (p0 (1 - p1)) = e^eps exactly.

    >>> round(OptimizedUnaryEncoding(k=5, epsilon=1.0).worst_case_log_ratio(), 12)
    1.0
    """

    name: ClassVar[str] = "oue"
    k: int
    epsilon: float

    @property
    def true_bit_probability(self) -> float:
        return 0.5

    @property
    def other_bit_probability(self) -> float:
        return 1.0 / (1.0 + math.exp(self.epsilon))
