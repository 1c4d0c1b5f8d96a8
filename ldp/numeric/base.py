"""The interface every mean-estimation (numeric) mechanism implements.

A numeric question asks for a value x in a range [lo, hi] that the organizer fixes (the range is
the sensitivity). Every mechanism here works in three exact steps:

1. **Rounding to the input grid.** x is mapped to t = (x - lo) / (hi - lo) * G and rounded to
   k in {0, ..., G} by unbiased randomized rounding: up with probability frac(t), so E[k] = t.
   This is seed 004's alpha-point rounding (Ding, Kulkarni, Yekhanin 2017): with a threshold
   alpha uniform on [0, 1), round up iff frac(t) + alpha >= 1. A respondent who keeps alpha
   (memoization in recurring surveys) rounds a slowly changing value to the same grid point.
2. **A finite grid mechanism.** Given k, the report is an integer index y in
   {0, ..., output_size - 1}, drawn from a distribution whose probabilities are *integer weights
   over an integer total* (at most 2^53), sampled exactly by rejection from uniform integers.
   Privacy is a property of these integers: no floating-point sampling (Mironov, CCS 2012).
3. **Decoding.** ``decode[y]`` (in grid units) satisfies E[decode[Y] | k] = k for every k, so
   lo + (hi - lo) / G * mean(decode[Y]) estimates the mean of x without bias.

Privacy over all of [lo, hi]: the report distribution of any x is a mixture of two grid rows,
P(y | x) = (1 - f) P(y | k) + f P(y | k + 1). If every pair of grid rows satisfies
P(y | k) <= e^epsilon P(y | k') then so does every pair of mixtures, because
sum_k w_k P(y | k) <= max_k P(y | k) <= e^epsilon min_k' P(y | k') <= e^epsilon sum_k' w'_k' P(y | k').
For (epsilon, delta) the hockey-stick divergence is jointly convex, so the worst pair of grid
rows bounds every pair of mixtures too. The rounding costs no privacy.

Reports are JSON ``{"index": y}``; the packed form is y as a little-endian unsigned integer of
``report_width`` bytes (1, 2 or 4). A tally is a :class:`~ldp.mechanisms.base.Tally`: the number
of reports and the integer count of each index, so tallies add exactly and the estimator (and
any distribution estimate) needs nothing else.

References
----------
1. I. Mironov. "On significance of the least significant bits for differential privacy." CCS 2012.
2. B. Ding, J. Kulkarni, S. Yekhanin. "Collecting telemetry data privately." NeurIPS 2017;
   seed 004, section 3.3.1 (alpha-point rounding, formulas 3 and 4).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from decimal import Decimal, localcontext
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ldp.families import Family
from ldp.mechanisms.base import Tally
from ldp.mechanisms.reports import InvalidReport, require_fields, require_int
from ldp.privacy import check_epsilon

__all__ = [
    "MAX_TOTAL",
    "DistributionEstimate",
    "MeanEstimate",
    "MeanInterval",
    "NumericMechanism",
    "check_range",
    "ratio_within",
    "sample_symmetric",
    "symmetric_weights",
]

#: Integer weights of one distribution sum to at most this, so browsers sample them exactly with
#: 53-bit uniform integers (every integer up to 2^53 is exact in a JavaScript Number).
MAX_TOTAL = 2**52

#: Finest grid: a step of 1/4096 of the range adds at most (range / 4096)^2 / 4 to a report's
#: variance, and keeps exact report tables (grid points x reports) small enough to enumerate.
MAX_GRID = 4096


class MeanInterval(NamedTuple):
    """Lower and upper ends of a confidence interval for a mean."""

    low: float
    high: float


@dataclass(frozen=True)
class MeanEstimate:
    """An unbiased estimate of the respondents' mean value with its standard error.

    ``standard_error`` is estimated from the data: the sample standard deviation of the decoded
    reports over sqrt(n). For respondents drawn from a population it is consistent for the
    estimate's standard error about the population mean; about the respondents' own mean it is
    conservative by the spread of their true values (which is small next to the noise).
    ``expected_standard_error`` is the mechanism's analytic worst case over inputs at this n.

    >>> MeanEstimate(5.0, 0.5, 100, 0.6).confidence_interval()
    MeanInterval(low=4.020018007729973, high=5.979981992270027)
    """

    mean: float
    standard_error: float
    n: int
    expected_standard_error: float

    def confidence_interval(self, level: float = 0.95) -> MeanInterval:
        """The normal (Wald) interval mean +/- z * standard_error."""
        if not 0 < level < 1:
            raise ValueError(f"level must lie in (0, 1), got {level!r}")
        z = float(stats.norm.ppf(0.5 + level / 2))
        return MeanInterval(self.mean - z * self.standard_error, self.mean + z * self.standard_error)


@dataclass(frozen=True)
class DistributionEstimate:
    """Estimated shares of the true values in bins [edges[b], edges[b + 1]) (the last bin closed)."""

    edges: np.ndarray
    proportions: np.ndarray
    n: int


def check_range(lo: float, hi: float) -> tuple[float, float]:
    """Validate a question's range: finite numbers with lo < hi."""
    for name, value in (("lo", lo), ("hi", hi)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"{name} must be a number, got {value!r}")
        if not math.isfinite(float(value)):
            raise ValueError(f"{name} must be finite, got {value!r}")
    if not float(lo) < float(hi):
        raise ValueError(f"lo must be below hi, got lo={lo!r}, hi={hi!r}")
    return float(lo), float(hi)


