"""Seed 004's privacy-preserving survey experiment: Fig. 15, Fig. 16 and Table 2.

Setting (seed 004, section 4.3): 5 options, uniformly distributed true answers, n in {500, 1000,
5000, 10000} respondents, epsilon in {0.1, 0.5, 1, 2, 5}; CMS with 512 hash functions and m = 128,
4BitFlip and 5BitFlip; the metric is the mean over R repetitions (3000 in the paper) of the
largest absolute error over the options, max_v |f_hat_v - f_v|. Fig. 15 varies CMS's number of
hash functions (2^3 to 2^10, m = 128).

Murmur adds k-RR, its exact CMS estimator (the paper's formula is kept as "CMS (paper)"), and
Norm-Sub post-processing, and checks the advisor (:mod:`ldp.advisor`) against the measured best.

For each n one data set of n uniform answers is drawn and shared by all mechanisms and
repetitions ("the same data", section 4.3); each repetition randomizes it anew. Tallies are drawn
with the mechanisms' exact samplers (``sample_tallies``), which have the distribution of
randomize-then-tally.
"""

from __future__ import annotations

import csv
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ldp.advisor import recommend
from ldp.experiments import estimates_from_tallies
from ldp.mechanisms import make_mechanism

K = 5
SIZES = (500, 1000, 5000, 10000)
EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)
PAPER_HASH_COUNTS = tuple(2**power for power in range(3, 11))
#: Where even the best mechanism's mean maximum error is this large, the cell is marked "x"
#: (the paper: "about 90 % or more error, hard to use in practice" at epsilon = 0.1).
UNUSABLE = 0.5


@dataclass(frozen=True)
class Setting:
    label: str
    mechanism: str
    params: dict[str, Any]
    estimator: str = "unbiased"
    in_paper: bool = False


CMS_PARAMS = {"hash_count": 512, "width": 128, "hash_seed": 0}
SETTINGS = (
    Setting("CMS (paper)", "cms", CMS_PARAMS, "sketch", in_paper=True),
    Setting("4BitFlip", "dbitflip", {"d": 4}, in_paper=True),
    Setting("5BitFlip", "dbitflip", {"d": 5}, in_paper=True),
    Setting("CMS (exact)", "cms", CMS_PARAMS),
    Setting("k-RR", "krr", {}),
    Setting("k-RR + Norm-Sub", "krr", {}, "norm-sub"),
)


@dataclass(frozen=True)
class Cell:
    n: int
    epsilon: float
    label: str
    mean_max_error: float
    standard_error: float


def uniform_data(n: int, rng: np.random.Generator) -> np.ndarray:
    """Counts of n answers drawn uniformly from the K options."""
    return rng.multinomial(n, np.full(K, 1.0 / K))


def max_errors(
    setting: Setting, epsilon: float, counts: np.ndarray, repetitions: int, rng: np.random.Generator
) -> np.ndarray:
    """max_v |f_hat_v - f_v| for each of ``repetitions`` randomizations of the data ``counts``."""
    mechanism = make_mechanism(setting.mechanism, k=K, epsilon=epsilon, **setting.params)
    n = int(counts.sum())
    tallies = mechanism.sample_tallies(counts, repetitions, rng=rng)
    estimates = estimates_from_tallies(mechanism, tallies, n, setting.estimator)
    return np.abs(estimates - counts / n).max(axis=1)


def summarize(n: int, epsilon: float, label: str, errors: np.ndarray) -> Cell:
    return Cell(n, epsilon, label, float(errors.mean()), float(errors.std(ddof=1) / np.sqrt(errors.size)))


def run_grid(repetitions: int, seed: int = 2020, settings: tuple[Setting, ...] = SETTINGS) -> list[Cell]:
    """Fig. 16's grid for every setting."""
    rng = np.random.default_rng(seed)
    cells = []
    for n in SIZES:
        counts = uniform_data(n, rng)
        for epsilon in EPSILONS:
            for setting in settings:
                cells.append(
                    summarize(n, epsilon, setting.label, max_errors(setting, epsilon, counts, repetitions, rng))
                )
    return cells


def run_hash_counts(repetitions: int, seed: int = 2015) -> list[Cell]:
    """Fig. 15: CMS (paper's estimator, m = 128) with 2^3 to 2^10 hash functions."""
    rng = np.random.default_rng(seed)
    cells = []
    for n in SIZES:
        counts = uniform_data(n, rng)
        for epsilon in EPSILONS:
            for hash_count in PAPER_HASH_COUNTS:
                setting = Setting(f"k = {hash_count}", "cms", {"hash_count": hash_count, "width": 128}, "sketch")
                cells.append(
                    summarize(n, epsilon, setting.label, max_errors(setting, epsilon, counts, repetitions, rng))
                )
    return cells


def lowest_error_table(cells: list[Cell], labels: tuple[str, ...]) -> dict[tuple[int, float], str]:
    """Table 2: the lowest-error label per (n, epsilon) among ``labels``; "x" if none is usable."""
    table = {}
    for n in SIZES:
        for epsilon in EPSILONS:
            candidates = [c for c in cells if c.n == n and c.epsilon == epsilon and c.label in labels]
            best = min(candidates, key=lambda c: c.mean_max_error)
            table[(n, epsilon)] = "x" if best.mean_max_error >= UNUSABLE else best.label
    return table


