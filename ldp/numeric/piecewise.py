"""The Piecewise mechanism and the Hybrid mechanism (Wang et al., ICDE 2019), on an output grid.

Piecewise (Wang et al. 2019, Alg. 2): for t in [-1, 1] let C = (e^(epsilon/2) + 1) / (e^(epsilon/2) - 1),
l(t) = (C + 1) t / 2 - (C - 1) / 2 and r(t) = l(t) + C - 1. The report is drawn from [-C, C] with
density p = (e^epsilon - e^(epsilon/2)) / (2 e^(epsilon/2) + 2) on [l(t), r(t)] and p / e^epsilon
elsewhere; it is unbiased, with Var = t^2 / (e^(epsilon/2) - 1) + (e^(epsilon/2) + 3) / (3 (e^(epsilon/2) - 1)^2).
The high-density window has length C - 1 and slides over C + 1 as t goes from -1 to 1: the
ratio of slide to window is e^(epsilon/2).

Murmur's Piecewise is that construction on integers, so the epsilon guarantee holds for the
numbers sent. x is rounded to a grid point k in {0..G} (:mod:`ldp.numeric.base`); the output is a
cell index j in {0, ..., N - 1}, N = G + L, with the window of L = max(1, round(G e^(-epsilon/2)))
cells starting at cell k (it slides G cells as k goes from 0 to G, so slide / window ~ e^(epsilon/2)).
Window cells have integer weight h, the others l, with h / l <= e^epsilon (equal up to 1e-10); every
row has the same total L h + G l <= 2^52, so for every cell the ratio between any two rows is 1,
h / l or l / h: the worst case is exactly ln(h / l). E[j | k] = c0 + c1 k is linear
(c1 = (h - l) L / (L h + G l)), so decode[j] = (j - c0) / c1 is unbiased. The default grid is
max(100, ceil(16 e^(epsilon/2))), so the window is at least 16 cells and the grid version's
variance is within a few per cent of the continuous one (see the tests).

Hybrid (Wang et al. 2019, section III-C): Piecewise with probability beta, Duchi et al.'s
mechanism otherwise, each at the full epsilon, with beta = 1 - e^(-epsilon/2) for
epsilon > 0.61 and 0 below. The reports of the two branches are distinct indices (Piecewise's
cells, then Duchi's two bits), so each report's likelihood ratio is its branch's, <= e^epsilon.
Each branch is decoded unbiasedly, so the mixture is unbiased for any beta; beta is drawn as
an integer out of 2^32.

References
----------
1. N. Wang, X. Xiao, Y. Yang, J. Zhao, S. C. Hui, H. Shin, J. Shin, G. Yu. "Collecting and
   analyzing multidimensional data with local differential privacy." ICDE 2019, Algorithms 1-2,
   Lemma 1 (the worst-case variances) and section III-C (Hybrid, epsilon* = 0.61).
2. J. Duchi, M. Jordan, M. Wainwright. "Minimax optimal procedures for locally private
   estimation." JASA 113(521), 2018.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from ldp.numeric.base import MAX_TOTAL, NumericMechanism, check_grid, ratio_within
from ldp.numeric.one_bit import DuchiMean

__all__ = ["HYBRID_THRESHOLD", "HybridMean", "PiecewiseMean", "piecewise_variance", "duchi_variance"]

#: Wang et al.'s epsilon*: below it Hybrid uses Duchi et al.'s mechanism only.
HYBRID_THRESHOLD = 0.61
BRANCH_TOTAL = 2**32


def piecewise_variance(t: float | np.ndarray, epsilon: float) -> float | np.ndarray:
    """Variance of the continuous Piecewise mechanism at t in [-1, 1] (Wang et al. 2019, Lemma 1).

    >>> round(float(piecewise_variance(1.0, 2 * math.log(3))), 6)  # e^(eps/2) = 3: 1/2 + 6/12
    1.0
    """
    half = math.exp(epsilon / 2)
    return t**2 / (half - 1) + (half + 3) / (3 * (half - 1) ** 2)


def duchi_variance(t: float | np.ndarray, epsilon: float) -> float | np.ndarray:
    """Variance of Duchi et al.'s mechanism at t: C^2 - t^2, C = (e^epsilon + 1) / (e^epsilon - 1)."""
    c = (math.exp(epsilon) + 1) / (math.exp(epsilon) - 1)
    return c**2 - t**2


