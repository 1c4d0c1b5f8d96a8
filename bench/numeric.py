"""Throughput of each numeric mechanism's server aggregation, at 1,000,000 reports.

    python -m bench.numeric [--reports N] [--repeat R] [--epsilon E]

Server aggregation = what the results page does with stored numeric reports: read the packed
reports (concatenated bytes, the stored form), tally them (an integer count per report index:
the cells kept in the database) and estimate the mean with its standard error. Randomization =
the vectorized simulation of the browsers' work. Each phase is timed R times (best time
reported), as in ``bench.mechanisms``.
"""

from __future__ import annotations

import numpy as np

from bench.mechanisms import arguments, measure
from ldp.numeric import make_numeric_mechanism

SETTINGS = [
    ("Laplace (discrete)", "laplace", {}),
    ("Gaussian (μ-GDP, δ = 1e-5)", "gaussian", {"delta": 1e-5}),
    ("1BitMean", "1bitmean", {}),
    ("Duchi et al.", "duchi", {}),
    ("Piecewise", "piecewise", {}),
    ("Hybrid", "hybrid", {}),
]


def main() -> None:
    args, machine = arguments(__doc__.splitlines()[0])
    n = args.reports
    print(f"{n:,} reports on [0, 100], epsilon = {args.epsilon}; {machine}, numpy {np.__version__}")
    print("| mechanism | report bytes | server reports/s | server peak MiB | randomize reports/s |")
    print("|---|---:|---:|---:|---:|")
    values = np.random.default_rng(0).uniform(0, 100, size=n)
    for label, name, params in SETTINGS:
        mechanism = make_numeric_mechanism(name, lo=0, hi=100, epsilon=args.epsilon, **params)
        stored = mechanism.randomize(values, rng=1).tobytes()

        def server(mechanism=mechanism, stored=stored):
            return mechanism.estimate(mechanism.tally(mechanism.unpack_many(stored)))

        def randomize(mechanism=mechanism):
            return mechanism.randomize(values, rng=2)

        server_time, server_peak = measure(server, args.repeat)
        randomize_time, _ = measure(randomize, 1)
        print(
            f"| {label} | {mechanism.report_width} | {n / server_time:,.0f} | {server_peak / 2**20:,.1f} "
            f"| {n / randomize_time:,.0f} |"
        )


if __name__ == "__main__":
    main()
