"""The Laplace mechanism on [lo, hi], sampled on a grid: the range-restricted geometric mechanism.

Seeds 002 (formula 3.3) and 003 add Laplace noise of scale b = Delta f / epsilon, where
Delta f = hi - lo for one value in [lo, hi]. Floating-point Laplace samples leak through their
low-order bits (Mironov 2012), so Murmur samples the discrete analogue on the grid of step
Delta = (hi - lo) / G, where the sensitivity is G steps:

    k = x rounded to the grid (unbiased randomized rounding, :mod:`ldp.numeric.base`),
    Z ~ two-sided geometric, P(Z = z) proportional to q^|z| with q = e^(-epsilon / G),
    y = clamp(k + Z, 0, G)   (the report is the grid index y).

This is the geometric mechanism of Ghosh, Roughgarden, Sundararajan (2009), restricted to the
range; as G grows it becomes Laplace noise of scale (hi - lo) / epsilon, clamped. Clamping is
post-processing of k + Z, so it keeps the guarantee, and it reduces the variance: decoding the
ends by their conditional means (the geometric tail is memoryless, so they do not depend on k)

    decode[0] = -q / (1 - q),   decode[G] = G + q / (1 - q),   decode[y] = y otherwise,

is unbiased, E[decode[Y] | k] = k, and by Jensen's inequality varies less than unclamped k + Z.
(Exactly so for the real geometric law; for the integer weights actually sampled the bias is the
weights' rounding, below 1e-9 of the decoder's range, which the tests check by enumeration.)

Privacy (exact, for the integer weights actually used): rows are shifts of the same noise, so
for 0 < y < G the worst ratio is w(0) / w(G - 1) = q^-(G - 1), and at the ends it is
S(0) / S(G) = q^-G = e^epsilon, with S(k) = sum_{j >= k} w(j) the clamped tail. The weights are
integers out of 2^52; q is lowered by about G * 1e-15 in epsilon when needed so that the
integers' worst ratio stays <= e^epsilon (:meth:`LaplaceMean.worst_case_log_ratio` computes it).

References
----------
1. Seed 002 (Park, Oh), formula (3.3); seed 003 (b = Delta f / epsilon).
2. A. Ghosh, T. Roughgarden, M. Sundararajan. "Universally utility-maximizing privacy
   mechanisms." STOC 2009.
3. I. Mironov. "On significance of the least significant bits for differential privacy." CCS 2012.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from ldp.numeric.base import (
    NumericMechanism,
    check_grid,
    ratio_within,
    sample_symmetric,
    symmetric_total,
    symmetric_weights,
)

__all__ = ["LaplaceMean", "laplace_noise_weights"]


def laplace_noise_weights(epsilon: float, grid: int) -> tuple[np.ndarray, float]:
    """Integer weights w(0..G) of |Z| for the clamped geometric mechanism, and the q they use.

    w(j) is proportional to q^j for j < G and to q^G / (1 - q) for j = G (the whole tail beyond
    G, which clamping maps to the same reports). Starting from q = e^(-epsilon / G), q is lowered
    until the integers' worst ratio is at most e^epsilon (:func:`~ldp.numeric.base.ratio_within`).

    >>> weights, q = laplace_noise_weights(math.log(3), 1)
    >>> round(float(weights[0] / weights[1]), 9), round(q, 9)
    (2.0, 0.333333333)
    """
    target = epsilon
    for _ in range(20):
        q = math.exp(-target / grid)
        p = q ** np.arange(grid + 1, dtype=float)
        p[grid] /= 1 - q
        weights = symmetric_weights(p)
        if weights.size != grid + 1:
            raise ValueError(f"epsilon {epsilon} is too large for grid {grid}")
        if clamped_geometric_within(weights, epsilon):
            return weights, q
        # q carries a relative float error of ~1e-16, which q^-G multiplies by G: step past it.
        target -= max(clamped_geometric_log_ratio(weights) - epsilon, 0.0) + 1e-15 * grid
    raise RuntimeError("could not quantize the geometric weights")  # pragma: no cover


def clamped_geometric_within(weights: np.ndarray, epsilon: float) -> bool:
    """Whether both worst cases of :func:`clamped_geometric_log_ratio` are <= e^epsilon, exactly."""
    w = [int(v) for v in weights]
    inside = len(w) < 3 or ratio_within(w[0], w[-2], epsilon)
    return inside and ratio_within(sum(w), w[-1], epsilon)


def clamped_geometric_log_ratio(weights: np.ndarray) -> float:
    """Worst ln P(y | k) / P(y | k') of the clamped mechanism with |Z|-weights w(0..G)."""
    w = [int(v) for v in weights]
    grid = len(w) - 1
    if any(a < b for a, b in zip(w[:-2], w[1:-1], strict=True)):
        raise ValueError("geometric weights must decrease")
    ends = math.log(sum(w) / w[grid])
    inside = math.log(w[0] / w[grid - 1]) if grid >= 2 else 0.0
    return max(ends, inside)


@dataclass(frozen=True, eq=False)
class LaplaceMean(NumericMechanism):
    """Discrete Laplace (range-restricted geometric) mechanism for a value in [lo, hi].

    Examples
    --------
    >>> m = LaplaceMean(lo=0, hi=10, epsilon=1.0, grid=10)
    >>> m.output_size, round(m.noise_parameter, 6)  # q = e^(-epsilon / G)
    (11, 0.904837)
    >>> m.parse_report({"index": 7})
    b'\\x07'
    """

    name: ClassVar[str] = "laplace"
    lo: float
    hi: float
    epsilon: float
    grid: int = 100

    def __post_init__(self) -> None:
        self._check_common()
        object.__setattr__(self, "grid", check_grid(self.grid))
        weights, q = laplace_noise_weights(self.epsilon, self.grid)
        object.__setattr__(self, "noise_weights", weights)
        object.__setattr__(self, "noise_parameter", q)

    noise_weights: np.ndarray = field(init=False, repr=False)
    noise_parameter: float = field(init=False, repr=False)

    def params(self) -> dict[str, Any]:
        return {"grid": self.grid}

    def client_spec(self) -> dict[str, Any]:
        return {**self.spec_header(), "noise_weights": [int(w) for w in self.noise_weights]}

    @property
    def output_size(self) -> int:
        return self.grid + 1

    @cached_property
    def decode(self) -> np.ndarray:
        q = self.noise_parameter
        values = np.arange(self.grid + 1, dtype=float)
        values[0] -= q / (1 - q)
        values[-1] += q / (1 - q)
        return values

    def sample_grid(self, k: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.clip(k + sample_symmetric(self.noise_weights, k.size, rng), 0, self.grid)

    @cached_property
    def _integer_table(self) -> np.ndarray:
        w = self.noise_weights
        g = self.grid
        k = np.arange(g + 1)
        table = w[np.abs(k[None, :] - k[:, None])]
        tails = np.cumsum(w[::-1])[::-1]  # S(j) = sum_{i >= j} w(i)
        table[:, 0] = tails[k]
        table[:, g] = tails[g - k]
        return table

    def report_weights(self) -> list[list[int]]:
        return [[int(v) for v in row] for row in self._integer_table]

    def grid_second_moments(self) -> np.ndarray:
        # Interior reports: sum_{0<y<G} w(|y - k|) y^2, a convolution; the ends: S(k) and S(G - k).
        w = self.noise_weights.astype(float)
        g = self.grid
        squares = np.arange(g + 1, dtype=float) ** 2
        squares[[0, g]] = 0
        two_sided = np.concatenate([w[:0:-1], w])  # w(|z|) for z = -G..G
        inside = np.convolve(squares, two_sided)[g : 2 * g + 1]
        tails = np.cumsum(w[::-1])[::-1]
        k = np.arange(g + 1)
        ends = tails[k] * self.decode[0] ** 2 + tails[g - k] * self.decode[g] ** 2
        return (inside + ends) / symmetric_total(self.noise_weights)

    def worst_case_log_ratio(self) -> float:
        return clamped_geometric_log_ratio(self.noise_weights)
