"""Free text under RAPPOR and CMS, and the longitudinal leak with and without memoization.

Decoding: seed 004's RAPPOR parameters (Fig. 3: 32 bits, h = 2, 64 cohorts, f = 0.5, p = 0.25,
q = 0.75; epsilon_1 = 2.04, epsilon_inf = 4 ln 3 = 4.39) against Apple's Count Mean Sketch and
Hadamard Count Mean Sketch over hashed strings at the same one-report epsilon (K = 64 hash
functions, m = 128 cells). Answers: Zipf(1.1)
over 100 strings, queried together with 100 decoys nobody wrote, at n from 10,000 to 1,000,000.
Per setting R seeded surveys (exact samplers of the tallies, :meth:`Rappor.simulate_counts` and
:meth:`TextSketch.simulate_counts`); reported: strings found (Bonferroni at 0.05 over the 200
candidates), the share of the 10 most common found, the false-discovery rate (false finds over
finds), the coverage of the 95 % intervals of the strings written (RAPPOR: the strings its fit
selected; the sketches: all), and the total variation distance between the true shares of the 100 strings
and the estimated ones (negative estimates set to 0, renormalized).

Longitudinal leak: one respondent answers the same value in r = 1..10 rounds. With memoization
the exact epsilon is :meth:`Rappor.epsilon_after_rounds` (it tends to epsilon_inf); without,
each round draws a fresh PRR and r rounds spend r epsilon_1. *Measured*: the success rate of the
Bayes-optimal observer who sees the r reports and guesses between two values with disjoint Bloom
filters (prior 1/2), over ``attackers`` simulated respondents, next to the bound
e^epsilon / (1 + e^epsilon) that epsilon guarantees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ldp.experiments import write_rows
from ldp.freetext import HadamardTextSketch, TextCount, TextSketch
from ldp.mechanisms.rappor import Rappor, RapporDecode, decode

SEED_FIG3 = Rappor(bits=32, hash_count=2, cohorts=64, f=0.5, p=0.25, q=0.75)
SIZES = (10_000, 30_000, 100_000, 300_000, 1_000_000)
STRINGS = 100
DECOYS = 100
ZIPF = 1.1


@dataclass(frozen=True)
class DecodeRow:
    mechanism: str
    n: int
    found: float
    top10_found: float
    false_discovery_rate: float
    coverage: float
    total_variation: float


@dataclass(frozen=True)
class LeakRow:
    rounds: int
    epsilon_memoized: float
    epsilon_fresh: float
    attack_memoized: float
    attack_fresh: float
    bound_memoized: float
    bound_fresh: float


def candidates() -> tuple[list[str], np.ndarray]:
    """The candidate strings (written ones first, then decoys) and the written strings' shares."""
    shares = 1 / np.arange(1, STRINGS + 1) ** ZIPF
    return [f"답변 {i}" for i in range(STRINGS)] + [f"decoy {i}" for i in range(DECOYS)], shares / shares.sum()


def _total_variation(estimated: np.ndarray, true: np.ndarray) -> float:
    clipped = np.maximum(estimated[:STRINGS], 0)
    if clipped.sum() <= 0:
        return 1.0
    return float(0.5 * np.abs(clipped / clipped.sum() - true[:STRINGS] / true[:STRINGS].sum()).sum())


def measure_decoding(n: int, repetitions: int, rng: np.random.Generator) -> list[DecodeRow]:
    names, shares = candidates()
    epsilon = SEED_FIG3.epsilon_one_report()
    sketches = {"CMS": TextSketch(epsilon, 64, 128), "HCMS": HadamardTextSketch(epsilon, 64, 128)}
    stats: dict[str, list[tuple[float, ...]]] = {"RAPPOR": [], "CMS": [], "HCMS": []}
    for _ in range(repetitions):
        true = np.concatenate([rng.multinomial(n, shares), np.zeros(DECOYS, dtype=np.int64)])
        rappor = decode(SEED_FIG3, SEED_FIG3.simulate_counts(names, true, rng=rng), names)
        results: list[tuple[str, RapporDecode | TextCount, np.ndarray]] = [
            ("RAPPOR", rappor, np.isfinite(rappor.standard_errors))
        ]
        for key, sketch in sketches.items():
            counted = sketch.query(sketch.simulate_counts(names, true, rng=rng), names)
            results.append((key, counted, np.ones(len(names), dtype=bool)))
        for key, result, fitted in results:
            found = np.flatnonzero(result.found)
            low, high = result.interval()
            checked = fitted & (true > 0)
            inside = (low <= true) & (true <= high)
            stats[key].append(
                (
                    found.size,
                    result.found[:10].mean(),
                    float(np.mean(true[found] == 0)) if found.size else 0.0,
                    float(inside[checked].mean()) if checked.any() else math.nan,
                    _total_variation(result.counts, true),
                )
            )
    return [DecodeRow(key, n, *map(float, np.nanmean(np.array(values), axis=0))) for key, values in stats.items()]