def ratio_within(numerator: int, denominator: int, epsilon: float) -> bool:
    """Whether numerator / denominator <= e^epsilon, decided in 50-digit decimal arithmetic.

    ``epsilon`` is taken as the exact binary number it is; e^epsilon to 50 digits settles every
    comparison a float would get wrong by an ulp (e.g. a ratio of exactly 3 at epsilon = ln 3).

    >>> ratio_within(3, 1, math.log(3)), ratio_within(3, 1, math.nextafter(math.log(3), 0))
    (True, False)
    """
    with localcontext() as context:
        context.prec = 50
        return Decimal(numerator) <= Decimal(epsilon).exp() * Decimal(denominator)


def check_grid(grid: int, low: int = 1) -> int:
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or not low <= grid <= MAX_GRID:
        raise ValueError(f"grid must be an integer in [{low}, {MAX_GRID}], got {grid!r}")
    return int(grid)


def symmetric_weights(probabilities: np.ndarray, total: int = MAX_TOTAL) -> np.ndarray:
    """Integer weights w[j] of a symmetric distribution on the integers z with |z| = j.

    ``probabilities[j]`` is P(Z = j) = P(Z = -j) up to a constant; the result has
    w[0] + 2 sum_{j>=1} w[j] <= ``total``, each w[j] the nearest integer to its exact share,
    trailing zeros dropped. P(Z = +-j) is then w[j] / (w[0] + 2 sum w[1:]) exactly.
    """
    p = np.asarray(probabilities, dtype=float)
    scale = (total - p.size) / (p[0] + 2 * p[1:].sum())
    weights = np.rint(p * scale).astype(np.int64)
    nonzero = np.flatnonzero(weights)
    return weights[: nonzero[-1] + 1]


def symmetric_total(weights: np.ndarray) -> int:
    return int(weights[0]) + 2 * int(weights[1:].sum())