def piecewise_weights(epsilon: float, window: int, cells: int) -> tuple[int, int]:
    """Integers (h, l) with h / l <= e^epsilon and window h + (cells - window) l <= 2^52."""
    ratio = math.exp(epsilon)
    low = int(MAX_TOTAL // (window * ratio + (cells - window)))
    high = int(low * ratio)
    while not ratio_within(high, low, epsilon):  # float rounding
        high -= 1
    return high, low


@dataclass(frozen=True, eq=False)
class PiecewiseMean(NumericMechanism):
    """Wang et al.'s Piecewise mechanism with an integer output grid.

    Examples
    --------
    >>> m = PiecewiseMean(lo=0, hi=1, epsilon=2 * math.log(2), grid=100)
    >>> m.window, m.output_size  # L = G / e^(epsilon/2) = 50 cells, N = G + L
    (50, 150)
    """

    name: ClassVar[str] = "piecewise"
    lo: float
    hi: float
    epsilon: float
    grid: int = None  # type: ignore[assignment]  # None: chosen from epsilon by __post_init__, an int after
    window: int = field(init=False)
    high: int = field(init=False, repr=False)
    low: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._check_common()
        grid = max(100, math.ceil(16 * math.exp(self.epsilon / 2))) if self.grid is None else self.grid
        object.__setattr__(self, "grid", check_grid(grid))
        window = max(1, round(self.grid * math.exp(-self.epsilon / 2)))
        object.__setattr__(self, "window", window)
        high, low = piecewise_weights(self.epsilon, window, self.grid + window)
        object.__setattr__(self, "high", high)
        object.__setattr__(self, "low", low)

    def params(self) -> dict[str, Any]:
        return {"grid": self.grid}

    def client_spec(self) -> dict[str, Any]:
        return {**self.spec_header(), "window": self.window, "high": self.high, "low": self.low}

    @property
    def output_size(self) -> int:
        return self.grid + self.window

    @property
    def row_total(self) -> int:
        return self.window * self.high + self.grid * self.low

    @cached_property
    def _linear(self) -> tuple[float, float]:
        """(c0, c1) with E[j | k] = c0 + c1 k."""
        h, low, w, n = self.high, self.low, self.window, self.output_size
        c1 = (h - low) * w / self.row_total
        c0 = ((h - low) * w * (w - 1) / 2 + low * n * (n - 1) / 2) / self.row_total
        return c0, c1

    @cached_property
    def decode(self) -> np.ndarray:
        c0, c1 = self._linear
        return (np.arange(self.output_size, dtype=float) - c0) / c1

    def sample_grid(self, k: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # u < L h: cell k + u // h of the window; otherwise cell (u - L h) // l of the others in order.
        u = rng.integers(0, self.row_total, size=k.size)
        inside = u < self.window * self.high
        other = (u - self.window * self.high) // self.low
        other = np.where(other >= k, other + self.window, other)
        return np.where(inside, k + u // self.high, other)

    def report_weights(self) -> list[list[int]]:
        rows = []
        for k in range(self.grid + 1):
            row = [self.low] * self.output_size
            row[k : k + self.window] = [self.high] * self.window
            rows.append(row)
        return rows

    def grid_second_moments(self) -> np.ndarray:
        d2 = self.decode**2
        cumulative = np.concatenate([[0.0], np.cumsum(d2)])
        k = np.arange(self.grid + 1)
        window_sum = cumulative[k + self.window] - cumulative[k]
        return ((self.high - self.low) * window_sum + self.low * cumulative[-1]) / self.row_total

    def worst_case_log_ratio(self) -> float:
        return math.log(self.high / self.low)


@dataclass(frozen=True, eq=False)
class HybridMean(NumericMechanism):
    """Wang et al.'s Hybrid: Piecewise with probability beta, else Duchi et al., each at epsilon.

    Examples
    --------
    >>> m = HybridMean(lo=0, hi=1, epsilon=1.0)
    >>> round(m.piecewise_probability, 6)  # 1 - e^(-1/2)
    0.393469
    >>> HybridMean(lo=0, hi=1, epsilon=0.5).piecewise_probability  # below 0.61: Duchi only
    0.0
    """

    name: ClassVar[str] = "hybrid"
    lo: float
    hi: float
    epsilon: float
    grid: int = None  # type: ignore[assignment]  # None: Piecewise's, from epsilon, set by __post_init__
    piecewise: PiecewiseMean = field(init=False, repr=False)
    duchi: DuchiMean = field(init=False, repr=False)
    branch_weight: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._check_common()
        piecewise = PiecewiseMean(self.lo, self.hi, self.epsilon, self.grid)
        object.__setattr__(self, "grid", piecewise.grid)
        object.__setattr__(self, "piecewise", piecewise)
        object.__setattr__(self, "duchi", DuchiMean(self.lo, self.hi, self.epsilon, piecewise.grid))
        beta = 1 - math.exp(-self.epsilon / 2) if self.epsilon > HYBRID_THRESHOLD else 0.0
        object.__setattr__(self, "branch_weight", round(beta * BRANCH_TOTAL))

    @property
    def piecewise_probability(self) -> float:
        """beta, as the integer fraction actually used: branch_weight / 2^32."""
        return self.branch_weight / BRANCH_TOTAL

    def params(self) -> dict[str, Any]:
        return {"grid": self.grid}

    def client_spec(self) -> dict[str, Any]:
        piecewise = {
            key: value for key, value in self.piecewise.client_spec().items() if key in ("window", "high", "low")
        }
        duchi = {
            key: value for key, value in self.duchi.client_spec().items() if key in ("denominator", "base", "slope")
        }
        return {
            **self.spec_header(),
            "branch_weight": self.branch_weight,
            "branch_total": BRANCH_TOTAL,
            **piecewise,
            **duchi,
        }

    @property
    def output_size(self) -> int:
        return self.piecewise.output_size + 2

    @cached_property
    def decode(self) -> np.ndarray:
        return np.concatenate([self.piecewise.decode, self.duchi.decode])

    def sample_grid(self, k: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        use_piecewise = rng.integers(0, BRANCH_TOTAL, size=k.size) < self.branch_weight
        return np.where(
            use_piecewise,
            self.piecewise.sample_grid(k, rng),
            self.duchi.sample_grid(k, rng) + self.piecewise.output_size,
        )

    def report_weights(self) -> list[list[int]]:
        # Common row total: piecewise rows scaled by b * D, Duchi rows by (2^32 - b) * T_piecewise.
        b, d, t = self.branch_weight, self.duchi.denominator, self.piecewise.row_total
        return [
            [w * b * d for w in p] + [w * (BRANCH_TOTAL - b) * t for w in q]
            for p, q in zip(self.piecewise.report_weights(), self.duchi.report_weights(), strict=True)
        ]

    def report_probabilities(self) -> np.ndarray:
        beta = self.piecewise_probability
        return np.hstack([beta * self.piecewise.report_probabilities(), (1 - beta) * self.duchi.report_probabilities()])

    def grid_second_moments(self) -> np.ndarray:
        beta = self.piecewise_probability
        return beta * self.piecewise.grid_second_moments() + (1 - beta) * self.duchi.grid_second_moments()

    def worst_case_log_ratio(self) -> float:
        ratios = [self.duchi.worst_case_log_ratio()]
        if self.branch_weight:
            ratios.append(self.piecewise.worst_case_log_ratio())
        return max(ratios)
