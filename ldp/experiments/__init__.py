"""Reproductions of the source documents' experiments (``python -m ldp.experiments --help``).

survey: seed 004's survey experiment (Fig. 15, Fig. 16, Table 2), with k-RR and Murmur's
estimators added and the advisor checked against it. substitution: seed 001's random-substitution
experiments (Fig. 4-6). central: seed 002's central-DP utility study (Laplace, Gaussian and
Gaussian-DP noise; Modips).

The computations use numpy and scipy only; figures are drawn with matplotlib, imported only by
the functions that draw them.
"""

from __future__ import annotations

import numpy as np

from ldp.estimates import project_onto_simplex
from ldp.mechanisms import Mechanism, Tally

__all__ = ["estimates_from_tallies"]


def estimates_from_tallies(mechanism: Mechanism, counts: np.ndarray, n: int, estimator: str = "unbiased") -> np.ndarray:
    """Estimated proportions for a stack of tally counts, shape (repetitions, k).

    ``estimator``: ``"unbiased"`` (A^-1 z_bar), ``"norm-sub"`` (its simplex projection), or, for
    CMS, ``"sketch"`` (the paper's Fig. 7 formula).
    """
    tally = Tally(n, counts)
    if estimator == "sketch":
        return mechanism.sketch_estimate(tally)  # type: ignore[attr-defined]
    unbiased = mechanism.observed_mean(tally) @ np.linalg.inv(mechanism.response_matrix).T
    if estimator == "unbiased":
        return unbiased
    if estimator == "norm-sub":
        return np.apply_along_axis(project_onto_simplex, 1, unbiased)
    raise ValueError(f"estimator must be unbiased, norm-sub or sketch, got {estimator!r}")
