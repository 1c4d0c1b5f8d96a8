"""Per answer shape: "auto" and the opt-in choosers against the shape's best fixed estimator (Murmur only).

    python -m bench.estimator_shapes [--repetitions R] [--options 5 20] [--rows auto auto-ibu-avg]

For each shape of bench.peers.SHAPES, the cells k in --options, n in {1,000, 10,000}, epsilon in
{0.1, 1, 5}, the advisor's mechanism; every estimator scores the same tallies (paired). The best
fixed estimator of a shape is the one of Norm-Sub, clip and EB with the lowest mean over the cells
of its error divided by the cell's best fixed error; each row's mean ratio to it, its paired
standard error (bench.peers.paired_ratios) and, in brackets, the cells it loses by more than 2 SE.
The table in docs/benchmarks-peers.md ("choosing the estimator by Stein's unbiased risk estimate").
"""

from __future__ import annotations

import argparse

import numpy as np

from bench.peers import SHAPES, floor, paired_ratios
from ldp import make_mechanism
from ldp.advisor import recommend
from ldp.estimators import estimate_proportions

FIXED = ("norm-sub", "clip", "eb")
ROWS = ("auto", "auto-even", "sure", "sure-largest", "auto-ibu", "auto-ibu-avg")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=20)
    parser.add_argument("--options", type=int, nargs="*", default=[5, 20])
    parser.add_argument("--rows", nargs="*", choices=ROWS, default=list(ROWS), help="the choosers to score")
    args = parser.parse_args()
    rows = tuple(args.rows)
    print("| answers | best fixed | " + " | ".join(rows) + " |")
    print("|---|---|" + "---|" * len(rows))
    for shape in SHAPES:
        cells = []
        for k in args.options:
            for n in (1000, 10_000):
                counts = np.random.default_rng([29, k, n]).multinomial(n, SHAPES[shape](k))
                for epsilon in (0.1, 1.0, 5.0):
                    best = recommend(k, epsilon, n).best
                    mechanism = make_mechanism(best.mechanism, k=k, epsilon=epsilon, **best.params)
                    rng = np.random.default_rng([29, k, n, int(10 * epsilon)])
                    tallies = mechanism.sample_tallies(counts, args.repetitions, rng=rng)
                    names = [e for e in (*rows, *FIXED) if not (e == "eb" and k < 3)]
                    errors = {
                        e: np.abs(estimate_proportions(mechanism, tallies, n, e) - counts / n).max(axis=1)
                        for e in names
                    }
                    cells.append(((k, n, epsilon), errors))
        fixed = [f for f in FIXED if all(f in e for _, e in cells)]
        scores = {
            f: np.mean([floor(e[f].mean()) / floor(min(e[g].mean() for g in fixed)) for _, e in cells]) for f in fixed
        }
        chosen = min(scores, key=scores.__getitem__)
        parts = []
        for row in rows:
            ratios, ses = paired_ratios(cells, row, chosen)
            losing = int(np.sum(ratios - 2 * ses > 1))
            parts.append(f"{ratios.mean():.3f} ± {np.sqrt(np.sum(ses**2)) / ratios.size:.3f} ({losing})")
        print(f"| {shape} | {chosen} | " + " | ".join(parts) + " |", flush=True)


if __name__ == "__main__":
    main()
