"""Reproductions of the source documents' experiments (``python -m ldp.experiments --help``).

survey: seed 004's survey experiment (Fig. 15, Fig. 16, Table 2), with k-RR and Murmur's
estimators added and the advisor checked against it. substitution: seed 001's random-substitution
experiments (Fig. 4-6). central: seed 002's central-DP utility study (Laplace, Gaussian and
Gaussian-DP noise; Modips). numeric: mean estimation on a numeric question with every numeric
mechanism against the analytic variances and Wang et al.'s Duchi/Piecewise crossover.

The computations use numpy and scipy only; figures are drawn with matplotlib, imported only by
the functions that draw them.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from ldp.estimators import estimate_proportions
from ldp.mechanisms import CountMeanSketch, Mechanism, Tally

__all__ = ["estimates_from_tallies", "write_rows"]


def estimates_from_tallies(mechanism: Mechanism, counts: np.ndarray, n: int, estimator: str = "unbiased") -> np.ndarray:
    """Estimated proportions for a stack of tally counts, shape (repetitions, k).

    ``estimator`` is one of :data:`ldp.estimators.ESTIMATORS`, or, for CMS, ``"sketch"`` (the
    paper's Fig. 7 formula, kept to reproduce seed 004).
    """
    if estimator == "sketch":
        if not isinstance(mechanism, CountMeanSketch):
            raise ValueError(f"the sketch estimator is CMS's, not {mechanism.name}'s")
        return mechanism.sketch_estimate(Tally(n, counts))
    return estimate_proportions(mechanism, counts, n, estimator)


def write_rows(path: Path, rows: Sequence[Any]) -> None:
    """Write an experiment's dataclass rows to ``path`` as CSV, one column per field."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(asdict(rows[0])))
        writer.writeheader()
        writer.writerows(asdict(r) for r in rows)
