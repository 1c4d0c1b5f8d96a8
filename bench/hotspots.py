"""The library's inner loops against the textbook form they replaced, in one process.

    python -m bench.hotspots [--repeat R]

Each row times Murmur's function and a reference written the plain way (the form the library used
before), on the same inputs, best of R runs, and prints the largest difference between their
results: the speed-up is only worth having where that difference is rounding.

- Feldman-Cousins acceptance (:func:`ldp.intervals._unified_acceptance`): safeguarded Newton
  against 48 bisection steps, 12 options x 1001 grid shares.
- Empirical-Bayes prior (:func:`ldp.consistency.share_prior`): the EM step as two matrix-vector
  products against the k x grid joint normalized and averaged, k = 20.
- Distinct design rows (:func:`ldp.regression._distinct_rows`) against ``np.unique(axis=0)``,
  10,000 rows.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from scipy import special

from ldp import make_mechanism
from ldp.consistency import PRIOR_GRID, share_prior
from ldp.intervals import Interval, _unified_acceptance, affine_variance_terms
from ldp.regression import _distinct_rows


def best_time(work: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def bisection_acceptance(d0: np.ndarray, d1: np.ndarray, level: float) -> Interval:
    """The acceptance interval by 48 bisection steps over c in [0, 64] (the earlier form)."""
    d0, d1 = np.maximum(d0, 1e-12), np.maximum(d1, 1e-12)

    def bounds(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r = np.sqrt(c)
        return np.where(d0 < r, -(c + d0**2) / (2 * d0), -r), np.where(d1 < r, (c + d1**2) / (2 * d1), r)

    below, above = np.zeros_like(d0), np.full_like(d0, 64.0)
    for _ in range(48):
        middle = (below + above) / 2
        lower, upper = bounds(middle)
        short = special.ndtr(upper) - special.ndtr(lower) < level
        below, above = np.where(short, middle, below), np.where(short, above, middle)
    return Interval(*bounds(above))


def elementwise_prior_weights(unit_variances: np.ndarray, unbiased: np.ndarray, n: int) -> np.ndarray:
    """share_prior's weights with the EM step written on the k x grid joint (the earlier form)."""
    a, b = affine_variance_terms(unit_variances, unbiased)
    sd = np.sqrt(np.maximum(a[:, None] + b[:, None] * PRIOR_GRID[None, :], 1e-300) / n)
    z = (unbiased[:, None] - PRIOR_GRID[None, :]) / sd
    likelihood = np.exp(-0.5 * (z**2 - np.min(z**2, axis=1, keepdims=True))) / sd
    weights = np.full(PRIOR_GRID.size, 1.0 / PRIOR_GRID.size)
    for _ in range(200):
        joint = likelihood * weights
        weights = (joint / joint.sum(axis=1, keepdims=True)).mean(axis=0)
    return weights


def rows() -> list[tuple[str, Callable[[], object], Callable[[], object], Callable[[object, object], float]]]:
    rng = np.random.default_rng(20261127)
    theta = np.repeat(np.linspace(0.0, 1.0, 1001)[None, :], 12, axis=0)
    sd = np.sqrt((0.5 + 0.3 * theta) / 500)
    d0, d1 = theta / sd, (1.0 - theta) / sd

    def acceptance_gap(ours: object, theirs: object) -> float:
        """Relative to the bound's size (a bound at a share of 0 or 1 is of order 1 / d, d = 1e-12)."""
        assert isinstance(ours, Interval) and isinstance(theirs, Interval)
        return float(max(np.max(np.abs(x - y) / np.maximum(1.0, np.abs(y))) for x, y in zip(ours, theirs, strict=True)))

    mechanism = make_mechanism("krr", k=20, epsilon=1.0)
    unbiased = rng.dirichlet(np.ones(20))
    groups = rng.integers(0, 3, 10_000)
    design = np.column_stack([np.ones(10_000), groups == 1, groups == 2, rng.integers(0, 3, 10_000)]).astype(float)

    def rows_gap(ours: object, theirs: object) -> float:
        same = all(np.array_equal(x, y) for x, y in zip(ours, theirs, strict=True))  # type: ignore[call-overload]
        return 0.0 if same else float("inf")

    return [
        (
            "Feldman-Cousins acceptance, 12 x 1001",
            lambda: _unified_acceptance(d0, d1, 0.95),
            lambda: bisection_acceptance(d0, d1, 0.95),
            acceptance_gap,
        ),
        (
            "empirical-Bayes prior (EM), k = 20",
            lambda: share_prior(mechanism.unit_variances, unbiased, 1000).weights,
            lambda: elementwise_prior_weights(mechanism.unit_variances, unbiased, 1000),
            lambda ours, theirs: float(np.max(np.abs(np.asarray(ours) - np.asarray(theirs)))),
        ),
        (
            "distinct design rows, 10,000",
            lambda: _distinct_rows(design),
            lambda: np.unique(design, axis=0, return_counts=True),
            rows_gap,
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print("| inner loop | Murmur | reference | speed-up | largest (relative) difference |")
    print("|---|---:|---:|---:|---:|")
    for name, ours, theirs, gap in rows():
        fast, slow = best_time(ours, args.repeat), best_time(theirs, args.repeat)
        print(
            f"| {name} | {fast * 1e3:.2f} ms | {slow * 1e3:.2f} ms | {slow / fast:.1f}x | {gap(ours(), theirs()):.1e} |"
        )


if __name__ == "__main__":
    main()