def _bit_log_likelihoods(ones: np.ndarray, rounds: int, memoized: bool) -> tuple[np.ndarray, np.ndarray]:
    """ln P(s ones in r rounds | B_i = 1) and | B_i = 0 (up to the common binomial factor)."""
    m = SEED_FIG3
    low, high = m.permanent_one
    if memoized:
        log_q = ones * math.log(m.q) + (rounds - ones) * math.log1p(-m.q)
        log_p = ones * math.log(m.p) + (rounds - ones) * math.log1p(-m.p)
        return (
            np.logaddexp(math.log(high) + log_q, math.log(1 - high) + log_p),
            np.logaddexp(math.log(low) + log_q, math.log(1 - low) + log_p),
        )
    p_star, q_star = m.report_one
    return (
        ones * math.log(q_star) + (rounds - ones) * math.log1p(-q_star),
        ones * math.log(p_star) + (rounds - ones) * math.log1p(-p_star),
    )


def measure_leak(rounds: int, attackers: int, rng: np.random.Generator) -> LeakRow:
    """Success of the optimal guess between value A (bits 0..h-1) and B (bits h..2h-1), truth A or B."""
    m = SEED_FIG3
    h = m.hash_count
    relevant = 2 * h  # the other bits have the same distribution under A and B
    successes = {}
    for memoized in (True, False):
        truth_is_a = rng.random(attackers) < 0.5
        bloom = np.zeros((attackers, relevant), dtype=np.int64)
        bloom[truth_is_a, :h] = 1
        bloom[~truth_is_a, h:] = 1
        if memoized:
            permanent = m.permanent_response(bloom, rng=rng)
            ones = sum(
                (m.instantaneous_response(permanent, rng=rng).astype(np.int64) for _ in range(rounds)),
                np.zeros_like(bloom),
            )
        else:
            ones = sum(
                (
                    m.instantaneous_response(m.permanent_response(bloom, rng=rng), rng=rng).astype(np.int64)
                    for _ in range(rounds)
                ),
                np.zeros_like(bloom),
            )
        one, zero = _bit_log_likelihoods(ones, rounds, memoized)
        log_a = one[:, :h].sum(axis=1) + zero[:, h:].sum(axis=1)
        log_b = zero[:, :h].sum(axis=1) + one[:, h:].sum(axis=1)
        guess_a = np.where(log_a == log_b, rng.random(attackers) < 0.5, log_a > log_b)
        successes[memoized] = float(np.mean(guess_a == truth_is_a))
    epsilon_memo, epsilon_fresh = m.epsilon_after_rounds(rounds), rounds * m.epsilon_one_report()

    def bound(epsilon: float) -> float:
        return 1 / (1 + math.exp(-epsilon))

    return LeakRow(
        rounds,
        epsilon_memo,
        epsilon_fresh,
        successes[True],
        successes[False],
        bound(epsilon_memo),
        bound(epsilon_fresh),
    )


def run(
    out: Path, repetitions: int = 50, attackers: int = 100_000, seed: int = 17
) -> tuple[list[DecodeRow], list[LeakRow]]:
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    decoding = [row for n in SIZES for row in measure_decoding(n, repetitions, rng)]
    leak = [measure_leak(r, attackers, rng) for r in range(1, 11)]
    write_rows(out / "rappor_decoding.csv", decoding)
    write_rows(out / "rappor_leak.csv", leak)
    return decoding, leak


def markdown(decoding: list[DecodeRow], leak: list[LeakRow]) -> str:
    lines = [
        "| mechanism | n | strings found | top 10 found | false-discovery rate | 95 % coverage | TV distance |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r.mechanism} | {r.n:,} | {r.found:.1f} | {100 * r.top10_found:.0f} % | {r.false_discovery_rate:.3f} "
        f"| {100 * r.coverage:.1f} % | {r.total_variation:.3f} |"
        for r in decoding
    ]
    lines += [
        "",
        "| rounds | ε memoized | ε fresh PRR | observer success, memoized | bound | observer success, fresh | bound |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r.rounds} | {r.epsilon_memoized:.3f} | {r.epsilon_fresh:.2f} | {100 * r.attack_memoized:.1f} % "
        f"| {100 * r.bound_memoized:.1f} % | {100 * r.attack_fresh:.1f} % | {100 * r.bound_fresh:.1f} % |"
        for r in leak
    ]
    return "\n".join(lines)
