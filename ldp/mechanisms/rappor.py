"""RAPPOR: Google's randomized aggregatable privacy-preserving ordinal response (seed 004, Fig. 1-3).

Client (ref. 1, section 3; seed 004, Fig. 2), for a string value v and the respondent's cohort j:

1. **Bloom filter** B of ``bits`` bits: the ``hash_count`` positions h_1(v, j) .. h_h(v, j) are 1.
   Murmur's hash (identical in ``static/ldp/rappor.js``): D = SHA-256(encode_fields("murmur-rappor-v1",
   j, v)) (:func:`ldp.text.encode_fields`), and h_i is the i-th 4-byte big-endian word of D modulo
   ``bits`` (at most 8 hashes; the modulo bias, below bits / 2^32, is public and costs no privacy).
2. **Permanent randomized response** (PRR) B': each bit is 1 with probability f/2, 0 with
   probability f/2, and B_i otherwise. B' is *memoized*: computed once per value and reused
   (``static/ldp/memo.js`` derives it from a device secret, so the same value always gives the same B').
3. **Instantaneous randomized response** (IRR) S, fresh for every report: S_i is 1 with
   probability q if B'_i = 1 and p if B'_i = 0. The report is (j, S).

Privacy (ref. 1, section 4), with q* = P(S_i = 1 | B_i = 1) = f(p + q)/2 + (1 - f) q and
p* = P(S_i = 1 | B_i = 0) = f(p + q)/2 + (1 - f) p. Two values' Bloom filters (same cohort) differ
in at most 2h positions, h where one has a 1 and h where the other has; bits are independent, so

    epsilon_1 = h ln(q* (1 - p*) / (p* (1 - q*)))          (one report),
    epsilon_inf = 2h ln((1 - f/2) / (f/2))                   (B' itself: any number of reports),

both attained exactly by two values with disjoint, full Bloom filters. After r reports of one
value the leak is :meth:`Rappor.epsilon_after_rounds` (exact; it grows from epsilon_1 to
epsilon_inf); without memoization it would be r epsilon_1.

Server (ref. 2, ``analysis/R/decode.R``; seed 004, formula 1): per cohort j with N_j reports and
c_ij of them with bit i set, the unbiased estimate of how many true Bloom filters have bit i set is

    t_ij = (c_ij - p* N_j) / (q* - p*),    Var(t_ij) ~ N_j r (1 - r) / (q* - p*)^2,  r = c_ij / N_j,

which is seed 004's formula (1) and google/rappor's ``EstimateBloomCounts`` (which takes r from
the clamped estimate instead of the observed share). :func:`decode` regresses Y_ij = t_ij / N_j on
the candidate strings' Bloom bits X (rows (cohort, bit), one column per candidate) weighted by
1/Var. Selection: a non-negative least squares fit (google/rappor uses a Lasso with lower limit 0
when there are nearly as many candidates as equations, then a non-negative linear model; NNLS is
the Lasso at penalty 0 and is already sparse). Inference: ordinary weighted least squares on the
selected candidates with the analytic covariance (X' W X)^-1, and a one-sided z-test of share 0
at level alpha / M over all M candidates (Bonferroni). This is the test decode.R sets alpha / M for
but leaves commented out, keeping instead coefficients above two standard deviations of five
resampled fits. Murmur states a level: the chance of any false discovery, and with it the
false-discovery rate, is meant to stay below alpha; selection makes that approximate, so it is
measured (``docs/experiments.md``: at most one false discovery in 250 simulated surveys).

References
----------
1. U. Erlingsson, V. Pihur, A. Korolova. "RAPPOR: randomized aggregatable privacy-preserving
   ordinal response." CCS 2014.
2. G. Fanti, V. Pihur, U. Erlingsson. "Building a RAPPOR with the unknown: privacy-preserving
   learning of associations and data dictionaries." PETS 2016; github.com/google/rappor.
3. Seed 004 (Jeong, Hong, Seo 2020), section 3.1, formula (1), Fig. 3 (bits 32, h 2, cohorts 64,
   p 0.25, q 0.75, f 0.5: epsilon_1 = 2.04).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, stats

from ldp.mechanisms.reports import require_bits, require_fields, require_int
from ldp.privacy import memoized_bit_log_ratios
from ldp.text import encode_fields

__all__ = ["BitCounts", "Rappor", "RapporDecode", "decode"]

HASH_DOMAIN = "murmur-rappor-v1"
MAX_BITS = 1024
MAX_HASHES = 8
MAX_COHORTS = 1024


def _check_probability(name: str, value: Any, low_open: bool, high_open: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    x = float(value)
    low_ok = x > 0 if low_open else x >= 0
    high_ok = x < 1 if high_open else x <= 1
    if not (math.isfinite(x) and low_ok and high_ok):
        raise ValueError(f"{name} must lie in {'(' if low_open else '['}0, 1{')' if high_open else ']'}, got {value!r}")
    return x


@dataclass(frozen=True, eq=False)
class BitCounts:
    """Sufficient statistics of RAPPOR reports: reports per cohort and set bits per (cohort, bit).

    Counts of disjoint sets of reports add up (``+``).
    """

    reports: np.ndarray  # shape (cohorts,)
    ones: np.ndarray  # shape (cohorts, bits)

    @property
    def n(self) -> int:
        return int(self.reports.sum())

    def __add__(self, other: BitCounts) -> BitCounts:
        if self.ones.shape != other.ones.shape:
            raise ValueError(f"cannot add bit counts of shapes {self.ones.shape} and {other.ones.shape}")
        return BitCounts(self.reports + other.reports, self.ones + other.ones)


@dataclass(frozen=True, eq=False)
class Rappor:
    """RAPPOR's parameters and everything computed from them (see the module docstring).

    Examples
    --------
    >>> r = Rappor(bits=32, hash_count=2, cohorts=64, f=0.5, p=0.25, q=0.75)  # seed 004, Fig. 3
    >>> round(r.epsilon_one_report(), 4), round(r.epsilon_infinity(), 4)
    (2.0433, 4.3944)
    """

    name: ClassVar[str] = "rappor"
    bits: int = 32
    hash_count: int = 2
    cohorts: int = 64
    f: float = 0.5
    p: float = 0.25
    q: float = 0.75

    def __post_init__(self) -> None:
        for name, value, low, high in (
            ("bits", self.bits, 2, MAX_BITS),
            ("hash_count", self.hash_count, 1, MAX_HASHES),
            ("cohorts", self.cohorts, 1, MAX_COHORTS),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
                raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}")
        if 2 * self.hash_count > self.bits:
            raise ValueError(f"bits must be at least 2 * hash_count, got {self.bits} and {self.hash_count}")
        object.__setattr__(self, "f", _check_probability("f", self.f, True, True))
        object.__setattr__(self, "p", _check_probability("p", self.p, False, True))
        object.__setattr__(self, "q", _check_probability("q", self.q, True, False))
        if not self.p < self.q:
            raise ValueError(f"p must be below q, got p={self.p}, q={self.q}")

    def params(self) -> dict[str, Any]:
        names = ("bits", "hash_count", "cohorts", "f", "p", "q")
        return {name: getattr(self, name) for name in names}

    def client_spec(self) -> dict[str, Any]:
        """What ``static/ldp/rappor.js`` needs: the parameters (every probability is one of them)."""
        return {"mechanism": self.name, **self.params()}

    # -- encoding -------------------------------------------------------------------------------
    def check_cohort(self, cohort: Any) -> int:
        if isinstance(cohort, bool) or not isinstance(cohort, (int, np.integer)) or not 0 <= cohort < self.cohorts:
            raise ValueError(f"cohort must be an integer in [0, {self.cohorts}), got {cohort!r}")
        return int(cohort)

    def bloom_positions(self, value: str, cohort: int) -> tuple[int, ...]:
        """h_1(v, j), ..., h_h(v, j): words of SHA-256(encode_fields(domain, cohort, value)) mod bits.

        >>> Rappor(bits=16).bloom_positions("서울", 3)
        (4, 15)
        """
        if not isinstance(value, str):
            raise ValueError(f"value must be a string, got {type(value).__name__}")
        digest = hashlib.sha256(encode_fields(HASH_DOMAIN, self.check_cohort(cohort), value)).digest()
        return tuple(int.from_bytes(digest[4 * i : 4 * i + 4], "big") % self.bits for i in range(self.hash_count))

    def bloom_filter(self, value: str, cohort: int) -> np.ndarray:
        """B: 0/1 uint8 vector of length ``bits`` with the value's positions set."""
        bloom = np.zeros(self.bits, dtype=np.uint8)
        bloom[list(self.bloom_positions(value, cohort))] = 1
        return bloom

    def candidate_matrix(self, candidates: Sequence[str]) -> np.ndarray:
        """X[j, i, s] = bit i of candidate s's Bloom filter in cohort j (uint8, cohorts x bits x M).

        Cached per (parameters, candidates): a read-only array.
        """
        return _candidate_matrix(self.bits, self.hash_count, self.cohorts, tuple(candidates))

    # -- probabilities and privacy ----------------------------------------------------------------
    @property
    def permanent_one(self) -> tuple[float, float]:
        """(P(B'_i = 1 | B_i = 0), P(B'_i = 1 | B_i = 1)) = (f/2, 1 - f/2)."""
        return self.f / 2, 1 - self.f / 2

    @property
    def report_one(self) -> tuple[float, float]:
        """(p*, q*): P(S_i = 1 | B_i = 0) and P(S_i = 1 | B_i = 1) for one report."""
        shared = self.f * (self.p + self.q) / 2
        return shared + (1 - self.f) * self.p, shared + (1 - self.f) * self.q

    def epsilon_one_report(self) -> float:
        """epsilon_1 = h ln(q* (1 - p*) / (p* (1 - q*))): the exact worst case of one report."""
        p_star, q_star = self.report_one
        return self.hash_count * (math.log(q_star / p_star) + math.log((1 - p_star) / (1 - q_star)))

    def epsilon_infinity(self) -> float:
        """epsilon_inf = 2h ln((1 - f/2) / (f/2)): the permanent response's (any number of reports')."""
        return 2 * self.hash_count * math.log((1 - self.f / 2) / (self.f / 2))

    def epsilon_after_rounds(self, rounds: int) -> float:
        """Exact worst-case log-ratio of ``rounds`` reports of one value sharing one memoized B'.

        Per Bloom bit the r IRR bits matter through their number of ones s: with b = B_i,
        L_b(s) = P(B' = 1 | b) q^s (1 - q)^(r - s) + P(B' = 0 | b) p^s (1 - p)^(r - s), so the
        worst case is h max_s ln(L_1(s) / L_0(s)) + h max_s ln(L_0(s) / L_1(s)).

        >>> r = Rappor(bits=32, hash_count=2, f=0.5, p=0.25, q=0.75)
        >>> math.isclose(r.epsilon_after_rounds(1), r.epsilon_one_report())
        True
        >>> r.epsilon_after_rounds(10) < r.epsilon_infinity()
        True
        """
        up, down = memoized_bit_log_ratios(self.permanent_one, (self.p, self.q), rounds)
        return self.hash_count * (up + down)

    def report_log_probability(self, report: np.ndarray, bloom: np.ndarray) -> float:
        """ln P(S = report | B = bloom) for one report (bits independent given B)."""
        p_star, q_star = self.report_one
        one = np.where(bloom == 1, q_star, p_star)
        return float(np.sum(np.where(report == 1, np.log(one), np.log1p(-one))))

    # -- randomization (simulation) ---------------------------------------------------------------
    def permanent_response(self, blooms: ArrayLike, *, rng: Any = None) -> np.ndarray:
        """B' for each row of ``blooms`` (n x bits, 0/1), drawn fresh (no memoization)."""
        rng = np.random.default_rng(rng)
        bloom = np.asarray(blooms, dtype=np.uint8)
        u = rng.random(bloom.shape)
        return np.where(u < self.f / 2, 1, np.where(u < self.f, 0, bloom)).astype(np.uint8)

    def instantaneous_response(self, permanent: ArrayLike, *, rng: Any = None) -> np.ndarray:
        """S for each row of ``permanent`` (n x bits): 1 with probability q where B' = 1, p where 0."""
        rng = np.random.default_rng(rng)
        memo = np.asarray(permanent, dtype=np.uint8)
        return (rng.random(memo.shape) < np.where(memo == 1, self.q, self.p)).astype(np.uint8)

    def randomize(self, values: Sequence[str], cohorts: ArrayLike, *, rng: Any = None) -> np.ndarray:
        """Reports S (n x bits) of values in their cohorts, PRR and IRR drawn fresh."""
        rng = np.random.default_rng(rng)
        cohort_array = np.asarray(cohorts)
        if len(values) != cohort_array.size:
            raise ValueError(f"values and cohorts must have the same length, got {len(values)} and {cohort_array.size}")
        blooms = np.array([self.bloom_filter(v, int(j)) for v, j in zip(values, cohort_array, strict=True)])
        return self.instantaneous_response(self.permanent_response(blooms, rng=rng), rng=rng)

    def simulate_counts(self, candidates: Sequence[str], true_counts: ArrayLike, *, rng: Any = None) -> BitCounts:
        """The bit counts of reports from a population, drawn without making the reports.

        ``true_counts[s]`` respondents hold ``candidates[s]``; each is in a uniform cohort. Bits
        are independent given B, so per (cohort, bit) the count is Binomial(ones, q*) +
        Binomial(N_j - ones, p*), ones being how many of the cohort's Bloom filters set the bit:
        the exact distribution of :meth:`tally` of :meth:`randomize`.
        """
        rng = np.random.default_rng(rng)
        counts = np.asarray(true_counts, dtype=np.int64)
        if counts.shape != (len(candidates),) or (counts < 0).any():
            raise ValueError(f"true_counts must be {len(candidates)} non-negative integers")
        per_cohort = np.array([rng.multinomial(c, np.full(self.cohorts, 1 / self.cohorts)) for c in counts]).T
        set_bits = np.einsum("jis,js->ji", self.candidate_matrix(candidates).astype(np.int64), per_cohort)
        reports = per_cohort.sum(axis=1)
        p_star, q_star = self.report_one
        ones = rng.binomial(set_bits, q_star) + rng.binomial(reports[:, None] - set_bits, p_star)
        return BitCounts(reports, ones)

    # -- reports ---------------------------------------------------------------------------------
    @property
    def report_width(self) -> int:
        """Bytes of a packed report: the cohort (2, little-endian) and the bits (packed, big-endian)."""
        return 2 + (self.bits + 7) // 8

    def parse_report(self, obj: Any) -> bytes:
        """Validate ``{"cohort": j, "bits": [0/1 x bits]}`` and pack it; raise InvalidReport.

        >>> Rappor(bits=8, hash_count=2, cohorts=4).parse_report({"cohort": 3, "bits": [1, 0, 0, 0, 0, 0, 0, 1]})
        b'\\x03\\x00\\x81'
        """
        report = require_fields(obj, {"cohort", "bits"})
        cohort = require_int(report["cohort"], "cohort", 0, self.cohorts - 1)
        bits = require_bits(report["bits"], "bits", self.bits)
        return cohort.to_bytes(2, "little") + np.packbits(np.array(bits, dtype=np.uint8)).tobytes()

    def unpack_report(self, packed: bytes) -> dict[str, Any]:
        row = np.frombuffer(packed, dtype=np.uint8)
        return {"cohort": int(row[0]) | int(row[1]) << 8, "bits": np.unpackbits(row[2:])[: self.bits].tolist()}

    def pack_reports(self, cohorts: ArrayLike, reports: ArrayLike) -> np.ndarray:
        """Packed form (n x report_width) of cohorts and report bit rows."""
        cohort_array = np.asarray(cohorts, dtype=np.uint16)
        head = np.stack([cohort_array & 0xFF, cohort_array >> 8], axis=1).astype(np.uint8)
        return np.concatenate([head, np.packbits(np.asarray(reports, dtype=np.uint8), axis=1)], axis=1)

    def tally(self, packed: ArrayLike) -> BitCounts:
        """Reports per cohort and set bits per (cohort, bit) of packed reports."""
        rows = np.asarray(packed, dtype=np.uint8).reshape(-1, self.report_width)
        cohort = rows[:, 0].astype(np.int64) | rows[:, 1].astype(np.int64) << 8
        if (cohort >= self.cohorts).any():
            raise ValueError(f"a packed report names a cohort outside [0, {self.cohorts})")
        bits = np.unpackbits(rows[:, 2:], axis=1)[:, : self.bits].astype(np.int64)
        ones = np.zeros((self.cohorts, self.bits), dtype=np.int64)
        np.add.at(ones, cohort, bits)
        return BitCounts(np.bincount(cohort, minlength=self.cohorts), ones)

    def empty_counts(self) -> BitCounts:
        return BitCounts(np.zeros(self.cohorts, dtype=np.int64), np.zeros((self.cohorts, self.bits), dtype=np.int64))

    # -- decoding ----------------------------------------------------------------------------------
    def bit_estimates(self, counts: BitCounts) -> tuple[np.ndarray, np.ndarray]:
        """(t_ij / N_j, its standard deviation) for cohorts with reports: true-bit shares per cohort.

        Shape (cohorts with reports, bits) each. The deviation takes r, the share of reports with
        bit i set, pooled over all cohorts (kept within [1/(2 N), 1 - 1/(2 N)] so that no variance
        is zero), not each cell's own c_ij / N_j: weights made from a cell's own count are
        correlated with it and bias the weighted fit. With a few dozen reports per cohort the
        per-cell weights put absent candidates about 3 standard errors below zero on average
        (measured: 60 simulated surveys of 1,550 reports, 64 cohorts, epsilon_1 = 4); pooled,
        the errors' z-scores have mean 0 and standard deviation 1 within sampling error.
        """
        used = counts.reports > 0
        reports = counts.reports[used][:, None].astype(float)
        p_star, q_star = self.report_one
        shares = (counts.ones[used] / reports - p_star) / (q_star - p_star)
        total = float(reports.sum())
        pooled = np.clip(counts.ones[used].sum(axis=0) / total, 0.5 / total, 1 - 0.5 / total)
        return shares, np.sqrt(pooled * (1 - pooled) / reports) / (q_star - p_star)


