"""Which consistency adjustment errs less, and how close the "auto" rule gets (issue 7).

For k-RR and subset selection, k in {5, 20}, n in {500, 1000, 5000}, epsilon in {0.1, 0.5, 1, 2}
(or issue 18's grid, :data:`LARGE_K_GRID`: subset selection, k from 2 to 256) and nine answer
distributions, R seeded tallies from the mechanisms' exact samplers are estimated
with clip-and-renormalize, Norm-Sub, and three rules that choose between them per tally
(:func:`ldp.estimates.choose_consistency`) and differ only in the reference distribution the
bootstrap is run at:

* ``auto``: Murmur's rule: evenly spread answers if they lie inside the simultaneous 95 % score
  bands, else the fitted share distribution rank-matched to the estimate
  (:meth:`ldp.estimates.SharePrior.rank_matched`);
* ``auto before issue 18``: evenly spread answers if inside the bands, else the midpoint of the
  Norm-Sub and clipped estimates;
* ``auto, most even``: always the most even distribution inside the simultaneous bands;
* ``auto, midpoint``: always the midpoint.

Metric: mean over repetitions of the largest absolute error over the options, and each rule's
ratio to the better of the two adjustments in that cell (1 = as good as knowing which is better).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ldp.estimates import (
    CONSISTENCY_ADJUSTMENTS,
    Interval,
    choose_consistency,
    clip_and_renormalize,
    project_onto_simplex,
    share_prior,
    simultaneous_bands,
)
from ldp.estimators import estimate_proportions
from ldp.experiments import write_rows
from ldp.mechanisms import make_mechanism

MECHANISMS = ("subset", "krr")
OPTIONS = (5, 20)
SIZES = (500, 1000, 5000)
EPSILONS = (0.1, 0.5, 1.0, 2.0)


def _normalized(weights: np.ndarray) -> np.ndarray:
    return weights / weights.sum()


def _bimodal(k: int) -> np.ndarray:
    """Two bumps, at a quarter and three quarters of the options."""
    options, width = np.arange(k), k / 16 + 0.5
    bumps = np.exp(-0.5 * ((options - k / 4) / width) ** 2) + np.exp(-0.5 * ((options - 3 * k / 4) / width) ** 2)
    return _normalized(bumps)


def _sparse(k: int) -> np.ndarray:
    """A tenth of the options (at least one) answered, the first three times as often; the rest never."""
    weights = np.zeros(k)
    weights[: max(1, k // 10)] = 1.0
    weights[0] = 3.0
    return _normalized(weights)


DISTRIBUTIONS: dict[str, Callable[[int], np.ndarray]] = {
    "uniform": lambda k: np.full(k, 1 / k),
    "near-uniform": lambda k: _normalized(1 + 0.2 * np.linspace(-1, 1, k)),
    "Zipf(1.1)": lambda k: _normalized(1 / np.arange(1, k + 1) ** 1.1),
    "geometric(0.7)": lambda k: _normalized(0.7 ** np.arange(k)),
    "two options 60/40": lambda k: 0.98 * np.r_[0.6, 0.4, np.zeros(k - 2)] + 0.02 / k,
    "concentrated 90 %": lambda k: np.r_[0.9, np.full(k - 1, 0.1 / (k - 1))],
    "bimodal": _bimodal,
    "sparse": _sparse,
    "point mass": lambda k: np.eye(k)[0],
}
#: Issue 18's validation grid (``python -m ldp.experiments adjustment --large-k``): k from 2 to 256.
LARGE_K_GRID = {
    "mechanisms": ("subset",),
    "options": (2, 5, 20, 64, 256),
    "sizes": (500, 5000),
    "epsilons": (0.5, 2.0),
}

#: Each rule's reference answers f0, from the tally's unbiased estimate and simultaneous bands
#: (None: choose_consistency's own rule), and whether the rule is given the fitted share prior.
Reference = Callable[[np.ndarray, Interval], np.ndarray | None]
RULES: dict[str, tuple[Reference, bool]] = {
    "auto": (lambda u, region: None, True),
    "auto before issue 18": (lambda u, region: None, False),
    "auto, most even": (lambda u, region: most_even_within(region), False),
    "auto, midpoint": (lambda u, region: (project_onto_simplex(u) + clip_and_renormalize(u)) / 2, False),
}


def most_even_within(bands: Interval) -> np.ndarray | None:
    """The distribution closest to uniform (Euclidean) with every share inside its band, or None.

    Minimizing sum (f_v - 1/k)^2 subject to low <= f <= high and sum f = 1 gives
    f_v = min(max(1/k + mu, low_v), high_v) for the one mu that makes the shares sum to 1
    (the sum is continuous and non-decreasing in mu); found by bisection.

    >>> most_even_within(Interval(np.array([0.5, 0.0, 0.0]), np.array([0.9, 0.4, 0.1]))).round(6).tolist()
    [0.5, 0.4, 0.1]
    >>> most_even_within(Interval(np.array([0.6, 0.6]), np.array([0.9, 0.9]))) is None
    True
    """
    low, high = np.asarray(bands.low, dtype=float), np.asarray(bands.high, dtype=float)
    if low.sum() > 1 + 1e-12 or high.sum() < 1 - 1e-12:
        return None
    k = low.size
    below, above = -1.0, 1.0  # 1/k + mu then lies below every low and above every high
    for _ in range(100):
        mu = (below + above) / 2
        if np.clip(1 / k + mu, low, high).sum() < 1:
            below = mu
        else:
            above = mu
    return np.clip(1 / k + (below + above) / 2, low, high)


@dataclass(frozen=True)
class Row:
    mechanism: str
    k: int
    n: int
    epsilon: float
    answers: str
    clip: float
    norm_sub: float
    auto: float
    auto_before: float
    auto_most_even: float
    auto_midpoint: float


def measure(name: str, k: int, n: int, epsilon: float, answers: str, repetitions: int, rng: np.random.Generator) -> Row:
    mechanism = make_mechanism(name, k=k, epsilon=epsilon)
    counts = rng.multinomial(n, DISTRIBUTIONS[answers](k))
    truth = counts / n
    tallies = mechanism.sample_tallies(counts, repetitions, rng=rng)
    unbiased = estimate_proportions(mechanism, tallies, n, "unbiased")
    errors = {
        method: np.abs(adjust(unbiased) - truth).max(axis=1) for method, adjust in CONSISTENCY_ADJUSTMENTS.items()
    }
    regions = [
        simultaneous_bands(mechanism.unit_variances, u, n, correction="bonferroni", interval="score") for u in unbiased
    ]
    priors = [share_prior(mechanism.unit_variances, u, n) for u in unbiased]
    chosen = {}
    for rule, (reference, with_prior) in RULES.items():
        picks = [
            choose_consistency(
                u,
                lambda f: mechanism.covariance(f, n),
                region,
                prior=prior if with_prior else None,
                reference=reference(u, region),
            )
            for u, region, prior in zip(unbiased, regions, priors, strict=True)
        ]
        chosen[rule] = np.mean([errors[p][i] for i, p in enumerate(picks)])
    return Row(
        name,
        k,
        n,
        epsilon,
        answers,
        float(errors["clip"].mean()),
        float(errors["norm-sub"].mean()),
        float(chosen["auto"]),
        float(chosen["auto before issue 18"]),
        float(chosen["auto, most even"]),
        float(chosen["auto, midpoint"]),
    )


def summary(rows: list[Row]) -> list[tuple[str, int, dict[str, tuple[float, float]]]]:
    """Per answer distribution (and overall): each rule's mean and worst ratio to the better adjustment."""
    groups = {answers: [r for r in rows if r.answers == answers] for answers in DISTRIBUTIONS}
    groups["all"] = rows
    result = []
    for answers, group in groups.items():
        if not group:
            continue
        ratios = {
            rule: [getattr(r, field) / min(r.clip, r.norm_sub) for r in group]
            for rule, field in (
                ("clip", "clip"),
                ("Norm-Sub", "norm_sub"),
                ("auto", "auto"),
                ("auto before issue 18", "auto_before"),
                ("auto, most even", "auto_most_even"),
                ("auto, midpoint", "auto_midpoint"),
            )
        }
        result.append((answers, len(group), {rule: (statistics.mean(v), max(v)) for rule, v in ratios.items()}))
    return result


def markdown(rows: list[Row]) -> str:
    """The summary as a Markdown table (docs/experiments.md)."""
    table = summary(rows)
    rules = list(table[0][2])
    lines = [
        "| answers | cells | " + " | ".join(f"{rule}: mean / worst" for rule in rules) + " |",
        "|---|---:|" + "---:|" * len(rules),
    ]
    for answers, cells, ratios in table:
        lines.append(f"| {answers} | {cells} | " + " | ".join(f"{m:.3f} / {w:.2f}" for m, w in ratios.values()) + " |")
    return "\n".join(lines)


def run(out: Path, repetitions: int = 200, seed: int = 7, grid: dict[str, tuple] | None = None) -> list[Row]:
    grid = grid or {}
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    rows = [
        measure(name, k, n, epsilon, answers, repetitions, rng)
        for name in grid.get("mechanisms", MECHANISMS)
        for k in grid.get("options", OPTIONS)
        for n in grid.get("sizes", SIZES)
        for epsilon in grid.get("epsilons", EPSILONS)
        for answers in grid.get("answers", DISTRIBUTIONS)
    ]
    write_rows(out / "adjustment.csv", rows)
    return rows
