"""A set of reports' sufficient statistics, the one data type every family of mechanism tallies into.

Its own module, importing nothing of ``ldp``, so that :mod:`ldp.families` (the families' protocols)
and :mod:`ldp.mechanisms.base` (which re-exports it) can both name it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Tally"]


@dataclass(frozen=True, eq=False)
class Tally:
    """Sufficient statistics of a set of reports: their number and integer counts.

    Tallies of disjoint sets of reports add up to the tally of their union, so aggregates
    can be kept incrementally and merged.

    >>> (Tally(2, np.array([1, 1])) + Tally(1, np.array([0, 1]))).counts.tolist()
    [1, 2]
    """

    n: int
    counts: np.ndarray
    profile: np.ndarray | None = None
    """Optional histogram of the reports' weights (:func:`ldp.integrity.weight_profile`), for the
    integrity tests; it may count only some of the reports (those stored since it was kept)."""

    def __add__(self, other: Tally) -> Tally:
        if self.counts.shape != other.counts.shape:
            raise ValueError(f"cannot add tallies of shapes {self.counts.shape} and {other.counts.shape}")
        profile = None
        if self.profile is not None and other.profile is not None and self.profile.shape == other.profile.shape:
            profile = self.profile + other.profile
        return Tally(self.n + other.n, self.counts + other.counts, profile)
