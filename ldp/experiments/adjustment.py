"""Which consistent estimate errs less, and how close the "auto" rule gets.

For k-RR and subset selection, k in {5, 20}, n in {500, 1000, 5000}, epsilon in {0.1, 0.5, 1, 2}
(or the large-k grid, :data:`LARGE_K_GRID`: subset selection, k from 2 to 256) and nine answer
distributions, R seeded tallies from the mechanisms' exact samplers are estimated with
clip-and-renormalize, Norm-Sub, empirical Bayes (``"eb"``) and these rules:

* ``auto``: Murmur's default (:meth:`ldp.mechanisms.Mechanism.automatic_consistency`): ``"eb"``
  when 5 <= k <= 64 and the chi-square test does not reject evenly spread answers at 5 %, else
  the next rule;
* ``auto's Norm-Sub or clip``: :func:`ldp.consistency.choose_consistency`, minimax regret over the
  reference answers 1/k (if inside the simultaneous 95 % score bands), the fitted share
  distribution rank-matched to the estimate, and the midpoint of the two adjustments;
* ``rank-matched (before)``: 1/k if inside the bands, else the rank-matched shares alone (the
  rule before minimax regret);
* ``midpoint (the earlier rule)``: 1/k if inside the bands, else the midpoint alone.

Metric: mean over repetitions of the largest absolute error over the options, and each rule's
ratio to the better of the two adjustments in that cell (1 = as good as knowing which is better).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ldp.consistency import (
    CONSISTENCY_ADJUSTMENTS,
    EMPIRICAL_BAYES_OPTIONS,
    EVEN_TEST_LEVEL,
    SharePrior,
    choose_consistency,
    evenness_p_value,
    share_prior,
)
from ldp.estimators import estimate_proportions
from ldp.experiments import write_rows
from ldp.intervals import Interval, simultaneous_bands
from ldp.mechanisms import make_mechanism
from ldp.simplex import clip_and_renormalize, project_onto_simplex

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
#: The large-k validation grid (``python -m ldp.experiments adjustment --large-k``): k from 2 to 256.
LARGE_K_GRID = {
    "mechanisms": ("subset",),
    "options": (2, 5, 20, 64, 256),
    "sizes": (500, 5000),
    "epsilons": (0.5, 2.0),
}

#: The rules that choose between Norm-Sub and clipping per tally: each gives choose_consistency's
#: arguments beyond the estimate and covariance (the tally's bands and fitted share distribution).
Chooser = Callable[[np.ndarray, Interval, SharePrior], dict]


def _inside(u: np.ndarray, region: Interval) -> bool:
    even = np.full(u.size, 1.0 / u.size)
    return bool(np.all(region.low <= even) and np.all(even <= region.high))


CHOOSERS: dict[str, Chooser] = {
    "auto's Norm-Sub or clip": lambda u, region, prior: {"region": region, "prior": prior},
    "rank-matched (before)": lambda u, region, prior: {
        "reference": np.full(u.size, 1.0 / u.size) if _inside(u, region) else prior.rank_matched(u)
    },
    "midpoint (the earlier rule)": lambda u, region, prior: {
        "reference": np.full(u.size, 1.0 / u.size)
        if _inside(u, region)
        else (project_onto_simplex(u) + clip_and_renormalize(u)) / 2
    },
}


@dataclass(frozen=True)
class Row:
    mechanism: str
    k: int
    n: int
    epsilon: float
    answers: str
    clip: float
    norm_sub: float
    eb: float
    auto: float
    auto_chooser: float
    rank_matched: float
    midpoint: float
    eb_share: float
    """Share of the tallies on which auto used empirical Bayes."""
    auto_se: float
    """Standard error of auto's ratio to the better adjustment (paired per tally)."""
    auto_chooser_se: float