@lru_cache(maxsize=16)
def _candidate_matrix(bits: int, hash_count: int, cohorts: int, candidates: tuple[str, ...]) -> np.ndarray:
    hashing = Rappor(bits=bits, hash_count=hash_count, cohorts=cohorts)
    matrix = np.zeros((cohorts, bits, len(candidates)), dtype=np.uint8)
    for s, candidate in enumerate(candidates):
        for j in range(cohorts):
            matrix[j, list(hashing.bloom_positions(candidate, j)), s] = 1
    matrix.flags.writeable = False
    return matrix


class CandidateInterval(NamedTuple):
    """Lower and upper ends of intervals for candidates' counts, one entry per candidate."""

    low: np.ndarray
    high: np.ndarray


@dataclass(frozen=True, eq=False)
class RapporDecode:
    """Decoded RAPPOR counts for a list of candidate strings.

    ``counts`` and ``standard_errors`` are in respondents (share times n); candidates the NNLS fit
    left out (and not asked for) have count 0 and standard error NaN. ``p_values`` test
    "share = 0" against "share > 0" (one-sided z-tests of the weighted least squares fit);
    ``found`` marks candidates significant at alpha / M (Bonferroni over the M candidates).
    """

    candidates: tuple[str, ...]
    counts: np.ndarray
    standard_errors: np.ndarray
    p_values: np.ndarray
    found: np.ndarray
    n: int
    alpha: float

    def interval(self, level: float = 0.95, *, simultaneous: bool = False) -> CandidateInterval:
        """count +- z standard error; with ``simultaneous``, z at level 1 - (1 - level) / M (Bonferroni).

        The fit conditions on the selected candidates: the intervals are honest when the
        strings respondents wrote are among the selected candidates (tested by simulation).
        """
        if not 0 < level < 1:
            raise ValueError(f"level must lie in (0, 1), got {level!r}")
        tail = (1 - level) / (len(self.candidates) if simultaneous else 1)
        z = float(stats.norm.isf(tail / 2))
        return CandidateInterval(self.counts - z * self.standard_errors, self.counts + z * self.standard_errors)

    def count_of(self, candidate: str) -> tuple[float, float]:
        """(count, standard error) of one candidate: "how many wrote X?"."""
        s = self.candidates.index(candidate)
        return float(self.counts[s]), float(self.standard_errors[s])


