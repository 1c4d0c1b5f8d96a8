"""Murmur against the peer LDP libraries' own implementations of the same mechanisms.

    make bench-peers          # builds bench/.venv-peers, then runs this module in it
    python -m bench.peers [--repetitions R] [--peer-repetitions R'] [--grid seed004|zipf20]
    python -m bench.peers --shapes [SHAPE ...] --repetitions R   # Murmur only: auto vs fixed estimators

Peers, installed from PyPI into their own virtualenv (never vendored): pure-LDP 1.2.0 and
multi-freq-ldpy 0.2.5, which need numpy 2.2.x, xxhash 3.x, scikit-learn and statsmodels. Each
peer runs its own client (per respondent) and its own server estimator; its global numpy random
state is seeded per cell. Murmur's settings are simulated with the mechanisms' exact tally
samplers, which have the distribution of randomize-then-tally (tests/ldp/test_tally_sampling.py).

Grids: seed 004's (k = 5, uniform answers), k = 20 and k = 64 with Zipf(1.1) answers; on request
(--grid) k = 20 with 90 % on one option, or geometric answers (ratio 0.7); n in {500, 1000,
5000, 10000}; epsilon in {0.1, 0.5, 1, 2, 5}. Metric: mean over repetitions of the largest
absolute error over the options, with its standard error. One data set per (grid, n), shared.

"Murmur auto" is what a question built with the builder's default gets: the advisor's mechanism
for (k, epsilon, n) and the "auto" estimator (Mechanism.automatic_consistency: empirical Bayes when
5 <= k <= 64 and a chi-square test does not reject evenly spread answers, else Norm-Sub or clipping by
ldp.consistency.choose_consistency). "Murmur auto-ibu" is "auto" with ldp.large_k's rule at 33-64 options
(a sharper evenness test, IBU where it rejects); "Murmur auto-ibu-avg" the same with the mean of IBU's and
Norm-Sub's estimates where it rejects. "Murmur EB" is the same mechanism with the empirical-Bayes
estimator on every tally (ldp.estimators.empirical_bayes); "Murmur advisor (Norm-Sub)",
"(clip)" and "(IBU)" the same mechanism with one estimator on every tally (IBU:
ldp.ibu.support_bayesian_update). "Murmur auto-even" is "auto" with its empirical-Bayes shares
averaged with evenly spread answers by their posterior probability at 5-32 options
(ldp.even_shrinkage). The summary's "oracle" row takes, per cell, the best of
those five, which no rule can (it would need the true shares): how far
choosing the estimator per tally could go at best.

The best of 13 peers, each measured with noise, is biased low if it is both chosen and scored on
the same repetitions (the winner's curse). So each peer's repetitions are split in two halves: the
first half picks the best peer of the cell, the second half scores it, and the summary compares
Murmur auto with that held-out score. A second summary compares it with the best *single* peer
of each grid (one implementation for all the grid's cells, chosen the same way:
held_out_single_peer), the baseline a user of one library gets.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ldp import make_mechanism
from ldp.advisor import recommend
from ldp.estimators import estimate_proportions

SIZES = (500, 1000, 5000, 10000)
EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)


def zipf(k: int, exponent: float = 1.1) -> np.ndarray:
    """Shares proportional to 1 / rank^exponent."""
    weights = 1.0 / np.arange(1, k + 1) ** exponent
    return weights / weights.sum()


def concentrated(k: int, top: float = 0.9) -> np.ndarray:
    return np.r_[top, np.full(k - 1, (1 - top) / (k - 1))]


def geometric(k: int, ratio: float = 0.7) -> np.ndarray:
    weights = ratio ** np.arange(k)
    return weights / weights.sum()


#: The benchmark grids (seed 004's, k = 20 Zipf, k = 64 Zipf), run by default, and answer
#: distributions they do not name (--grid).
GRIDS = {"seed004": (5, np.full(5, 0.2)), "zipf20": (20, zipf(20)), "zipf64": (64, zipf(64))}
OTHER_GRIDS = {"concentrated20": (20, concentrated(20)), "geometric20": (20, geometric(20))}

Peer = Callable[[np.ndarray, int, float], np.ndarray]


def multi_freq_ldpy() -> dict[str, Peer]:
    from multi_freq_ldpy.pure_frequency_oracles import GRR, LH, SS, UE

    def run(client: Callable[..., object], aggregate: Callable[..., np.ndarray], **kw: object) -> Peer:
        def peer(values: np.ndarray, k: int, epsilon: float) -> np.ndarray:
            reports = [client(int(v), k, epsilon, **kw) for v in values]
            if aggregate is UE.UE_Aggregator_MI:  # the one aggregator without k
                return np.asarray(aggregate(reports, epsilon, **kw), dtype=float)
            return np.asarray(aggregate(reports, k, epsilon, **kw), dtype=float)

        return peer

    return {
        "mfl GRR (MI)": run(GRR.GRR_Client, GRR.GRR_Aggregator_MI),
        "mfl GRR (IBU)": run(GRR.GRR_Client, GRR.GRR_Aggregator_IBU),
        "mfl OUE (MI)": run(UE.UE_Client, UE.UE_Aggregator_MI, optimal=True),
        "mfl SUE (MI)": run(UE.UE_Client, UE.UE_Aggregator_MI, optimal=False),
        "mfl OLH (MI)": run(LH.LH_Client, LH.LH_Aggregator_MI, optimal=True),
        "mfl SS (MI)": run(SS.SS_Client, SS.SS_Aggregator_MI),
        "mfl SS (IBU)": run(SS.SS_Client, SS.SS_Aggregator_IBU),
    }


def pure_ldp() -> dict[str, Peer]:
    from pure_ldp.frequency_oracles.apple_cms import CMSClient, CMSServer
    from pure_ldp.frequency_oracles.direct_encoding import DEClient, DEServer
    from pure_ldp.frequency_oracles.hadamard_response import HadamardResponseClient, HadamardResponseServer
    from pure_ldp.frequency_oracles.local_hashing import LHClient, LHServer
    from pure_ldp.frequency_oracles.unary_encoding import UEClient, UEServer

    def run(make: Callable[[int, float], tuple[object, object]]) -> Peer:
        def peer(values: np.ndarray, k: int, epsilon: float) -> np.ndarray:
            client, server = make(k, epsilon)
            for v in values:
                server.aggregate(client.privatise(int(v) + 1))  # pure-LDP numbers items from 1
            counts = np.array([server.estimate(item, suppress_warnings=True) for item in range(1, k + 1)], dtype=float)
            return counts / values.size

        return peer

    def hadamard(k: int, epsilon: float) -> tuple[object, object]:
        server = HadamardResponseServer(epsilon, k)
        return HadamardResponseClient(epsilon, k, server.get_hash_funcs()), server

    def cms(k: int, epsilon: float, is_hadamard: bool = False) -> tuple[object, object]:
        server = CMSServer(epsilon, 512, 128, is_hadamard=is_hadamard)
        return CMSClient(epsilon, server.get_hash_funcs(), 128, is_hadamard=is_hadamard), server

    return {
        "pl DE (GRR)": run(lambda k, e: (DEClient(e, k), DEServer(e, k))),
        "pl OUE": run(lambda k, e: (UEClient(e, k, use_oue=True), UEServer(e, k, use_oue=True))),
        "pl OLH": run(lambda k, e: (LHClient(e, k, use_olh=True), LHServer(e, k, use_olh=True))),
        "pl HR": run(hadamard),
        "pl CMS": run(cms),
        "pl HCMS": run(lambda k, e: cms(k, e, True)),
    }


MURMUR = {
    "Murmur auto": ("auto", "auto"),
    "Murmur EB": ("auto", "eb"),
    "Murmur advisor (Norm-Sub)": ("auto", "norm-sub"),
    "Murmur advisor (clip)": ("auto", "clip"),
    "Murmur advisor (IBU)": ("auto", "ibu"),
    "Murmur advisor (cross-fit)": ("auto", "cross-fit"),
    "Murmur auto-ibu": ("auto", "auto-ibu"),
    "Murmur auto-ibu-avg": ("auto", "auto-ibu-avg"),
    "Murmur auto-even": ("auto", "auto-even"),
    "Murmur k-RR (Norm-Sub)": ("krr", "norm-sub"),
    "Murmur subset (clip)": ("subset", "clip"),
    "Murmur subset (Norm-Sub)": ("subset", "norm-sub"),
    "Murmur OUE (Norm-Sub)": ("oue", "norm-sub"),
    "Murmur OLH (Norm-Sub)": ("olh", "norm-sub"),
    "Murmur Hadamard (Norm-Sub)": ("hadamard", "norm-sub"),
}
#: The rows the oracle picks from: the advisor's mechanism with each of Murmur's estimators.
ORACLE = ("Murmur auto", "Murmur EB", "Murmur advisor (Norm-Sub)", "Murmur advisor (clip)", "Murmur advisor (IBU)")


@dataclass(frozen=True)
class Cell:
    grid: str
    n: int
    epsilon: float
    implementation: str
    mean_max_error: float
    standard_error: float
    seconds: float
    errors: tuple[float, ...] = ()
    """Per repetition (peers only), for the held-out choice of the best peer."""


def murmur_cell(
    grid: str, counts: np.ndarray, epsilon: float, label: str, repetitions: int, rng: np.random.Generator
) -> Cell:
    started = time.perf_counter()
    name, estimator = MURMUR[label]
    n = int(counts.sum())
    if name == "auto":
        best = recommend(counts.size, epsilon, n).best
        mechanism = make_mechanism(best.mechanism, k=counts.size, epsilon=epsilon, **best.params)
    else:
        mechanism = make_mechanism(name, k=counts.size, epsilon=epsilon)
    estimates = estimate_proportions(mechanism, mechanism.sample_tallies(counts, repetitions, rng=rng), n, estimator)
    errors = np.abs(estimates - counts / n).max(axis=1)
    return Cell(
        grid, n, epsilon, label, errors.mean(), errors.std(ddof=1) / np.sqrt(repetitions), time.perf_counter() - started
    )


def peer_cell(
    grid: str, counts: np.ndarray, epsilon: float, label: str, peer: Peer, repetitions: int, seed: int
) -> Cell:
    started = time.perf_counter()
    np.random.seed(seed)  # the peers draw from numpy's global generator
    values = np.repeat(np.arange(counts.size), counts)
    n = values.size
    errors = np.array([np.abs(peer(values, counts.size, epsilon) - counts / n).max() for _ in range(repetitions)])
    return Cell(
        grid,
        n,
        epsilon,
        label,
        errors.mean(),
        errors.std(ddof=1) / np.sqrt(repetitions),
        time.perf_counter() - started,
        tuple(errors),
    )


def held_out_best(peers: list[Cell]) -> tuple[str, float, float]:
    """The peer with the lowest mean error on the first half of its repetitions, scored on the second."""
    half = min(len(c.errors) for c in peers) // 2
    chosen = min(peers, key=lambda c: np.mean(c.errors[:half]))
    scored = np.array(chosen.errors[half:])
    return chosen.implementation, float(scored.mean()), float(scored.std(ddof=1) / np.sqrt(scored.size))


def held_out_single_peer(cells: list[list[Cell]]) -> list[tuple[str, float, float]]:
    """One peer for a whole grid, chosen on the first half of its repetitions, scored per cell on the second.

    The issue's other baseline: not the best peer of each cell (a different library or
    mechanism per cell, which no user of one library gets) but the one implementation that is
    best across the grid: the lowest mean over the grid's cells of its first-half error divided
    by the cell's best first-half error (a scale-free score, so the large errors of small n and
    epsilon do not decide alone). Returns, per cell, that peer's name, second-half mean error and
    its standard error.
    """
    half = min(len(c.errors) for peers in cells for c in peers) // 2

    def first_half(c: Cell) -> float:
        return float(np.mean(c.errors[:half]))

    scores: dict[str, list[float]] = {}
    for peers in cells:
        best = min(first_half(c) for c in peers)
        for c in peers:
            scores.setdefault(c.implementation, []).append(first_half(c) / best)
    chosen = min(scores, key=lambda label: np.mean(scores[label]))
    scored = []
    for peers in cells:
        errors = np.array(next(c for c in peers if c.implementation == chosen).errors[half:])
        scored.append((chosen, float(errors.mean()), float(errors.std(ddof=1) / np.sqrt(errors.size))))
    return scored


def grid_summary(summary: list[tuple], label: str = "auto", against: str = "best peer") -> str:
    """Per grid: Murmur's error (auto, or the row named) over the held-out best peer's, averaged over cells.

    Murmur and each peer randomize independently (the peers run their own clients), so a cell's
    ratio r = a / p has standard error r * sqrt((se_a / a)^2 + (se_p / p)^2) (delta method), the
    mean of C independent cells' ratios sqrt(sum se_r^2) / C. A cell is a statistical tie when its
    ratio is within 2 such standard errors of 1.
    """
    lines = [
        f"| grid | cells | mean {label} / {against} | ± SE | worst cell (n, ε) | its ratio | ± SE "
        "| cells > 1.05, not a tie |",
        "|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    for grid in dict.fromkeys(row[0] for row in summary):
        rows = [row for row in summary if row[0] == grid]
        ratios, errors = [], []
        for _, _, _, auto, _, peer, peer_se in rows:
            ratio = auto.mean_max_error / peer
            ratios.append(ratio)
            errors.append(ratio * np.hypot(auto.standard_error / auto.mean_max_error, peer_se / peer))
        ratios, errors = np.array(ratios), np.array(errors)
        worst = int(np.argmax(ratios))
        losing = int(np.sum((ratios > 1.05) & (ratios - 2 * errors > 1)))
        lines.append(
            f"| {grid} | {len(rows)} | {ratios.mean():.3f} | {np.sqrt(np.sum(errors**2)) / len(rows):.3f} "
            f"| {rows[worst][1]}, {rows[worst][2]:g} | {ratios[worst]:.2f} | {errors[worst]:.2f} | {losing} |"
        )
    return "\n".join(lines)


#: Answer shapes for the default's check against fixed estimators (Murmur only, no peers).
SHAPE_OPTIONS = (2, 5, 20, 64)
SHAPE_SIZES = (100, 1000, 10_000, 100_000)
SHAPE_EPSILONS = (0.1, 1.0, 5.0)
FIXED_ESTIMATORS = ("norm-sub", "clip", "eb", "ibu")


def bimodal(k: int) -> np.ndarray:
    """Two bumps, at a quarter and three quarters of the options."""
    x = np.arange(k)
    width = k / 10 + 0.5
    weights = np.exp(-0.5 * ((x - k / 4) / width) ** 2) + np.exp(-0.5 * ((x - 3 * k / 4) / width) ** 2)
    return weights / weights.sum()


SHAPES: dict[str, Callable[[int], np.ndarray]] = {
    "uniform": lambda k: np.full(k, 1.0 / k),
    "Zipf 0.5": lambda k: zipf(k, 0.5),
    "Zipf 1.1": zipf,
    "Zipf 2": lambda k: zipf(k, 2.0),
    "geometric 0.7": geometric,
    "point mass": lambda k: np.eye(k)[0],
    "bimodal": bimodal,
    "Dirichlet(1)": lambda k: np.random.default_rng([29, k]).dirichlet(np.ones(k)),
}


def shape_grid(repetitions: int, shapes: list[str] | None = None, cross_fit: bool = False) -> None:
    """Per answer shape: the default ("auto") against the best fixed estimator of that shape's grid.

    For each shape, a grid of k in SHAPE_OPTIONS, n in SHAPE_SIZES, epsilon in SHAPE_EPSILONS, the
    advisor's mechanism; every estimator scores the same tallies (paired repetitions). The best
    fixed estimator of a shape is the one of FIXED_ESTIMATORS with the lowest mean over the grid of
    its error divided by the cell's best fixed error; the table gives auto's mean ratio to it, the
    paired standard error (per cell, sd(a_i - r b_i) / (sqrt(R) mean b), combined over cells), the
    worst cell, and the cells where auto loses by more than 2 standard errors.
    """
    extra = " mean cross-fit / it | ± SE |" if cross_fit else ""
    print(
        "| answers | best fixed estimator | mean auto / it | ± SE | worst cell (k, n, ε) | ratio "
        "| cells losing > 2 SE | auto-even / it | auto-even / auto |" + extra
    )
    print("|---|---|---:|---:|---|---:|---:|---:|---:|" + ("---:|---:|" if cross_fit else ""))
    for shape in shapes or list(SHAPES):
        cells = []
        for k in SHAPE_OPTIONS:
            for n in SHAPE_SIZES:
                counts = np.random.default_rng([29, k, n]).multinomial(n, SHAPES[shape](k))
                for epsilon in SHAPE_EPSILONS:
                    best = recommend(k, epsilon, n).best
                    mechanism = make_mechanism(best.mechanism, k=k, epsilon=epsilon, **best.params)
                    rng = np.random.default_rng([29, k, n, int(10 * epsilon)])
                    tallies = mechanism.sample_tallies(counts, repetitions, rng=rng)
                    errors = {
                        name: np.abs(estimate_proportions(mechanism, tallies, n, name) - counts / n).max(axis=1)
                        for name in ("auto", "auto-even", *(("cross-fit",) if cross_fit else ()), *FIXED_ESTIMATORS)
                        if name != "ibu" or mechanism.name in ("krr", "subset", "oue", "sue", "olh")
                    }
                    cells.append(((k, n, epsilon), errors))
        fixed = [name for name in FIXED_ESTIMATORS if all(name in errors for _, errors in cells)]
        scores = {
            name: np.mean([floor(e[name].mean()) / floor(min(e[f].mean() for f in fixed)) for _, e in cells])
            for name in fixed
        }
        chosen = min(scores, key=scores.__getitem__)
        ratios, ses = paired_ratios(cells, "auto", chosen)
        columns = ""
        if cross_fit:
            cross, cross_ses = paired_ratios(cells, "cross-fit", chosen)
            columns = f" {cross.mean():.3f} | {np.sqrt(np.sum(cross_ses**2)) / cross.size:.3f} |"
        worst = int(np.argmax(ratios))
        losing = int(np.sum(ratios - 2 * ses > 1))
        k, n, epsilon = cells[worst][0]
        even, even_ses = paired_ratios(cells, "auto-even", chosen)
        change, change_ses = paired_ratios(cells, "auto-even", "auto")
        print(
            f"| {shape} | {chosen} | {ratios.mean():.3f} | {np.sqrt(np.sum(ses**2)) / ratios.size:.3f} "
            f"| {k}, {n}, {epsilon:g} | {ratios[worst]:.2f} ± {ses[worst]:.2f} | {losing} of {ratios.size} "
            f"| {even.mean():.3f} ± {np.sqrt(np.sum(even_ses**2)) / even.size:.3f} "
            f"| {change.mean():.3f} ± {np.sqrt(np.sum(change_ses**2)) / change.size:.3f} |" + columns,
            flush=True,
        )


def paired_ratios(cells: list, label: str, against: str) -> tuple[np.ndarray, np.ndarray]:
    """Per cell, mean error of ``label`` over ``against``'s, and its paired standard error."""
    ratios, ses = [], []
    for _, e in cells:
        a, b = e[label], e[against]
        r = floor(a.mean()) / floor(b.mean())
        ratios.append(r)
        ses.append(np.std(a - r * b, ddof=1) / np.sqrt(a.size) / floor(b.mean()))
    return np.array(ratios), np.array(ses)


