"""Murmur against the peer LDP libraries' own implementations of the same mechanisms.

    make bench-peers          # builds bench/.venv-peers, then runs this module in it
    python -m bench.peers [--repetitions R] [--peer-repetitions R'] [--grid seed004|zipf20]

Peers, installed from PyPI into their own virtualenv (never vendored): pure-LDP 1.2.0 and
multi-freq-ldpy 0.2.5, which need numpy 2.2.x, xxhash 3.x, scikit-learn and statsmodels. Each
peer runs its own client (per respondent) and its own server estimator; its global numpy random
state is seeded per cell. Murmur's settings are simulated with the mechanisms' exact tally
samplers, which have the distribution of randomize-then-tally (tests/ldp/test_tally_sampling.py).

Grids: seed 004's (k = 5, uniform answers) and k = 20 with Zipf(1.1) answers; n in {500, 1000,
5000, 10000}; epsilon in {0.1, 0.5, 1, 2, 5}. Metric: mean over repetitions of the largest
absolute error over the options, with its standard error. One data set per (grid, n), shared.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ldp import make_mechanism
from ldp.estimators import estimate_proportions

SIZES = (500, 1000, 5000, 10000)
EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)


def zipf(k: int, exponent: float = 1.1) -> np.ndarray:
    weights = 1.0 / np.arange(1, k + 1) ** exponent
    return weights / weights.sum()


GRIDS = {"seed004": (5, np.full(5, 0.2)), "zipf20": (20, zipf(20))}

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
    "Murmur k-RR (Norm-Sub)": ("krr", "norm-sub"),
    "Murmur subset (clip)": ("subset", "clip"),
    "Murmur subset (Norm-Sub)": ("subset", "norm-sub"),
    "Murmur OUE (Norm-Sub)": ("oue", "norm-sub"),
    "Murmur OLH (Norm-Sub)": ("olh", "norm-sub"),
    "Murmur Hadamard (Norm-Sub)": ("hadamard", "norm-sub"),
}


@dataclass(frozen=True)
class Cell:
    grid: str
    n: int
    epsilon: float
    implementation: str
    mean_max_error: float
    standard_error: float
    seconds: float


def murmur_cell(
    grid: str, counts: np.ndarray, epsilon: float, label: str, repetitions: int, rng: np.random.Generator
) -> Cell:
    started = time.perf_counter()
    name, estimator = MURMUR[label]
    mechanism = make_mechanism(name, k=counts.size, epsilon=epsilon)
    n = int(counts.sum())
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
        grid, n, epsilon, label, errors.mean(), errors.std(ddof=1) / np.sqrt(repetitions), time.perf_counter() - started
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=2000, help="Murmur's repetitions per cell")
    parser.add_argument("--peer-repetitions", type=int, default=100, help="each peer's repetitions per cell")
    parser.add_argument("--grid", choices=sorted(GRIDS), action="append")
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    args = parser.parse_args()
    peers = {**multi_freq_ldpy(), **pure_ldp()}
    rng = np.random.default_rng(2024)
    print("| grid | n | ε | implementation | mean max error (%) | ± SE | seconds |")
    print("|---|---:|---:|---|---:|---:|---:|")
    for grid in args.grid or sorted(GRIDS):
        k, shares = GRIDS[grid]
        for n in args.sizes:
            counts = rng.multinomial(n, shares)
            for epsilon in EPSILONS:
                cells = [murmur_cell(grid, counts, epsilon, label, args.repetitions, rng) for label in MURMUR]
                cells += [
                    peer_cell(grid, counts, epsilon, label, peer, args.peer_repetitions, seed=index)
                    for index, (label, peer) in enumerate(peers.items())
                ]
                for c in sorted(cells, key=lambda c: c.mean_max_error):
                    print(
                        f"| {c.grid} | {c.n} | {c.epsilon:g} | {c.implementation} | {100 * c.mean_max_error:.2f} "
                        f"| {100 * c.standard_error:.2f} | {c.seconds:.1f} |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
