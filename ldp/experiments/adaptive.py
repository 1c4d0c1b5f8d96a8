"""Two-phase (adaptive) designs against fixed ones: ``python -m ldp.experiments adaptive``.

Per (answers, k, n, epsilon), the mean over repetitions of the largest absolute error over the
options, for

* ``fixed``: the advisor's design for all n respondents, the default estimate ("auto");
* ``best fixed``: the design :func:`ldp.adaptive.retune` picks *knowing the true shares*, for all
  n respondents, "auto" (no real survey can choose it; the best any fixed design gets);
* ``clip``: the advisor's design with clipping and rescaling, what the best single peer library
  on these grids computes (multi-freq-ldpy's subset selection with its "MI" aggregator: the same
  randomization and estimator; bench/peers.py runs the library itself);
* ``adaptive``: the first ``fraction`` of respondents (15 %) with the advisor's design, the rest
  with the design :func:`~ldp.adaptive.retune` chooses from the first part's "auto" estimate, the
  two combined by inverse variance (:func:`~ldp.adaptive.combine`) and made consistent as "auto"
  does (:func:`~ldp.adaptive.combined_consistent`);
* ``focus``: the same, but ``retune`` may also choose focused response on the options phase 1
  found largest (:func:`~ldp.adaptive.focus_candidates`, scored on phase 1's "auto" estimate); a
  focused version is estimated with phase 1 by their joint likelihood
  (:func:`~ldp.adaptive.joint_shares`, EM capped at :data:`EM_STEPS` steps from evenly spread
  shares: in a 30-survey probe at k = 20, n = 1000, epsilon = 1 the cap of 10,000 erred 12 % more,
  the early stop shrinking the options phase 1 alone measures);
* ``guarded``: ``focus``, its bucket scored by phase 1's variances instead of its shares
  (``phase_one_variances`` of :func:`~ldp.adaptive.retune`);
* ``misled``: ``focus``, but the first respondents' answers differ from everyone else's (evenly
  spread when the rest are skewed, Zipf(1.1) when the rest are even), so phase 1 points the wrong way.

Paired: every arm of a cell uses the same population; the errors are against the whole
population's shares. Results: docs/experiments/adaptive.csv, docs/experiments/adaptive.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ldp.adaptive import combine, combined_consistent, joint_shares, retune
from ldp.advisor import recommend
from ldp.consistency import evenness_p_value
from ldp.estimators import estimate_proportions
from ldp.experiments import write_rows
from ldp.mechanisms import make_mechanism

FRACTION = 0.15
SHAPES = ("even", "zipf")
OPTIONS = (5, 20)
SIZES = (1000, 10000)
EPSILONS = (0.5, 1.0, 2.0)
EM_STEPS = 300


def shares(shape: str, k: int) -> np.ndarray:
    if shape == "even":
        return np.full(k, 1.0 / k)
    weights = 1.0 / np.arange(1, k + 1) ** 1.1
    return weights / weights.sum()


@dataclass(frozen=True)
class Row:
    answers: str
    k: int
    n: int
    epsilon: float
    arm: str
    design: str
    mean_max_error: float
    standard_error: float
    ratio_to_fixed: float
    ratio_se: float


def adaptive_errors(
    phase_one: np.ndarray,
    phase_two: np.ndarray,
    k: int,
    epsilon: float,
    repetitions: int,
    rng: np.random.Generator,
    focus: str = "",
) -> tuple[np.ndarray, str]:
    """Largest errors of the two-phase design over ``repetitions`` surveys, and the designs phase 2 used."""
    n1, n2 = int(phase_one.sum()), int(phase_two.sum())
    truth = (phase_one + phase_two) / (n1 + n2)
    best = recommend(k, epsilon, n1 + n2).best
    first = make_mechanism(best.mechanism, k=k, epsilon=epsilon, **best.params)
    tallies = first.sample_tallies(phase_one, repetitions, rng=rng)
    unbiased_one = estimate_proportions(first, tallies, n1, "unbiased")
    auto_one = estimate_proportions(first, tallies, n1, "auto")
    errors: list[float] = []
    used: dict[str, int] = {}
    for row_unbiased, row_auto in zip(unbiased_one, auto_one, strict=True):
        p_value = evenness_p_value(row_unbiased, n1, *first.even_test)
        # Focused response scored by phase 1's variances ("guarded") or by its shares ("optimistic").
        left = np.maximum(first.unit_variances @ row_auto, 0.0) / n1 if focus == "guarded" else None
        design = retune(  # reads phase 1 only
            row_auto, k, epsilon, n2, evenness_p=p_value, focus=bool(focus), phase_one_variances=left
        )
        second = design.build(k, epsilon)
        label = f"{design.mechanism}{design.params.get('subset_size', len(design.params.get('focus', '')) or '')}"
        used[label] = used.get(label, 0) + 1
        tally = second.sample_tallies(phase_two, 1, rng=rng)
        if second.name == first.name and second.params() == first.params():
            # The design was kept: one version, whose tallies add up (exact), estimated as usual.
            shares = estimate_proportions(first, tallies[len(errors)] + tally[0], n1 + n2, "auto")
        elif "focus" in design.params:
            versions = [(first, tallies[len(errors)], n1), (second, tally[0], n2)]
            shares = joint_shares(versions, iterations=EM_STEPS, tolerance=1e-6)
        else:
            row_two = estimate_proportions(second, tally, n2, "unbiased")[0]
            shares = combined_consistent(combine([(first, row_unbiased, n1), (second, row_two, n2)])).proportions
        errors.append(np.abs(shares - truth).max())
    summary = ", ".join(f"{label} {count}" for label, count in sorted(used.items(), key=lambda item: -item[1]))
    return np.array(errors), summary


def run(repetitions: int = 100, out: Path | None = None, options: tuple[int, ...] = OPTIONS) -> list[Row]:
    rows: list[Row] = []
    for shape in SHAPES:
        for k in options:
            for n in SIZES:
                population = np.random.default_rng([29, k, n]).multinomial(n, shares(shape, k))
                truth = population / n
                n1 = int(round(FRACTION * n))
                # Phase 1 takes the first n1 respondents; "misled": they come from the other shape.
                one = np.random.default_rng([29, k, n, 1]).multivariate_hypergeometric(population, n1)
                other = "zipf" if shape == "even" else "even"
                misled_one = np.random.default_rng([29, k, n, 2]).multinomial(n1, shares(other, k))
                misled_two = np.random.default_rng([29, k, n, 3]).multinomial(n - n1, shares(shape, k))
                for epsilon in EPSILONS:
                    rng = np.random.default_rng([29, k, n, int(epsilon * 10)])
                    best = recommend(k, epsilon, n).best
                    fixed = make_mechanism(best.mechanism, k=k, epsilon=epsilon, **best.params)
                    tallies = fixed.sample_tallies(population, repetitions, rng=rng)
                    arms: dict[str, tuple[np.ndarray, str]] = {}
                    for arm, estimator in (("fixed", "auto"), ("clip", "clip")):
                        estimate = estimate_proportions(fixed, tallies, n, estimator)
                        arms[arm] = (np.abs(estimate - truth).max(axis=1), f"{best.mechanism}")
                    oracle = retune(truth, k, epsilon, n, margin=0.0).build(k, epsilon)
                    estimate = estimate_proportions(
                        oracle, oracle.sample_tallies(population, repetitions, rng=rng), n, "auto"
                    )
                    arms["best fixed"] = (np.abs(estimate - truth).max(axis=1), oracle.name)
                    arms["adaptive"] = adaptive_errors(one, population - one, k, epsilon, repetitions, rng)
                    arms["focus"] = adaptive_errors(one, population - one, k, epsilon, repetitions, rng, "optimistic")
                    arms["guarded"] = adaptive_errors(one, population - one, k, epsilon, repetitions, rng, "guarded")
                    misled_truth = (misled_one + misled_two) / n
                    errors, used = adaptive_errors(misled_one, misled_two, k, epsilon, repetitions, rng, "optimistic")
                    # The misled arm's population differs from the others': compare it with a fixed design on it.
                    base = estimate_proportions(
                        fixed, fixed.sample_tallies(misled_one + misled_two, repetitions, rng=rng), n, "auto"
                    )
                    base_errors = np.abs(base - misled_truth).max(axis=1)
                    reference = arms["fixed"][0]
                    for arm, (errors_arm, design) in [*arms.items(), ("misled", (errors, used))]:
                        against = base_errors if arm == "misled" else reference
                        ratio = errors_arm.mean() / against.mean()
                        # Paired per repetition only for arms on the same tallies; otherwise independent.
                        se = ratio * np.hypot(
                            errors_arm.std(ddof=1) / np.sqrt(repetitions) / errors_arm.mean(),
                            against.std(ddof=1) / np.sqrt(repetitions) / against.mean(),
                        )
                        rows.append(
                            Row(
                                shape,
                                k,
                                n,
                                epsilon,
                                arm,
                                design,
                                float(errors_arm.mean()),
                                float(errors_arm.std(ddof=1) / np.sqrt(repetitions)),
                                float(ratio),
                                float(se),
                            )
                        )
                    print(
                        f"{shape} k={k} n={n} ε={epsilon:g}: "
                        + ", ".join(
                            f"{r.arm} {100 * r.mean_max_error:.2f} ({r.ratio_to_fixed:.3f})" for r in rows[-7:]
                        ),
                        flush=True,
                    )
    if out is not None:
        write_rows(out / "adaptive.csv", rows)
    return rows


def markdown(rows: list[Row]) -> str:
    """Per cell, each arm's mean largest error (%) and its ratio to the fixed design's (± SE)."""
    arms = ("fixed", "best fixed", "clip", "adaptive", "focus", "guarded", "misled")
    lines = [
        "| answers | k | n | ε | " + " | ".join(arms) + " | focus / clip | focus's phase-2 designs |",
        "|---|---:|---:|---:|" + "---:|" * len(arms) + "---:|---|",
    ]
    cells: dict[tuple[str, int, int, float], dict[str, Row]] = {}
    for row in rows:
        cells.setdefault((row.answers, row.k, row.n, row.epsilon), {})[row.arm] = row
    for (shape, k, n, epsilon), cell in cells.items():
        values = [
            f"{100 * cell[a].mean_max_error:.2f}"
            + ("" if a == "fixed" else f" ({cell[a].ratio_to_fixed:.2f} ± {cell[a].ratio_se:.2f})")
            for a in arms
        ]
        versus_clip = cell["focus"].mean_max_error / cell["clip"].mean_max_error
        lines.append(
            f"| {shape} | {k} | {n} | {epsilon:g} | "
            + " | ".join(values)
            + f" | {versus_clip:.2f} | {cell['focus'].design} |"
        )
    return "\n".join(lines)
