"""Seed 001's random-substitution experiments (An, Kang, Hong): Fig. 4, Fig. 5 and Fig. 6.

100,000 records whose attribute takes N values (N in {10, 20, 25, 50, 75, 90, 100}), drawn
from a normal or a uniform distribution; each record is replaced through the gamma-diagonal
matrix M (gamma from 2 to 21), and the distribution is reconstructed with seed 001's closed-form
inverse, negative counts clipped to 0 and floored. Over 10 repetitions the paper reports

    error1 = (1/n) sum_i |X_hat_i - X_i|   (X: counts per attribute value),
    error2 = |mu - mu_hat|,  error3 = |sigma - sigma_hat|   (mean and sd of the attribute values),

and the share of records whose value changed. The paper does not say how normal values become N
categories; here they are N equal-width bins over mean +/- 3 sd (values outside go to the end
bins), and the attribute value of bin i is i + 1.

Perturbation is drawn exactly and quickly: the X_t records of value t are replaced like one
multinomial draw with probabilities M[:, t]; the records keeping their value are its t-th entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ldp.experiments import write_rows
from ldp.mechanisms.krr import gamma_diagonal_matrix, random_substitution_reconstruct

RECORDS = 100_000
GAMMAS = tuple(range(2, 22))
SIZES = (10, 20, 25, 50, 75, 90, 100)
REPETITIONS = 10
DISTRIBUTIONS = ("normal", "uniform")


@dataclass(frozen=True)
class Row:
    distribution: str
    size: int
    gamma: int
    error1: float
    error2: float
    error3: float
    changed_ratio: float


def make_counts(distribution: str, size: int, rng: np.random.Generator, records: int = RECORDS) -> np.ndarray:
    """Counts of ``records`` attribute values over ``size`` categories."""
    if distribution == "uniform":
        values = rng.integers(0, size, size=records)
    elif distribution == "normal":
        z = rng.standard_normal(records)
        values = np.clip(np.floor((z + 3) / 6 * size), 0, size - 1).astype(int)
    else:
        raise ValueError(f"distribution must be normal or uniform, got {distribution!r}")
    return np.bincount(values, minlength=size)


def mean_and_sd(counts: np.ndarray) -> tuple[float, float]:
    values = np.arange(1, counts.size + 1)
    weights = counts / counts.sum()
    mean = float(values @ weights)
    return mean, float(np.sqrt(((values - mean) ** 2) @ weights))


def perturb_and_reconstruct(counts: np.ndarray, gamma: float, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """Reconstructed counts and the share of records whose value changed."""
    matrix = gamma_diagonal_matrix(gamma, counts.size)
    draws = np.array([rng.multinomial(n_t, matrix[:, t]) for t, n_t in enumerate(counts)])
    perturbed = draws.sum(axis=0)
    changed = 1.0 - np.trace(draws) / counts.sum()
    return random_substitution_reconstruct(perturbed, gamma), changed


def errors(counts: np.ndarray, reconstructed: np.ndarray) -> tuple[float, float, float]:
    mu, sigma = mean_and_sd(counts)
    mu_hat, sigma_hat = mean_and_sd(reconstructed)
    return float(np.abs(reconstructed - counts).sum() / counts.sum()), abs(mu - mu_hat), abs(sigma - sigma_hat)


def run_grid(
    repetitions: int = REPETITIONS,
    seed: int = 2008,
    sizes: tuple[int, ...] = SIZES,
    gammas: tuple[int, ...] = GAMMAS,
    records: int = RECORDS,
) -> list[Row]:
    rng = np.random.default_rng(seed)
    rows = []
    for distribution in DISTRIBUTIONS:
        for size in sizes:
            for gamma in gammas:
                measured = []
                for _ in range(repetitions):
                    counts = make_counts(distribution, size, rng, records)
                    reconstructed, changed = perturb_and_reconstruct(counts, gamma, rng)
                    measured.append((*errors(counts, reconstructed), changed))
                means = np.mean(measured, axis=0)
                rows.append(Row(distribution, size, gamma, *map(float, means)))
    return rows


def plot(rows: list[Row], out: Path) -> None:
    from matplotlib.figure import Figure

    def select(**where: Any) -> list[Row]:
        return [r for r in rows if all(getattr(r, k) == v for k, v in where.items())]

    for name, x_field, where, title in (
        ("fig4.png", "gamma", {"distribution": "normal", "size": 50}, "Seed 001 Fig. 4: normal, N = 50"),
        ("fig5.png", "size", {"distribution": "normal", "gamma": 11}, "Seed 001 Fig. 5: normal, γ = 11"),
    ):
        figure = Figure(figsize=(10, 3.2), layout="constrained")
        chosen = sorted(select(**where), key=lambda r: getattr(r, x_field))
        for index, error in enumerate(("error1", "error2", "error3")):
            axes = figure.add_subplot(1, 3, index + 1)
            axes.plot(
                [getattr(r, x_field) for r in chosen], [getattr(r, error) for r in chosen], marker="o", markersize=3
            )
            axes.set_xlabel("γ" if x_field == "gamma" else "N")
            axes.set_title(error)
            axes.grid(alpha=0.3)
        figure.suptitle(title)
        figure.savefig(out / name, dpi=110)

    figure = Figure(figsize=(6, 4), layout="constrained")
    axes = figure.add_subplot()
    for size in SIZES:
        chosen = sorted(select(distribution="uniform", size=size), key=lambda r: r.gamma)
        axes.plot([r.gamma for r in chosen], [100 * r.changed_ratio for r in chosen], label=f"N = {size}")
    axes.set_xlabel("γ")
    axes.set_ylabel("records whose value changed (%)")
    axes.legend(fontsize=8)
    axes.grid(alpha=0.3)
    figure.suptitle("Seed 001 Fig. 6: changed-value ratio (uniform data)")
    figure.savefig(out / "fig6.png", dpi=110)


def run(out: Path, repetitions: int = REPETITIONS) -> list[Row]:
    out.mkdir(parents=True, exist_ok=True)
    rows = run_grid(repetitions)
    write_rows(out / "substitution.csv", rows)
    plot(rows, out)
    return rows