def decode(
    mechanism: Rappor,
    counts: BitCounts,
    candidates: Sequence[str],
    *,
    alpha: float = 0.05,
    always: Sequence[str] = (),
) -> RapporDecode:
    """Which candidates were reported, and how often (see the module docstring).

    ``candidates`` are normalized strings (:func:`ldp.text.normalize_text`), all distinct;
    ``always`` names candidates kept in the final fit even if NNLS drops them, so that a query
    "how many wrote X?" always gets an estimate and a standard error.

    >>> r = Rappor(bits=16, hash_count=2, cohorts=16, f=0.25, p=0.25, q=0.75)
    >>> names = ["a", "b", "c", "d"]
    >>> counts = r.simulate_counts(names, [30_000, 10_000, 0, 0], rng=1)
    >>> decode(r, counts, names).found.tolist()
    [True, True, False, False]
    """
    names = tuple(candidates)
    if len(set(names)) != len(names) or not names:
        raise ValueError("candidates must be a non-empty list of distinct strings")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    unknown = set(always) - set(names)
    if unknown:
        raise ValueError(f"always names strings that are not candidates: {sorted(unknown)}")
    n = counts.n
    if n == 0:
        raise ValueError("cannot decode zero reports")
    shares, deviations = mechanism.bit_estimates(counts)
    design = mechanism.candidate_matrix(names)[counts.reports > 0].reshape(-1, len(names)).astype(float)
    weights = 1 / deviations.ravel()
    weighted_design, weighted_target = design * weights[:, None], shares.ravel() * weights
    selection, _ = optimize.nnls(weighted_design, weighted_target)
    chosen = (selection > 0) | np.isin(names, list(always))
    columns = np.flatnonzero(chosen)
    estimate = np.zeros(len(names))
    errors = np.full(len(names), np.nan)
    p_values = np.ones(len(names))
    if columns.size:
        sub = weighted_design[:, columns]
        covariance = np.linalg.pinv(sub.T @ sub)
        beta = covariance @ sub.T @ weighted_target
        se = np.sqrt(np.diag(covariance))
        estimate[columns], errors[columns] = beta * n, se * n
        p_values[columns] = stats.norm.sf(beta / se)
    found = p_values <= alpha / len(names)
    return RapporDecode(names, estimate, errors, p_values, found, n, alpha)