def sample_symmetric(weights: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """Draws of Z with P(Z = +-j) = weights[j] / total, exactly (integer inverse transform).

    A uniform integer u in [0, total) is located in the blocks [w0, 2 w1, 2 w2, ...]; within the
    block of j >= 1 its first half gives -j and its second half +j.
    """
    blocks = np.concatenate([weights[:1], 2 * weights[1:]])
    ends = np.cumsum(blocks)
    u = rng.integers(0, int(ends[-1]), size=size)
    j = np.searchsorted(ends, u, side="right")
    start = ends[j] - blocks[j]
    negative = (j > 0) & (u - start < weights[j])
    return np.where(negative, -j, j)


class NumericMechanism(ABC):
    """Base class of the mean-estimation mechanisms; subclasses are frozen dataclasses.

    A subclass sets ``grid`` (G) and provides the grid mechanism: ``output_size``, ``decode``,
    ``sample_grid`` (reports for grid points), ``report_weights`` (the exact integer table, for
    enumeration), ``grid_second_moments`` and ``worst_case_log_ratio``.

    Satisfies :class:`ldp.registry.LDPMechanism` (family "mean").
    """

    name: ClassVar[str]
    family: ClassVar[Family] = "mean"
    lo: float
    hi: float
    epsilon: float
    grid: int

    def _check_common(self) -> None:
        lo, hi = check_range(self.lo, self.hi)
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    # -- what a subclass provides -------------------------------------------------------------
    @abstractmethod
    def params(self) -> dict[str, Any]:
        """The mechanism's knobs beyond lo, hi and epsilon, as JSON-serializable data."""

    @abstractmethod
    def client_spec(self) -> dict[str, Any]:
        """Everything a browser needs to randomize one value (JSON-serializable)."""

    @property
    @abstractmethod
    def output_size(self) -> int:
        """Number of possible reports: indices 0 .. output_size - 1."""

    @property
    @abstractmethod
    def decode(self) -> np.ndarray:
        """Unbiased value of each report index, in grid units: E[decode[Y] | k] = k."""

    @abstractmethod
    def sample_grid(self, k: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Report indices for grid points k (int64 arrays)."""

    @abstractmethod
    def report_weights(self) -> list[list[int]]:
        """Exact table: row k holds the integer weights of every report index (row sums equal)."""

    @abstractmethod
    def grid_second_moments(self) -> np.ndarray:
        """E[decode[Y]^2 | k] for k = 0..G, in grid units squared."""

    @abstractmethod
    def worst_case_log_ratio(self) -> float:
        """Closed-form max over reports y and grid points k, k' of ln(P(y | k) / P(y | k'))."""

    # -- shared machinery ---------------------------------------------------------------------
    def privacy_guarantee(self) -> tuple[float, float]:
        """(epsilon, delta) one report satisfies: delta = 0 except for the Gaussian mechanism.

        >>> from ldp.numeric import PiecewiseMean
        >>> PiecewiseMean(lo=0, hi=1, epsilon=1.0).privacy_guarantee()
        (1.0, 0.0)
        """
        return self.epsilon, 0.0

    @property
    def step(self) -> float:
        """Grid step (hi - lo) / G in the question's units."""
        return (self.hi - self.lo) / self.grid

    @property
    def report_width(self) -> int:
        return 1 if self.output_size <= 2**8 else 2 if self.output_size <= 2**16 else 4

    def spec_header(self) -> dict[str, Any]:
        return {"mechanism": self.name, "lo": self.lo, "hi": self.hi, "epsilon": self.epsilon, "grid": self.grid}

    def check_values(self, values: ArrayLike) -> np.ndarray:
        """True values as a float64 array, each finite and in [lo, hi]."""
        array = np.asarray(values)
        if array.ndim != 1 or not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
            raise ValueError(f"values must be a 1-d numeric array, got dtype {array.dtype} and shape {array.shape}")
        array = array.astype(float)
        if array.size and not (np.all(np.isfinite(array)) and array.min() >= self.lo and array.max() <= self.hi):
            raise ValueError(f"values must be finite and lie in [{self.lo}, {self.hi}]")
        return array

    def round_to_grid(self, values: ArrayLike, *, rng: Any = None, alpha: ArrayLike | None = None) -> np.ndarray:
        """Unbiased randomized (alpha-point) rounding of values to grid points 0..G.

        t = (x - lo) / (hi - lo) * G; k = floor(t) + 1 with probability frac(t). With ``alpha``
        (thresholds in [0, 1), one per value, kept by a respondent across surveys) the rounding
        is the deterministic alpha-point rule of seed 004: up iff frac(t) + alpha >= 1.
        """
        x = self.check_values(values)
        t = (x - self.lo) / (self.hi - self.lo) * self.grid
        below = np.minimum(np.floor(t), self.grid)
        fraction = t - below
        if alpha is None:
            up = np.random.default_rng(rng).random(x.size) < fraction
        else:
            thresholds = np.asarray(alpha, dtype=float)
            if thresholds.shape != x.shape or np.any((thresholds < 0) | (thresholds >= 1)):
                raise ValueError("alpha must hold one threshold in [0, 1) per value")
            up = fraction + thresholds >= 1
        return below.astype(np.int64) + up

    def randomize(self, values: ArrayLike, *, rng: Any = None, alpha: ArrayLike | None = None) -> np.ndarray:
        """Randomize true values; returns packed reports, shape (n, report_width), uint8."""
        rng = np.random.default_rng(rng)
        k = self.round_to_grid(values, rng=rng, alpha=alpha)
        return self.pack(self.sample_grid(k, rng))

    def pack(self, indices: np.ndarray) -> np.ndarray:
        dtype = {1: "<u1", 2: "<u2", 4: "<u4"}[self.report_width]
        return np.ascontiguousarray(indices, dtype=dtype).view(np.uint8).reshape(-1, self.report_width)

    def indices(self, packed: np.ndarray) -> np.ndarray:
        """Report indices of packed reports, shape (n, report_width) -> (n,) int64."""
        dtype = {1: "<u1", 2: "<u2", 4: "<u4"}[self.report_width]
        array = np.ascontiguousarray(packed, dtype=np.uint8)
        if array.ndim != 2 or array.shape[1] != self.report_width:
            raise ValueError(f"packed reports must have shape (n, {self.report_width}), got {array.shape}")
        return array.view(dtype)[:, 0].astype(np.int64)

    def parse_report(self, obj: Any) -> bytes:
        """Validate one report ``{"index": y}`` and return it packed; raise InvalidReport."""
        report = require_fields(obj, {"index"})
        index = require_int(report["index"], "index", 0, self.output_size - 1)
        return self.pack(np.array([index])).tobytes()

    def unpack_report(self, packed: bytes) -> dict[str, Any]:
        if len(packed) != self.report_width:
            raise InvalidReport(
                f"a packed report has {self.report_width} bytes, got {len(packed)}",
                "packed-width",
                width=self.report_width,
                got=len(packed),
            )
        return {"index": int(self.indices(np.frombuffer(packed, dtype=np.uint8).reshape(1, -1))[0])}

    def unpack_many(self, buffer: bytes) -> np.ndarray:
        """Packed reports concatenated into ``buffer``, as an (n, report_width) uint8 array."""
        if len(buffer) % self.report_width:
            raise ValueError(f"buffer length {len(buffer)} is not a multiple of {self.report_width}")
        return np.frombuffer(buffer, dtype=np.uint8).reshape(-1, self.report_width)

    def tally(self, packed: np.ndarray) -> Tally:
        """Number of reports and the integer count of each report index."""
        indices = self.indices(packed)
        if indices.size and indices.max() >= self.output_size:
            raise ValueError(f"a report index exceeds {self.output_size - 1}")
        return Tally(int(indices.size), np.bincount(indices, minlength=self.output_size).astype(np.int64))

    def empty_tally(self) -> Tally:
        return Tally(0, np.zeros(self.output_size, dtype=np.int64))

    def sample_tallies(self, values: ArrayLike, repetitions: int, *, rng: Any = None) -> np.ndarray:
        """Tally counts of ``repetitions`` independent randomizations of the same respondents."""
        rng = np.random.default_rng(rng)
        x = np.tile(self.check_values(values), repetitions)
        indices = self.sample_grid(self.round_to_grid(x, rng=rng), rng)
        offsets = np.repeat(np.arange(repetitions) * self.output_size, x.size // max(repetitions, 1))
        counts = np.bincount(indices + offsets, minlength=repetitions * self.output_size)
        return counts.reshape(repetitions, self.output_size)

    def report_probabilities(self) -> np.ndarray:
        """P(report = y | grid point k) as a float (G + 1, output_size) table."""
        table = np.array(self.report_weights(), dtype=float)
        return table / table.sum(axis=1, keepdims=True)

    def grid_variances(self) -> np.ndarray:
        """Var(decode[Y] | k) for k = 0..G, grid units squared."""
        k = np.arange(self.grid + 1, dtype=float)
        return self.grid_second_moments() - k**2

    def variance(self, values: ArrayLike) -> float:
        """Exact variance of one decoded report, averaged over respondents with these true values.

        Per respondent: the rounding mixes two grid points, so Var = (1 - f) m2(k) + f m2(k + 1) - t^2
        with m2 the grid second moments and t the value in grid units. In the question's units.
        """
        x = self.check_values(values)
        t = (x - self.lo) / (self.hi - self.lo) * self.grid
        below = np.minimum(np.floor(t), self.grid - 1).astype(np.int64)
        fraction = t - below
        m2 = self.grid_second_moments()
        per_value = (1 - fraction) * m2[below] + fraction * m2[below + 1] - t**2
        return float(np.mean(per_value)) * self.step**2

    def worst_case_variance(self) -> float:
        """Largest variance of one decoded report over inputs in [lo, hi], in the question's units.

        The rounding adds at most 1/4 grid step squared to the worst grid point's variance.
        """
        return (float(self.grid_variances().max()) + 0.25) * self.step**2

    def expected_standard_error(self, n: int) -> float:
        """Worst-case standard error of the mean estimate from n reports."""
        return math.sqrt(self.worst_case_variance() / n)

    def estimate(self, tally: Tally) -> MeanEstimate:
        """Unbiased mean estimate lo + step * mean(decode[y]) with its standard error."""
        if tally.n == 0:
            raise ValueError("cannot estimate from zero reports")
        if tally.counts.shape != (self.output_size,):
            raise ValueError(f"tally counts must have shape ({self.output_size},), got {tally.counts.shape}")
        decoded_mean = float(tally.counts @ self.decode) / tally.n
        second = float(tally.counts @ self.decode**2) / tally.n
        if tally.n > 1:
            sample_variance = max(second - decoded_mean**2, 0.0) * tally.n / (tally.n - 1) * self.step**2
        else:
            sample_variance = self.worst_case_variance()
        return MeanEstimate(
            mean=self.lo + self.step * decoded_mean,
            standard_error=math.sqrt(sample_variance / tally.n),
            n=tally.n,
            expected_standard_error=self.expected_standard_error(tally.n),
        )

    def estimate_distribution(
        self, tally: Tally, bins: int | None = None, *, iterations: int = 5000, tolerance: float = 1e-10
    ) -> DistributionEstimate:
        """Maximum-likelihood shares of the true values, per grid point or in ``bins`` equal bins, by EM.

        With A[y, k] = P(report y | grid point k), EM iterates f <- f * A^T (counts / (A f)) / n
        from the uniform f over the grid points (the EMS reconstruction of Li et al., SIGMOD 2020,
        without its smoothing step); ``bins`` equal bins of [lo, hi] then sum their grid points'
        shares. With ``bins=None`` every grid point is its own bin (a rating scale with one grid
        point per answer). A one-bit report identifies only the mean, so 1BitMean and Duchi et al.
        refuse. Gaussian noise is wide next to the grid, so its distribution estimate needs far
        more reports. No bands yet: the mean's interval is the supported one.
        """
        if self.output_size <= 2:
            raise ValueError(f"{self.name} reports one bit, which identifies only the mean")
        if tally.n == 0:
            raise ValueError("cannot estimate from zero reports")
        count = self.grid + 1 if bins is None else check_grid(bins, low=1)
        if count > self.grid + 1:
            raise ValueError(f"bins must be at most grid + 1 = {self.grid + 1}, got {bins!r}")
        response = self.report_probabilities().T  # (reports, grid points)
        counts = tally.counts.astype(float)
        f = np.full(self.grid + 1, 1.0 / (self.grid + 1))
        for _ in range(iterations):
            expected = response @ f
            ratio = np.divide(counts, expected, out=np.zeros_like(counts), where=expected > 0)
            updated = f * (ratio @ response) / tally.n
            done = np.max(np.abs(updated - f)) < tolerance
            f = updated
            if done:
                break
        k = np.arange(self.grid + 1)
        if bins is None:  # each grid point's bin reaches halfway to its neighbours
            edges = np.concatenate([[self.lo], self.lo + self.step * (k[:-1] + 0.5), [self.hi]])
            return DistributionEstimate(edges, f, tally.n)
        member = np.minimum(k * count // self.grid, count - 1)
        return DistributionEstimate(np.linspace(self.lo, self.hi, count + 1), np.bincount(member, f, count), tally.n)

    def estimate_many(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Means and standard errors for a stack of tally counts, shape (repetitions, output_size)."""
        counts = np.asarray(counts)
        n = counts.sum(axis=1)
        decoded = counts @ self.decode / n
        second = counts @ self.decode**2 / n
        variance = np.maximum(second - decoded**2, 0) * n / (n - 1) * self.step**2
        return self.lo + self.step * decoded, np.sqrt(variance / n)
