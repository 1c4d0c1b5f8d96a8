"""Run the experiments: python -m ldp.experiments [survey|substitution|central|...|simultaneous|all].

Full repetitions by default (seed 004: 3000; seed 001: 10; seed 002: 10,000 and 20 Modips runs;
coverage of Murmur's bands: 2000; consistency adjustments: 200; numeric mean estimation: 2000;
poisoning: 500 per attack, 2000 per false-alarm row; free text with RAPPOR and CMS: 50 surveys per
size, and 100,000 simulated observers per round; multi-select: 200, cross-tabs: 500; simultaneous
bands: 2000; adaptive two-phase designs: 100);
``--quick`` divides them by 10 for a run of about a minute. Results go to ``--out``
(docs/experiments by default): CSV tables and PNG figures.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ldp.experiments import (
    adaptive,
    adjustment,
    central,
    coverage,
    multiselect,
    numeric,
    poisoning,
    rappor,
    sampling,
    simultaneous,
    substitution,
    survey,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "experiment",
        choices=[
            "survey",
            "substitution",
            "central",
            "coverage",
            "adjustment",
            "numeric",
            "poisoning",
            "rappor",
            "multiselect",
            "simultaneous",
            "adaptive",
            "sampling",
            "all",
        ],
        nargs="?",
        default="all",
    )
    parser.add_argument("--out", type=Path, default=Path("docs/experiments"))
    parser.add_argument("--quick", action="store_true", help="a tenth of the repetitions")
    parser.add_argument("--large-k", action="store_true", help="adjustment: the large-k grid, k from 2 to 256")
    parser.add_argument("--repetitions", type=int, help="override the experiment's repetitions")
    parser.add_argument("--options", type=int, nargs="*", help="adjustment, adaptive: only these k")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    everything = [
        *("survey", "substitution", "central", "coverage", "adjustment", "numeric", "poisoning", "rappor"),
        *("multiselect", "simultaneous", "adaptive", "sampling"),
    ]
    chosen = everything if args.experiment == "all" else [args.experiment]
    for name in chosen:
        started = time.perf_counter()
        if name == "survey":
            survey.run(args.out, repetitions=3000 // scale)
        elif name == "substitution":
            substitution.run(args.out, repetitions=max(1, substitution.REPETITIONS // scale))
        elif name == "coverage":
            coverage.run(args.out, repetitions=2000 // scale)
        elif name == "numeric":
            print(numeric.markdown(numeric.run(args.out, repetitions=2000 // scale)))
        elif name == "poisoning":
            print(poisoning.report(args.out, repetitions=500 // scale))
        elif name == "rappor":
            print(rappor.markdown(*rappor.run(args.out, repetitions=50 // scale, attackers=100_000 // scale)))
        elif name == "multiselect":
            print(multiselect.markdown_multiselect(multiselect.run_multiselect(args.out, repetitions=200 // scale)))
            print(multiselect.markdown_crosstab(multiselect.run_crosstab(args.out, repetitions=500 // scale)))
        elif name == "sampling":
            print(sampling.markdown(sampling.run(args.out, repetitions=40 // scale or 1)))
        elif name == "simultaneous":
            print(simultaneous.markdown(simultaneous.run(args.out, repetitions=2000 // scale)))
        elif name == "adaptive":
            options = tuple(args.options) if args.options else adaptive.OPTIONS
            print(adaptive.markdown(adaptive.run(args.repetitions or 100 // scale, args.out, options)))
        elif name == "adjustment":
            grid = dict(adjustment.LARGE_K_GRID if args.large_k else {})
            if args.options:
                grid["options"] = tuple(args.options)
            out = args.out / "large-k" if args.large_k else args.out
            rows = adjustment.run(out, repetitions=args.repetitions or 200 // scale, grid=grid)
            print(adjustment.markdown(rows))
        else:
            central.run(args.out, repetitions=central.REPETITIONS // scale, modips_repetitions=max(2, 20 // scale))
        print(f"{name}: {time.perf_counter() - started:.0f} s -> {args.out}")


if __name__ == "__main__":
    main()
