"""1BitMean (Ding, Kulkarni, Yekhanin 2017; seed 004) and Duchi et al.'s one-dimensional mechanism.

1BitMean (seed 004, Fig. 11): a value x in [lo, hi] is sent as one bit with

    P(1) = 1 / (e^epsilon + 1) + (x - lo) / (hi - lo) * (e^epsilon - 1) / (e^epsilon + 1),

and the server estimates the mean as lo + (hi - lo) * (mean bit * (e^epsilon + 1) - 1) / (e^epsilon - 1).
Duchi, Jordan, Wainwright's mechanism for t in [-1, 1] (JASA 2018; Wang et al. 2019, Alg. 1)
reports +-C, C = (e^epsilon + 1) / (e^epsilon - 1), with P(+C) = 1/2 + t (e^epsilon - 1) / (2 e^epsilon + 2):
with t = 2 (x - lo) / (hi - lo) - 1 it is the same bit, decoded the same way, so
:class:`DuchiMean` is :class:`OneBitMean` under the name of its other paper.

Murmur makes P(1) exact: x is first rounded to a grid point k in {0..G} by seed 004's alpha-point
rounding (formula 4; :mod:`ldp.numeric.base`), then P(1 | k) = (A + k m) / D with integers
D = G 2^p <= 2^52, m even and the largest with G m <= D tanh(epsilon / 2), and A = (D - G m) / 2.
So P(1 | 0) = A / D, P(1 | G) = (D - A) / D, linear in between, and the worst ratio is
(D - A) / A <= e^epsilon (equality up to 1 / D, exactly when D tanh(epsilon/2) / G is an even integer).
The unbiased decoder in grid units is decode[0] = -A / m, decode[1] = (D - A) / m.

Seed 004 adds memoization (a respondent keeps the bit computed for each grid point) and a second
randomized response on the memoized bit (formula 5); a one-off survey needs neither. Keeping the
alpha threshold (``randomize(..., alpha=...)``) is what makes memoization possible later.

References
----------
1. B. Ding, J. Kulkarni, S. Yekhanin. "Collecting telemetry data privately." NeurIPS 2017;
   seed 004 (Jeong, Hong, Seo 2020), section 3.3.1, Fig. 11-12, formulas (3)-(5).
2. J. Duchi, M. Jordan, M. Wainwright. "Minimax optimal procedures for locally private
   estimation." JASA 113(521), 2018.
3. N. Wang, X. Xiao, Y. Yang, et al. "Collecting and analyzing multidimensional data with local
   differential privacy." ICDE 2019, Algorithm 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from ldp.numeric.base import MAX_TOTAL, NumericMechanism, check_grid, ratio_within

__all__ = ["DuchiMean", "OneBitMean", "one_bit_weights"]


def one_bit_weights(epsilon: float, grid: int) -> tuple[int, int, int]:
    """Integers (D, A, m) with P(1 | k) = (A + k m) / D and (D - A) / A <= e^epsilon.

    >>> D, A, m = one_bit_weights(math.log(3), 4)
    >>> (D - A) / A, A + 4 * m == D - A
    (3.0, True)
    """
    denominator = grid * 2 ** int(math.floor(math.log2(MAX_TOTAL / grid)))
    slope = int(denominator * math.tanh(epsilon / 2) // grid) // 2 * 2
    while True:
        base = (denominator - grid * slope) // 2
        if slope < 2 or ratio_within(denominator - base, base, epsilon):
            break
        slope -= 2  # float rounding put us a hair above e^epsilon
    if slope < 2:
        raise ValueError(f"grid {grid} is too fine for epsilon {epsilon}")
    return denominator, base, slope


@dataclass(frozen=True, eq=False)
class OneBitMean(NumericMechanism):
    """Microsoft's 1BitMean: one bit per respondent, P(1) linear in the value.

    Examples
    --------
    >>> m = OneBitMean(lo=0, hi=10, epsilon=math.log(3), grid=10)
    >>> m.report_probabilities()[[0, -1]].tolist()  # 1 / (e^eps + 1) at lo, e^eps / (e^eps + 1) at hi
    [[0.75, 0.25], [0.25, 0.75]]
    >>> m.parse_report({"index": 1})
    b'\\x01'
    """

    name: ClassVar[str] = "1bitmean"
    lo: float
    hi: float
    epsilon: float
    grid: int = 100
    denominator: int = field(init=False, repr=False)
    base: int = field(init=False, repr=False)
    slope: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._check_common()
        object.__setattr__(self, "grid", check_grid(self.grid))
        denominator, base, slope = one_bit_weights(self.epsilon, self.grid)
        object.__setattr__(self, "denominator", denominator)
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "slope", slope)

    def params(self) -> dict[str, Any]:
        return {"grid": self.grid}

    def client_spec(self) -> dict[str, Any]:
        return {**self.spec_header(), "denominator": self.denominator, "base": self.base, "slope": self.slope}

    @property
    def output_size(self) -> int:
        return 2

    @cached_property
    def decode(self) -> np.ndarray:
        return np.array([-self.base, self.denominator - self.base], dtype=float) / self.slope

    def sample_grid(self, k: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return (rng.integers(0, self.denominator, size=k.size) < self.base + k * self.slope).astype(np.int64)

    def report_weights(self) -> list[list[int]]:
        rows = []
        for k in range(self.grid + 1):
            one = self.base + k * self.slope
            rows.append([self.denominator - one, one])
        return rows

    def grid_second_moments(self) -> np.ndarray:
        one = (self.base + np.arange(self.grid + 1) * self.slope) / self.denominator
        return (1 - one) * self.decode[0] ** 2 + one * self.decode[1] ** 2

    def worst_case_log_ratio(self) -> float:
        return math.log((self.denominator - self.base) / self.base)


@dataclass(frozen=True, eq=False)
class DuchiMean(OneBitMean):
    """Duchi et al.'s one-dimensional mechanism: the same bit as 1BitMean, reported as -C or +C.

    >>> DuchiMean(lo=-1, hi=1, epsilon=1.0).output_values().round(4).tolist()  # -C, +C
    [-2.164, 2.164]
    """

    name: ClassVar[str] = "duchi"

    def output_values(self) -> np.ndarray:
        """The reports as Duchi et al. write them: +-C times (hi - lo) / 2 about the midpoint."""
        return self.lo + self.step * self.decode
