"""Gaussian noise under mu-GDP on [lo, hi], sampled on a grid: the discrete Gaussian.

Seed 002 (section 4) adds N(0, sigma^2) noise with sigma = Delta f / mu for mu-GDP, which is
(epsilon, delta)-DP with

    delta = Phi(-epsilon / mu + mu / 2) - e^epsilon Phi(-epsilon / mu - mu / 2);

for a target (epsilon, delta) Murmur solves that equation for mu (:func:`ldp.privacy.gdp_mu`).
On the grid of step Delta = (hi - lo) / G the sensitivity is G steps, so the noise is the
discrete Gaussian of Canonne, Kamath, Steinke (2020), P(Z = z) proportional to
exp(-z^2 / (2 s^2)) with s = G / mu steps, quantized to integer weights out of 2^52 (so its
support is finite, |z| <= M where the weights reach 0). The report is k + Z + M, an index in
[0, G + 2M]; decode[y] = y - M is unbiased because the weights are exactly symmetric.

This is an (epsilon, delta) guarantee, not pure epsilon: the likelihood ratio is unbounded (the
rows' supports differ at the tails). :meth:`GaussianMean.delta_at` computes the exact delta of
the integer table, max over shifts 1..G of sum_y max(0, P(y | 0) - e^epsilon P(y | shift)), and
the construction raises s by 0.1 % steps until it is at most the target (the discrete Gaussian
is not quite as private as the continuous one; usually no step is needed). The grid defaults to
G = ceil(16 mu) (at least 1), so s >= 16 steps and rounding adds at most mu^2 / (4 G^2) <= 0.1 %
to the noise variance while the noise table stays small.

References
----------
1. Seed 002 (Park, Oh), section 4: sigma = Delta f / mu and the (epsilon, delta) conversion;
   J. Dong, A. Roth, W. Su. "Gaussian differential privacy." JRSS B 84(1), 2022.
2. C. Canonne, G. Kamath, T. Steinke. "The discrete Gaussian for differential privacy."
   NeurIPS 2020.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from ldp.numeric.base import NumericMechanism, check_grid, sample_symmetric, symmetric_total, symmetric_weights
from ldp.privacy import gdp_mu

__all__ = ["GaussianMean", "discrete_gaussian_delta"]

#: Largest noise reach M (in grid steps) of a spec: the browser receives M + 1 weights.
MAX_REACH = 20_000
DELTA_MIN = 1e-12
DELTA_MAX = 0.1


def discrete_gaussian_delta(weights: np.ndarray, shift: int, epsilon: float) -> float:
    """Hockey-stick divergence sum_y max(0, P(y) - e^epsilon P(y - shift)) of symmetric weights.

    >>> discrete_gaussian_delta(np.array([2, 1]), 1, 0.0)  # total variation of (1/4, 1/2, 1/4) and its shift
    0.5
    """
    full = np.concatenate([weights[:0:-1], weights]).astype(float) / symmetric_total(weights)
    size = full.size + shift
    p = np.zeros(size)
    p[: full.size] = full
    r = np.zeros(size)
    r[shift:] = full
    return float(np.maximum(p - math.exp(epsilon) * r, 0).sum())


@dataclass(frozen=True, eq=False)
class GaussianMean(NumericMechanism):
    """Discrete Gaussian mechanism calibrated to mu-GDP with the exact mu for (epsilon, delta).

    Examples
    --------
    >>> m = GaussianMean(lo=0, hi=1, epsilon=1.0, delta=1e-5)
    >>> round(m.mu, 4), m.grid
    (0.2681, 5)
    >>> m.delta_at(1.0) <= 1e-5
    True
    """

    name: ClassVar[str] = "gaussian"
    lo: float
    hi: float
    epsilon: float
    delta: float = 1e-5
    grid: int = None  # type: ignore[assignment]  # None: chosen from mu by __post_init__, an int after
    mu: float = field(init=False)
    noise_scale: float = field(init=False, repr=False)
    noise_weights: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._check_common()
        if isinstance(self.delta, bool) or not isinstance(self.delta, (int, float)):
            raise ValueError(f"delta must be a number, got {self.delta!r}")
        if not DELTA_MIN <= float(self.delta) <= DELTA_MAX:
            raise ValueError(f"delta must lie in [{DELTA_MIN}, {DELTA_MAX}], got {self.delta!r}")
        object.__setattr__(self, "delta", float(self.delta))
        mu = gdp_mu(self.epsilon, self.delta)
        grid = max(1, math.ceil(16 * mu)) if self.grid is None else self.grid
        object.__setattr__(self, "grid", check_grid(grid))
        object.__setattr__(self, "mu", mu)
        scale = self.grid / mu
        for _ in range(100):
            weights = self._weights(scale)
            if self._table_delta(weights) <= self.delta:
                break
            scale *= 1.001
        else:  # pragma: no cover
            raise RuntimeError("could not calibrate the discrete Gaussian")
        if weights.size > MAX_REACH:
            raise ValueError(
                f"grid {self.grid} needs noise over {weights.size} steps at mu = {mu:.4g}; choose a coarser grid"
            )
        object.__setattr__(self, "noise_scale", scale)
        object.__setattr__(self, "noise_weights", weights)

    @staticmethod
    def _weights(scale: float) -> np.ndarray:
        reach = math.ceil(scale * 9) + 1  # exp(-81 / 2) is below 2^-52: the weights end earlier
        j = np.arange(reach + 1, dtype=float)
        return symmetric_weights(np.exp(-(j**2) / (2 * scale**2)))

    def _table_delta(self, weights: np.ndarray, epsilon: float | None = None) -> float:
        e = self.epsilon if epsilon is None else epsilon
        return max(discrete_gaussian_delta(weights, shift, e) for shift in range(1, self.grid + 1))

    def privacy_guarantee(self) -> tuple[float, float]:
        """(epsilon, delta): not pure epsilon; say so wherever the budget is shown."""
        return self.epsilon, self.delta

    def delta_at(self, epsilon: float) -> float:
        """Exact delta(epsilon) of the integer table actually sampled (worst pair of grid points)."""
        return self._table_delta(self.noise_weights, epsilon)

    @property
    def reach(self) -> int:
        """M: the noise takes values in [-M, M]."""
        return int(self.noise_weights.size - 1)

    def params(self) -> dict[str, Any]:
        return {"delta": self.delta, "grid": self.grid}

    def client_spec(self) -> dict[str, Any]:
        return {
            **self.spec_header(),
            "delta": self.delta,
            "mu": self.mu,
            "noise_weights": [int(w) for w in self.noise_weights],
        }

    @property
    def output_size(self) -> int:
        return self.grid + 2 * self.reach + 1

    @cached_property
    def decode(self) -> np.ndarray:
        return np.arange(self.output_size, dtype=float) - self.reach

    def sample_grid(self, k: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return k + sample_symmetric(self.noise_weights, k.size, rng) + self.reach

    def report_weights(self) -> list[list[int]]:
        w = [int(v) for v in self.noise_weights]
        noise = w[:0:-1] + w
        size = self.output_size
        return [[0] * k + noise + [0] * (size - k - len(noise)) for k in range(self.grid + 1)]

    @cached_property
    def noise_variance(self) -> float:
        """Var(Z) of the integer table, in grid steps squared."""
        w = self.noise_weights.astype(float)
        j = np.arange(w.size, dtype=float)
        return 2 * float((j**2 * w).sum()) / symmetric_total(self.noise_weights)

    def grid_second_moments(self) -> np.ndarray:
        return np.arange(self.grid + 1, dtype=float) ** 2 + self.noise_variance

    def worst_case_log_ratio(self) -> float:
        """Unbounded: Gaussian noise gives (epsilon, delta), not pure epsilon (see :meth:`delta_at`)."""
        return math.inf
