"""Mean estimation on a numeric question: error against epsilon for every numeric mechanism.

Values lie in [-1, 1], the scale of Wang et al. (ICDE 2019). For each mechanism and epsilon, n
respondents all hold the same value t (t = 0, Duchi's worst case, and t = 1, Piecewise's), and
R seeded repetitions draw the tally with an exact multinomial sampler (everyone at one grid
point reports like one multinomial draw from that grid point's row). Reported per cell: the
measured root-mean-square error of the mean estimate, the analytic standard error
sqrt(Var(report | t) / n) from the mechanism's exact grid variances, and the published
continuous variance for Duchi et al. and Piecewise. The crossover is where Piecewise's
worst-case variance (at |t| = 1) falls below Duchi's (at t = 0): Wang et al. report epsilon ~ 1.29.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import optimize

from ldp.experiments import write_rows
from ldp.numeric import make_numeric_mechanism
from ldp.numeric.piecewise import duchi_variance, piecewise_variance

EPSILONS = (0.25, 0.5, 1.0, 1.29, 2.0, 3.0, 4.0, 5.0)
MECHANISMS: dict[str, tuple[str, dict[str, Any]]] = {
    "Duchi et al.": ("duchi", {}),
    "1BitMean": ("1bitmean", {}),
    "Piecewise": ("piecewise", {}),
    "Hybrid": ("hybrid", {}),
    "Laplace (G = 100)": ("laplace", {"grid": 100}),
    "Gaussian (delta = 1e-5)": ("gaussian", {"delta": 1e-5}),
}
POSITIONS = (0.0, 1.0)
N = 10_000


@dataclass(frozen=True)
class Row:
    mechanism: str
    epsilon: float
    t: float
    rmse: float
    rmse_se: float
    analytic_se: float
    published_se: float | None


def published_crossover() -> float:
    """epsilon where Piecewise's worst-case variance equals Duchi's: Var_PM(1) = Var_Duchi(0).

    >>> round(published_crossover(), 2)
    1.29
    """
    return float(optimize.brentq(lambda e: piecewise_variance(1.0, e) - duchi_variance(0.0, e), 0.1, 5.0))


def grid_crossover() -> float:
    """The same crossover for Murmur's grid versions: worst-case variances over all grid points."""

    def gap(epsilon: float) -> float:
        worst = [
            make_numeric_mechanism(name, lo=-1, hi=1, epsilon=epsilon).worst_case_variance()
            for name in ("piecewise", "duchi")
        ]
        return worst[0] - worst[1]

    return float(optimize.brentq(gap, 0.5, 3.0, xtol=1e-4))


def measure(label: str, epsilon: float, t: float, n: int, repetitions: int, rng: np.random.Generator) -> Row:
    name, params = MECHANISMS[label]
    # Grids with an even number of steps put t = 0 on a grid point.
    mechanism = make_numeric_mechanism(name, lo=-1, hi=1, epsilon=epsilon, **params)
    if mechanism.grid % 2:
        mechanism = make_numeric_mechanism(name, lo=-1, hi=1, epsilon=epsilon, **{**params, "grid": mechanism.grid + 1})
    k = round((t + 1) / 2 * mechanism.grid)
    row = mechanism.report_probabilities()[k]
    counts = rng.multinomial(n, row / row.sum(), size=repetitions)
    means, _ = mechanism.estimate_many(counts)
    squared = (means - t) ** 2
    rmse = math.sqrt(squared.mean())
    analytic = math.sqrt(mechanism.grid_variances()[k] / n) * mechanism.step
    published = {"duchi": duchi_variance, "1bitmean": duchi_variance, "piecewise": piecewise_variance}.get(name)
    return Row(
        mechanism=label,
        epsilon=epsilon,
        t=t,
        rmse=rmse,
        rmse_se=float(squared.std() / math.sqrt(repetitions) / (2 * rmse)),
        analytic_se=analytic,
        published_se=None if published is None else math.sqrt(float(published(t, epsilon)) / n),
    )


def run(out: Path, repetitions: int = 2000, n: int = N, seed: int = 14) -> list[Row]:
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    rows = [measure(m, e, t, n, repetitions, rng) for m in MECHANISMS for e in EPSILONS for t in POSITIONS]
    write_rows(out / "numeric.csv", rows)
    return rows


def markdown(rows: list[Row]) -> str:
    """Two tables (t = 0 and t = 1): measured RMSE x 100 (analytic SE x 100) per mechanism and epsilon."""
    lines = [
        f"Published crossover (Piecewise's worst case below Duchi's): epsilon = {published_crossover():.3f}; "
        f"Murmur's grid versions: epsilon = {grid_crossover():.3f}",
        "",
    ]
    for t in POSITIONS:
        lines += [f"t = {t:g}", "", "| mechanism | " + " | ".join(f"ε = {e:g}" for e in EPSILONS) + " |"]
        lines.append("|---|" + "---:|" * len(EPSILONS))
        for label in MECHANISMS:
            cells = [r for r in rows if r.mechanism == label and r.t == t]
            lines.append(
                f"| {label} | " + " | ".join(f"{100 * r.rmse:.2f} ({100 * r.analytic_se:.2f})" for r in cells) + " |"
            )
        lines.append("")
    return "\n".join(lines)