def advisor_check(cells: list[Cell], repetitions: int, seed: int = 7) -> list[dict[str, Any]]:
    """Per cell: the advisor's pick, its measured error, and the measured best mechanism.

    The advisor chooses a mechanism, so it is compared with the mechanisms as they estimate without
    post-processing (k-RR, CMS with the exact estimator, 4BitFlip, 5BitFlip).
    """
    rng = np.random.default_rng(seed)
    murmur = [s for s in SETTINGS if s.estimator == "unbiased"]
    rows = []
    for n in SIZES:
        counts = uniform_data(n, rng)
        for epsilon in EPSILONS:
            best_cell = min(
                (c for c in cells if c.n == n and c.epsilon == epsilon and c.label in {s.label for s in murmur}),
                key=lambda c: c.mean_max_error,
            )
            pick = recommend(K, epsilon, n).best
            setting = Setting(f"{pick.mechanism} {pick.params}", pick.mechanism, pick.params)
            measured = summarize(n, epsilon, setting.label, max_errors(setting, epsilon, counts, repetitions, rng))
            difference_se = float(np.hypot(measured.standard_error, best_cell.standard_error))
            rows.append(
                {
                    "n": n,
                    "epsilon": epsilon,
                    "advisor": _label(pick.mechanism, pick.params),
                    "advisor_error": measured.mean_max_error,
                    "best": best_cell.label,
                    "best_error": best_cell.mean_max_error,
                    "within_2_se": measured.mean_max_error - best_cell.mean_max_error <= 2 * difference_se,
                }
            )
    return rows


def _label(mechanism: str, params: dict[str, Any]) -> str:
    if mechanism == "krr":
        return "k-RR"
    if mechanism == "dbitflip":
        return f"{params['d']}BitFlip"
    return "CMS (exact)"


# -- output -----------------------------------------------------------------------------------


def write_cells(cells: list[Cell], path: Path) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(asdict(cells[0])))
        writer.writeheader()
        writer.writerows(asdict(c) for c in cells)


def write_table(table: dict[tuple[int, float], str], path: Path) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["participants", *(f"epsilon={e:g}" for e in EPSILONS)])
        for n in sorted(SIZES, reverse=True):
            writer.writerow([n, *(table[(n, e)] for e in EPSILONS)])


def plot_cells(cells: list[Cell], labels: list[str], path: Path, title: str) -> None:
    """One panel per n: mean maximum error against epsilon, one line per label (as Fig. 15/16)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(10, 7.5), layout="constrained")
    for index, n in enumerate(SIZES):
        axes = figure.add_subplot(2, 2, index + 1)
        for label in labels:
            row = sorted((c for c in cells if c.n == n and c.label == label), key=lambda c: c.epsilon)
            axes.errorbar(
                [c.epsilon for c in row],
                [100 * c.mean_max_error for c in row],
                yerr=[200 * c.standard_error for c in row],
                marker="o",
                markersize=3,
                capsize=2,
                label=label,
            )
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xticks(EPSILONS, labels=[f"{e:g}" for e in EPSILONS])
        axes.set_title(f"n = {n}")
        axes.set_xlabel("ε")
        axes.set_ylabel("mean max error (%)")
        axes.grid(alpha=0.3, which="both")
    figure.axes[0].legend(fontsize=8)
    figure.suptitle(title)
    figure.savefig(path, dpi=110)


def run(out: Path, repetitions: int) -> dict[str, Any]:
    """Run everything and write CSVs and figures into ``out``; return the tables."""
    out.mkdir(parents=True, exist_ok=True)
    grid = run_grid(repetitions)
    write_cells(grid, out / "survey_grid.csv")
    paper_labels = tuple(s.label for s in SETTINGS if s.in_paper)
    murmur_labels = tuple(s.label for s in SETTINGS if not (s.in_paper and s.estimator == "sketch"))
    table_paper = lowest_error_table(grid, paper_labels)
    table_murmur = lowest_error_table(grid, murmur_labels)
    write_table(table_paper, out / "table2_paper_mechanisms.csv")
    write_table(table_murmur, out / "table2_with_murmur.csv")
    plot_cells(grid, [s.label for s in SETTINGS], out / "fig16.png", f"Seed 004 Fig. 16 reproduced (R = {repetitions})")
    hash_cells = run_hash_counts(repetitions)
    write_cells(hash_cells, out / "fig15.csv")
    plot_cells(
        hash_cells,
        [f"k = {h}" for h in PAPER_HASH_COUNTS],
        out / "fig15.png",
        f"Seed 004 Fig. 15 reproduced (R = {repetitions})",
    )
    advice = advisor_check(grid, repetitions)
    with (out / "advisor.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(advice[0]))
        writer.writeheader()
        writer.writerows(advice)
    return {
        "grid": grid,
        "table_paper": table_paper,
        "table_murmur": table_murmur,
        "hash_counts": hash_cells,
        "advisor": advice,
    }