def floor(error: float) -> float:
    """Errors below a millionth of a share count as a millionth (a point mass is often hit exactly)."""
    return max(float(error), 1e-6)


CACHE = Path(__file__).with_name(".peers-cache")


def run_peer(task: tuple[str, np.ndarray, float, str, int, int]) -> Cell:
    """One peer's cell, from the cache when this exact cell (data, seed, repetitions) has run before.

    The peers' results do not depend on Murmur's code, so rerunning the benchmark after a change
    to Murmur reruns only Murmur's rows.
    """
    grid, counts, epsilon, label, repetitions, seed = task
    key = hashlib.sha256(json.dumps([grid, counts.tolist(), epsilon, label, repetitions, seed]).encode()).hexdigest()
    cached = CACHE / f"{key}.json"
    if cached.exists():
        fields = json.loads(cached.read_text())
        return Cell(**{**fields, "errors": tuple(fields["errors"])})
    cell = peer_cell(grid, counts, epsilon, label, PEERS[label], repetitions, seed)
    CACHE.mkdir(exist_ok=True)
    cached.write_text(json.dumps(asdict(cell)))
    return cell


PEERS: dict[str, Peer] = {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=2000, help="Murmur's repetitions per cell")
    parser.add_argument("--peer-repetitions", type=int, default=300, help="each peer's repetitions per cell")
    parser.add_argument("--grid", choices=sorted(GRIDS | OTHER_GRIDS), action="append")
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--epsilons", type=float, nargs="*", default=list(EPSILONS))
    parser.add_argument("--peers-only", action="store_true", help="only fill the peers' cache")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1, help="peer cells run in parallel")
    parser.add_argument("--shapes", nargs="*", help="instead: auto against fixed estimators on these answer shapes")
    parser.add_argument("--cross-fit", action="store_true", help="--shapes: score the cross-fit estimator too (slow)")
    parser.add_argument("--without-cross-fit", action="store_true", help="skip Murmur's cross-fit row (slow)")
    args = parser.parse_args()
    if args.shapes is not None:
        shape_grid(args.repetitions, [s for s in args.shapes if s] or None, args.cross_fit)
        return
    if args.without_cross_fit:
        del MURMUR["Murmur advisor (cross-fit)"]
    PEERS.update({**multi_freq_ldpy(), **pure_ldp()})
    rng = np.random.default_rng(2024)
    summary, summary_eb, summary_ibu, summary_oracle, grid_peers = [], [], [], [], {}
    summary_auto_ibu: list[tuple] = []
    summary_avg: list[tuple] = []
    summary_even: list[tuple] = []
    print("| grid | n | ε | implementation | mean max error (%) | ± SE | seconds |")
    print("|---|---:|---:|---|---:|---:|---:|")
    with multiprocessing.Pool(args.processes) as pool:
        for grid in args.grid or sorted(GRIDS):
            k, shares = (GRIDS | OTHER_GRIDS)[grid]
            for n in args.sizes:
                counts = np.random.default_rng([2024, k, n]).multinomial(n, shares)  # the cell's data
                for epsilon in args.epsilons:
                    tasks = [
                        (grid, counts, epsilon, label, args.peer_repetitions, index)
                        for index, label in enumerate(PEERS)
                    ]
                    peers = pool.map(run_peer, tasks)
                    if args.peers_only:
                        continue
                    cells = [murmur_cell(grid, counts, epsilon, label, args.repetitions, rng) for label in MURMUR]
                    for c in sorted(cells + peers, key=lambda c: c.mean_max_error):
                        print(
                            f"| {c.grid} | {c.n} | {c.epsilon:g} | {c.implementation} | {100 * c.mean_max_error:.2f} "
                            f"| {100 * c.standard_error:.2f} | {c.seconds:.1f} |",
                            flush=True,
                        )
                    grid_peers.setdefault(grid, []).append(peers)
                    best_peer = held_out_best(peers)
                    murmur = dict(zip(MURMUR, cells, strict=True))
                    summary.append((grid, n, epsilon, murmur["Murmur auto"], *best_peer))
                    summary_eb.append((grid, n, epsilon, murmur["Murmur EB"], *best_peer))
                    summary_ibu.append((grid, n, epsilon, murmur["Murmur advisor (IBU)"], *best_peer))
                    summary_auto_ibu.append((grid, n, epsilon, murmur["Murmur auto-ibu"], *best_peer))
                    summary_avg.append((grid, n, epsilon, murmur["Murmur auto-ibu-avg"], *best_peer))
                    summary_even.append((grid, n, epsilon, murmur["Murmur auto-even"], *best_peer))
                    # The advisor's mechanism with whichever of auto, EB, Norm-Sub, clipping and IBU
                    # erred least in this cell: what a rule that knew the answers could at best reach.
                    oracle = min((murmur[label] for label in ORACLE), key=lambda c: c.mean_max_error)
                    summary_oracle.append((grid, n, epsilon, oracle, *best_peer))
    print()
    print(grid_summary(summary))
    print()
    print(grid_summary(summary_eb, "EB"))
    print()
    print(grid_summary(summary_ibu, "IBU"))
    print()
    print(grid_summary(summary_auto_ibu, "auto-ibu"))
    print()
    print(grid_summary(summary_avg, "auto-ibu-avg"))
    print()
    print(grid_summary(summary_even, "auto-even (opt-in)"))
    print()
    print("The best of auto, EB, Norm-Sub, clipping and IBU per cell (an oracle: no rule sees the true shares):")
    print()
    print(grid_summary(summary_oracle, "oracle"))
    single = {grid: held_out_single_peer(cells) for grid, cells in grid_peers.items()}
    print()
    print("Against the best single peer of each grid (", end="")
    print(", ".join(f"{grid}: {scored[0][0]}" for grid, scored in single.items()) + "):")
    print()
    per_cell = [peer for scored in single.values() for peer in scored]
    rows = [(*row[:4], *peer) for row, peer in zip(summary, per_cell, strict=True)]
    print(grid_summary(rows, against="best single peer"))
    print()
    rows = [(*row[:4], *peer) for row, peer in zip(summary_auto_ibu, per_cell, strict=True)]
    print(grid_summary(rows, "auto-ibu", against="best single peer"))
    print()
    rows = [(*row[:4], *peer) for row, peer in zip(summary_even, per_cell, strict=True)]
    print(grid_summary(rows, "auto-even", against="best single peer"))
    print()
    print(
        "| grid | n | ε | best peer (chosen on half A) | its error on half B (%) | Murmur auto (%) "
        "| auto / peer | within 1 SE or better |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---|")
    for grid, n, epsilon, auto, label, error, se in summary:
        ok = auto.mean_max_error <= error + np.hypot(se, auto.standard_error)
        print(
            f"| {grid} | {n} | {epsilon:g} | {label} | {100 * error:.2f} ± {100 * se:.2f} "
            f"| {100 * auto.mean_max_error:.2f} ± {100 * auto.standard_error:.2f} "
            f"| {auto.mean_max_error / error:.2f} | {'yes' if ok else 'no'} |"
        )


if __name__ == "__main__":
    main()
