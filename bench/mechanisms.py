"""Throughput of each mechanism: the server's work and the simulation's, at 1,000,000 reports.

    python -m bench.mechanisms [--reports N] [--repeat R]

Server work = what the results page does with stored reports: read the packed reports
(concatenated bytes, the stored form), tally them, estimate. Simulation work = randomize
true answers into packed reports. Each phase is timed R times (best time reported) and its
peak memory is traced with tracemalloc, which numpy reports its buffers to.
"""

from __future__ import annotations

import argparse
import platform
import time
import tracemalloc
from collections.abc import Callable

import numpy as np

from ldp import make_mechanism

SETTINGS = [
    ("k-RR", "krr", {}),
    ("CMS (512 hashes, m = 128)", "cms", {"hash_count": 512, "width": 128}),
    ("4BitFlip", "dbitflip", {"d": 4}),
    ("5BitFlip", "dbitflip", {"d": 5}),
]


def measure(work: Callable[[], object], repeat: int) -> tuple[float, int]:
    """Best wall time over ``repeat`` runs, and the peak traced memory of one run."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    tracemalloc.start()
    work()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return best, peak


def arguments(description: str) -> tuple[argparse.Namespace, str]:
    """The aggregation benchmarks' options (--reports, --repeat, --epsilon) and the machine's name."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--reports", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--epsilon", type=float, default=1.0)
    return parser.parse_args(), platform.processor() or platform.machine()


def main() -> None:
    args, machine = arguments(__doc__.splitlines()[0])
    n = args.reports
    print(f"{n:,} reports, k = 5, epsilon = {args.epsilon}; {machine}, numpy {np.__version__}")
    print("| mechanism | server reports/s | server peak MiB | perturb reports/s | perturb peak MiB |")
    print("|---|---:|---:|---:|---:|")
    truth = np.random.default_rng(0).integers(0, 5, size=n)
    for label, name, params in SETTINGS:
        mechanism = make_mechanism(name, k=5, epsilon=args.epsilon, **params)
        stored = mechanism.randomize(truth, rng=1).tobytes()

        def server(mechanism=mechanism, stored=stored):
            return mechanism.estimate(mechanism.tally(mechanism.unpack_many(stored)))

        def perturb(mechanism=mechanism):
            return mechanism.randomize(truth, rng=2)

        server_time, server_peak = measure(server, args.repeat)
        perturb_time, perturb_peak = measure(perturb, args.repeat)
        print(
            f"| {label} | {n / server_time:,.0f} | {server_peak / 2**20:,.1f} "
            f"| {n / perturb_time:,.0f} | {perturb_peak / 2**20:,.1f} |"
        )


if __name__ == "__main__":
    main()
