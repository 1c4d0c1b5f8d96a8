"""Multi-select and cross-tab experiments: measured errors against the analytic ones.

multiselect: for k options, at most l choices and epsilon, a population of n = 2000 respondents
in the advisor's reference shape (as many respondents choose 0, 1, ..., l options; sets spread
evenly over the options, so every share is l / (2k)) answers R times with each multi-select
mechanism. Reported per mechanism: the mean over repetitions of the largest absolute error over
the options, max_j |pi_hat_j - pi_j|, the expected widest 95 % half-width from the advisor, and
which mechanism the advisor picks against which one erred least.

crosstab: a 3 x 3 and a 5 x 5 joint distribution (half the respondents on the diagonal, the rest
spread evenly), n respondents, a total budget epsilon per respondent: post hoc, two k-RR
questions at epsilon / 2 each; declared, one k-RR answer over k1 k2 options at epsilon. Reported:
the mean largest absolute cell error, measured and expected (the widest cell's 95 % half-width).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ldp.crosstab import declared_mechanism, expected_errors
from ldp.experiments import write_rows
from ldp.mechanisms import Tally, make_mechanism
from ldp.multiselect import PaddingAndSampling, SetUnaryEncoding, make_set_mechanism, recommend_multiselect

MULTISELECT_GRID = [(5, 1), (5, 2), (5, 5), (10, 2), (10, 5), (20, 2), (20, 5), (20, 20)]
EPSILONS = (0.5, 1.0, 2.0, 4.0)
NAMES = ("set-sue", "set-oue", "padding-krr", "padding-olh")
N = 2000


@dataclass(frozen=True)
class MultiselectRow:
    k: int
    max_choices: int
    epsilon: float
    mechanism: str
    measured_max_error: float
    expected_half_width: float
    advisor_pick: str
    measured_best: str


def reference_population(k: int, ell: int, n: int) -> np.ndarray:
    """Sizes 0..l equally often; each size's sets are l-cyclic windows starting at every option."""
    rows = []
    per = n // ((ell + 1) * k)
    for size in range(ell + 1):
        for start in range(k):
            rows += [np.isin(np.arange(k), (start + np.arange(size)) % k)] * per
    return np.array(rows)


def shares_from_counts(mechanism: SetUnaryEncoding | PaddingAndSampling, counts: np.ndarray, n: int) -> np.ndarray:
    """Unbiased shares for a stack of tallies (rows)."""
    if isinstance(mechanism, SetUnaryEncoding):
        p, q = mechanism.true_bit_probability, mechanism.other_bit_probability
        return (counts / n - q) / (p - q)
    oracle = mechanism.oracle
    observed = oracle.observed_mean(Tally(n, counts))
    return mechanism.ell * np.linalg.solve(oracle.response_matrix, observed.T).T[:, : mechanism.k]


def run_multiselect(out: Path, repetitions: int = 200, seed: int = 15) -> list[MultiselectRow]:
    rng = np.random.default_rng(seed)
    rows: list[MultiselectRow] = []
    for k, ell in MULTISELECT_GRID:
        sets = reference_population(k, ell, N)
        truth, n = sets.mean(axis=0), sets.shape[0]
        for epsilon in EPSILONS:
            advice = recommend_multiselect(k, ell, epsilon, n)
            expected = {c.mechanism: c.half_width for c in advice.ranking}
            measured = {}
            for name in NAMES:
                mechanism = make_set_mechanism(name, k, epsilon, ell)
                reps = repetitions if name != "padding-olh" else max(2, repetitions // 10)
                counts = mechanism.sample_tallies(sets, reps, rng=rng)
                errors = np.abs(shares_from_counts(mechanism, counts, n) - truth).max(axis=1)
                measured[name] = float(errors.mean())
            best = min(measured, key=measured.__getitem__)
            rows += [
                MultiselectRow(k, ell, epsilon, name, measured[name], expected[name], advice.best.mechanism, best)
                for name in NAMES
            ]
    write_rows(out / "multiselect.csv", rows)
    return rows


@dataclass(frozen=True)
class CrosstabRow:
    cells: str
    n: int
    epsilon: float
    posthoc_max_error: float
    declared_max_error: float
    posthoc_expected: float
    declared_expected: float


def joint_population(k: int, n: int) -> np.ndarray:
    joint = np.full((k, k), 0.5 / (k * k - k))
    np.fill_diagonal(joint, 0.5 / k)
    return np.round(joint * n).astype(int)


def run_crosstab(out: Path, repetitions: int = 500, seed: int = 16) -> list[CrosstabRow]:
    rng = np.random.default_rng(seed)
    rows: list[CrosstabRow] = []
    for k in (3, 5):
        for n in (500, 2000, 10000):
            counts = joint_population(k, n)
            total = int(counts.sum())
            truth = (counts / total).reshape(-1)
            for epsilon in (1.0, 2.0, 4.0):
                first = make_mechanism("krr", k=k, epsilon=epsilon / 2)
                kronecker = np.kron(first.response_matrix, first.response_matrix)
                # Each respondent's report pair is one draw over the k^2 pairs: column of A1 (x) A2.
                cells = enumerate(counts.reshape(-1))
                draws = (rng.multinomial(c, kronecker[:, cell], size=repetitions) for cell, c in cells)
                pairs = sum(draws, np.zeros((repetitions, k * k), dtype=np.int64))
                posthoc = np.linalg.solve(kronecker, (pairs / total).T).T
                declared = declared_mechanism("krr", k, k, epsilon)
                tallies = declared.sample_tallies(counts.reshape(-1), repetitions, rng=rng)
                declared_cells = np.linalg.solve(declared.response_matrix, (tallies / total).T).T
                expected = expected_errors(first, first, declared, total)
                rows.append(
                    CrosstabRow(
                        f"{k}x{k}",
                        total,
                        epsilon,
                        float(np.abs(posthoc - truth).max(axis=1).mean()),
                        float(np.abs(declared_cells - truth).max(axis=1).mean()),
                        expected.posthoc,
                        expected.declared,
                    )
                )
    write_rows(out / "crosstab.csv", rows)
    return rows


def markdown_multiselect(rows: list[MultiselectRow]) -> str:
    lines = [
        "| k | l | epsilon | set-SUE | set-OUE | padding k-RR | padding OLH | advisor | measured best |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for start in range(0, len(rows), len(NAMES)):
        group = rows[start : start + len(NAMES)]
        first = group[0]
        cells = " | ".join(f"{r.measured_max_error:.3f} ({r.expected_half_width:.3f})" for r in group)
        lines.append(
            f"| {first.k} | {first.max_choices} | {first.epsilon:g} | {cells} | {first.advisor_pick} | "
            f"{first.measured_best} |"
        )
    return "\n".join(lines)


def markdown_crosstab(rows: list[CrosstabRow]) -> str:
    lines = ["| cells | n | epsilon | post hoc | declared | ratio |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r.cells} | {r.n} | {r.epsilon:g} | {r.posthoc_max_error:.4f} ({r.posthoc_expected:.4f}) | "
            f"{r.declared_max_error:.4f} ({r.declared_expected:.4f}) | "
            f"{r.posthoc_max_error / r.declared_max_error:.1f} |"
        )
    return "\n".join(lines)
