"""Unary encoding of a set of options: one randomized bit per option, the whole vector under one epsilon.

Client: the answer is the indicator vector x in {0, 1}^k of the chosen options (at most l of
them, the empty set allowed). Each bit is sent independently: 1 with probability p if x_j = 1,
with probability q if x_j = 0 (RAPPOR's one-time response applied to a set, refs. 1-2).

Privacy (derived here). For two sets x, x' let a = |x \\ x'| and b = |x' \\ x|. Bits where the
sets agree cancel; a bit in x only changes the likelihood by at most L1 = ln(p / q) (report 1),
a bit in x' only by at most L0 = ln((1 - q) / (1 - p)) (report 0), and the bits are independent,
so the worst report gives exactly a L1 + b L0. With |x|, |x'| <= l the differing counts satisfy
a <= l, b <= l and a + b <= k, all attainable (x, x' disjoint), so

    epsilon = max over those (a, b) of a L1 + b L0
            = l L1 + min(l, k - l) L0        (when L1 >= L0; swap the roles otherwise).

Changing the set flips up to 2l bits (all k when 2l > k): the "sensitivity" is min(2l, k) bits,
not 2 as for a single choice. Murmur calibrates:

* ``set-sue`` (symmetric, q = 1 - p): L1 = L0 = beta, so beta = epsilon / min(2l, k) and
  p = e^beta / (e^beta + 1);
* ``set-oue`` (optimized, p = 1/2, q = 1 / (e^gamma + 1)): L1 = ln((e^gamma + 1) / 2) >= L0 =
  gamma - L1. When 2l <= k the bound is l gamma, so gamma = epsilon / l; otherwise gamma solves
  l L1 + (k - l) L0 = epsilon (by bisection; L1 + L0 = gamma and both grow with gamma).

With l = 1 these are SUE and OUE of a single choice (Wang et al. 2017, ref. 3).

Server: with c_j reports whose bit j is 1 among n,

    pi_hat_j = (c_j / n - q) / (p - q),
    Var(pi_hat_j) = (pi_j p (1 - p) + (1 - pi_j) q (1 - q)) / (n (p - q)^2),

exactly, for a fixed population; different options' bits are independent, so the covariance is
diagonal and the mean number chosen, sum_j pi_hat_j, has the sum of the variances.

References
----------
1. U. Erlingsson, V. Pihur, A. Korolova. "RAPPOR: randomized aggregatable privacy-preserving
   ordinal response." CCS 2014.
2. T. Wang, N. Li, S. Jha. "Locally differentially private frequent itemset mining." IEEE S&P
   2018 (the set-valued setting).
3. T. Wang, J. Blocki, N. Li, S. Jha. "Locally differentially private protocols for frequency
   estimation." USENIX Security 2017. (SUE, OUE.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize

from ldp.mechanisms.base import Tally, resolved
from ldp.mechanisms.reports import InvalidReport, require_bits, require_fields
from ldp.multiselect.base import (
    SharesEstimate,
    StoredReports,
    all_sets,
    check_max_choices,
    check_sets,
    share_bands,
    spec_header,
)
from ldp.privacy import binary_keep_probability, check_epsilon

__all__ = ["SetUnaryEncoding", "set_log_ratio"]

VARIANTS = ("sue", "oue")


def set_log_ratio(p: float, q: float, k: int, max_choices: int) -> float:
    """The exact worst-case log likelihood ratio of bitwise randomization over sets of <= l options.

    max over a, b <= l with a + b <= k of a ln(p/q) + b ln((1-q)/(1-p)) (module docstring).

    >>> round(set_log_ratio(0.75, 0.25, 5, 2), 12) == round(4 * math.log(3), 12)
    True
    """
    high, low = sorted((math.log(p / q), math.log((1 - q) / (1 - p))), reverse=True)
    return max_choices * high + min(max_choices, k - max_choices) * low


@dataclass(frozen=True, eq=False)
class SetUnaryEncoding(StoredReports):
    """Bitwise randomized response over the options of a multi-select question.

    ``variant`` is ``"sue"`` (symmetric) or ``"oue"`` (optimized); ``max_choices`` (l) defaults
    to k (no limit).

    >>> m = SetUnaryEncoding(k=5, epsilon=2.0, max_choices=2, variant="sue")
    >>> round(m.worst_case_log_ratio(), 12), m.parse_report({"bits": [1, 0, 0, 1, 1]})
    (2.0, b'\\x19')
    """

    k: int
    epsilon: float
    max_choices: int | None = None
    variant: str = "oue"

    def __post_init__(self) -> None:
        k, ell = check_max_choices(self.k, self.max_choices)
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "max_choices", ell)
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {self.variant!r}")

    @property
    def ell(self) -> int:
        return resolved(self.max_choices, "max_choices")

    @property
    def name(self) -> str:
        """The registered name (:data:`ldp.multiselect.SET_MECHANISMS`): set-sue or set-oue."""
        return f"set-{self.variant}"

    @property
    def mechanism_name(self) -> str:
        return self.name

    @property
    def bit_epsilon(self) -> float:
        """The per-bit budget: beta (SUE) or gamma (OUE) of the module docstring."""
        k, ell = self.k, self.ell
        if self.variant == "sue":
            return self.epsilon / min(2 * ell, k)
        other = min(ell, k - ell)
        if other == ell:
            return self.epsilon / ell

        def excess(gamma: float) -> float:
            high = math.log((math.exp(gamma) + 1) / 2)
            return ell * high + other * (gamma - high) - self.epsilon

        return float(optimize.brentq(excess, self.epsilon / ell, self.epsilon / ell + 1.0, xtol=1e-15, rtol=1e-15))

    @property
    def true_bit_probability(self) -> float:
        """p: a chosen option's bit is 1."""
        return binary_keep_probability(self.bit_epsilon) if self.variant == "sue" else 0.5

    @property
    def other_bit_probability(self) -> float:
        """q: an option not chosen sends 1."""
        return 1.0 - binary_keep_probability(self.bit_epsilon)

    def params(self) -> dict[str, Any]:
        return {"max_choices": self.ell, "variant": self.variant}

    def client_spec(self) -> dict[str, Any]:
        return {
            **spec_header(self.mechanism_name, self.k, self.ell, self.epsilon),
            "true_bit_probability": self.true_bit_probability,
            "other_bit_probability": self.other_bit_probability,
        }

    @property
    def report_width(self) -> int:
        return (self.k + 7) // 8  # bit j is bit j % 8 of byte j // 8

    def randomize(self, sets: ArrayLike, *, rng: Any = None) -> np.ndarray:
        rng = np.random.default_rng(rng)
        chosen = check_sets(sets, self.k, self.ell)
        one = np.where(chosen, self.true_bit_probability, self.other_bit_probability)
        return np.packbits(rng.random(chosen.shape) < one, axis=1, bitorder="little")

    def parse_report(self, obj: Any) -> bytes:
        report = require_fields(obj, {"bits"})
        bits = require_bits(report["bits"], "bits", self.k)
        return np.packbits(np.array(bits, dtype=bool), bitorder="little").tobytes()

    def unpack_report(self, packed: bytes) -> dict[str, Any]:
        bits = self._bits(np.frombuffer(packed, dtype=np.uint8).reshape(1, -1))
        return {"bits": bits[0].astype(int).tolist()}

    def _bits(self, packed: np.ndarray) -> np.ndarray:
        if packed.ndim != 2 or packed.shape[1] != self.report_width:
            width = packed.shape[-1] if packed.ndim else 0
            raise InvalidReport(
                f"packed reports must have {self.report_width} bytes each, got {width}",
                "packed-width",
                width=self.report_width,
                got=width,
            )
        return np.unpackbits(packed, axis=1, count=self.k, bitorder="little")

    def tally(self, packed: np.ndarray) -> Tally:
        """Counts: how many reports have each option's bit set."""
        return Tally(int(packed.shape[0]), self._bits(packed).sum(axis=0, dtype=np.int64))

    def sample_tallies(self, sets: ArrayLike, repetitions: int, *, rng: Any = None) -> np.ndarray:
        """Tally counts of ``repetitions`` randomizations of the population ``sets``: binomial draws."""
        rng = np.random.default_rng(rng)
        chosen = check_sets(sets, self.k, self.ell).sum(axis=0)
        n = len(np.asarray(sets))
        size = (repetitions, self.k)
        return rng.binomial(chosen, self.true_bit_probability, size) + rng.binomial(
            n - chosen, self.other_bit_probability, size
        )

    @property
    def unit_variances(self) -> np.ndarray:
        """V[j, t] shaped for :func:`~ldp.intervals.unified_interval`: V[j, j] = a + b, else a.

        n Var(pi_hat_j) = a + b pi_j with a = q (1 - q) / (p - q)^2 and
        b = (p (1 - p) - q (1 - q)) / (p - q)^2; options do not share reports' randomness, so
        every row's off-diagonal is the same a and the band of option j depends on pi_j only.
        """
        p, q = self.true_bit_probability, self.other_bit_probability
        a = q * (1 - q) / (p - q) ** 2
        b = (p * (1 - p) - q * (1 - q)) / (p - q) ** 2
        return np.full((self.k, self.k), a) + b * np.eye(self.k)

    def report_variances(self, shares: ArrayLike) -> np.ndarray:
        """n Var(pi_hat_j) at the given shares."""
        pi = np.asarray(shares, dtype=float)
        v = self.unit_variances
        return v[0, 1] + (v[0, 0] - v[0, 1]) * pi

    def estimate(self, tally: Tally) -> SharesEstimate:
        if tally.n == 0:
            raise ValueError("cannot estimate from zero reports")
        p, q = self.true_bit_probability, self.other_bit_probability
        shares = (tally.counts / tally.n - q) / (p - q)
        variances = self.report_variances(np.clip(shares, 0.0, 1.0)) / tally.n
        bands, joint = share_bands(self.unit_variances, shares, tally.n, self.k)
        return SharesEstimate(
            shares, np.diag(variances), tally.n, float(shares.sum()), float(variances.sum()), bands, joint
        )

    def worst_case_log_ratio(self) -> float:
        return set_log_ratio(self.true_bit_probability, self.other_bit_probability, self.k, self.ell)

    def report_probabilities(self) -> np.ndarray:
        """P[bits | set] for every admissible set (rows, :func:`all_sets` order) and all 2^k bit vectors."""
        if self.k > 12:
            raise ValueError("report space too large to enumerate")
        reports = np.array(list(np.ndindex(*(2,) * self.k)), dtype=bool)  # (2^k, k)
        sets = all_sets(self.k, self.ell)
        one = np.where(sets, self.true_bit_probability, self.other_bit_probability)  # (sets, k)
        return np.prod(np.where(reports[None, :, :], one[:, None, :], 1 - one[:, None, :]), axis=2)