def measure(name: str, k: int, n: int, epsilon: float, answers: str, repetitions: int, rng: np.random.Generator) -> Row:
    mechanism = make_mechanism(name, k=k, epsilon=epsilon)
    counts = rng.multinomial(n, DISTRIBUTIONS[answers](k))
    truth = counts / n
    tallies = mechanism.sample_tallies(counts, repetitions, rng=rng)
    unbiased = estimate_proportions(mechanism, tallies, n, "unbiased")
    estimates = {method: adjust(unbiased) for method, adjust in CONSISTENCY_ADJUSTMENTS.items()}
    regions = [
        simultaneous_bands(mechanism.unit_variances, u, n, correction="bonferroni", interval="score") for u in unbiased
    ]
    priors = [share_prior(mechanism.unit_variances, u, n) for u in unbiased]
    # empirical_bayes_shares(u) is this, from the same fitted prior.
    estimates["eb"] = np.array([project_onto_simplex(prior.posterior_mean) for prior in priors])
    errors = {method: np.abs(values - truth).max(axis=1) for method, values in estimates.items()}

    def covariance(f: np.ndarray) -> np.ndarray:
        return mechanism.covariance(f, n)

    # What Mechanism.automatic_consistency does, from the same bands and prior.
    shrink = [
        k in EMPIRICAL_BAYES_OPTIONS and evenness_p_value(u, n, *mechanism.even_test) > EVEN_TEST_LEVEL
        for u in unbiased
    ]
    chosen: dict[str, list[str]] = {
        rule: [
            choose_consistency(u, covariance, **arguments(u, region, prior))
            for u, region, prior in zip(unbiased, regions, priors, strict=True)
        ]
        for rule, arguments in CHOOSERS.items()
    }
    chosen["auto"] = ["eb" if s else m for s, m in zip(shrink, chosen["auto's Norm-Sub or clip"], strict=True)]
    per_tally = {rule: np.array([errors[m][i] for i, m in enumerate(picks)]) for rule, picks in chosen.items()}
    mean = {rule: float(values.mean()) for rule, values in per_tally.items()}
    better = errors["clip"] if errors["clip"].mean() < errors["norm-sub"].mean() else errors["norm-sub"]

    def ratio_se(rule: str) -> float:
        difference = per_tally[rule] - better
        return float(difference.std(ddof=1) / np.sqrt(difference.size) / better.mean())

    return Row(
        name,
        k,
        n,
        epsilon,
        answers,
        float(errors["clip"].mean()),
        float(errors["norm-sub"].mean()),
        float(errors["eb"].mean()),
        mean["auto"],
        mean["auto's Norm-Sub or clip"],
        mean["rank-matched (before)"],
        mean["midpoint (the earlier rule)"],
        float(np.mean(shrink)),
        ratio_se("auto"),
        ratio_se("auto's Norm-Sub or clip"),
    )


#: Columns of the summary: a label and the Row field it divides by the better adjustment.
COLUMNS = (
    ("clip", "clip"),
    ("Norm-Sub", "norm_sub"),
    ("eb", "eb"),
    ("auto", "auto"),
    ("auto's Norm-Sub or clip", "auto_chooser"),
    ("rank-matched (before)", "rank_matched"),
    ("midpoint (the earlier rule)", "midpoint"),
)


def summary(rows: list[Row]) -> list[tuple[str, int, dict[str, tuple[float, float]]]]:
    """Per answer distribution (and overall): each rule's mean and worst ratio to the better adjustment."""
    groups = {answers: [r for r in rows if r.answers == answers] for answers in DISTRIBUTIONS}
    groups["all"] = rows
    result = []
    for answers, group in groups.items():
        if not group:
            continue
        ratios = {label: [getattr(r, field) / min(r.clip, r.norm_sub) for r in group] for label, field in COLUMNS}
        result.append((answers, len(group), {rule: (statistics.mean(v), max(v)) for rule, v in ratios.items()}))
    return result


def clearly_worse(rows: list[Row], field: str) -> int:
    """Cells where a rule errs more than 1.05 times the better adjustment, by more than 2 standard errors."""
    count = 0
    for r in rows:
        ratio, se = getattr(r, field) / min(r.clip, r.norm_sub), getattr(r, f"{field}_se")
        count += ratio > 1.05 and ratio - 2 * se > 1
    return count


def markdown(rows: list[Row]) -> str:
    """The summary as a Markdown table (docs/experiments.md), with the cells where auto and its
    Norm-Sub-or-clip step are clearly worse than the better adjustment (> 1.05, beyond 2 paired SE)."""
    table = summary(rows)
    rules = list(table[0][2])
    lines = [
        "| answers | cells | "
        + " | ".join(f"{rule}: mean / worst" for rule in rules)
        + " | clearly worse: auto / its Norm-Sub or clip |",
        "|---|---:|" + "---:|" * (len(rules) + 1),
    ]
    for answers, cells, ratios in table:
        group = rows if answers == "all" else [r for r in rows if r.answers == answers]
        worse = f"{clearly_worse(group, 'auto')} / {clearly_worse(group, 'auto_chooser')}"
        lines.append(
            f"| {answers} | {cells} | " + " | ".join(f"{m:.3f} / {w:.2f}" for m, w in ratios.values()) + f" | {worse} |"
        )
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
