"""Mean-estimation mechanisms for numeric questions, behind :class:`~ldp.numeric.base.NumericMechanism`.

Every mechanism rounds the value to a grid, reports one integer index drawn from integer
weights (so the epsilon guarantee holds for the reports actually sent), tallies the count of
each index, and estimates the mean without bias (:mod:`ldp.numeric.base`).
``make_numeric_mechanism`` builds one from a name and JSON-serializable parameters.

>>> import numpy as np
>>> m = make_numeric_mechanism("piecewise", lo=0, hi=10, epsilon=2.0)
>>> estimate = m.estimate(m.tally(m.randomize(np.full(20_000, 7.0), rng=1)))
>>> bool(abs(estimate.mean - 7) < 4 * estimate.standard_error)
True
"""

from __future__ import annotations

from typing import Any

from ldp.families import names
from ldp.numeric.base import MeanEstimate, MeanInterval, NumericMechanism
from ldp.numeric.gaussian import GaussianMean
from ldp.numeric.laplace import LaplaceMean
from ldp.numeric.one_bit import DuchiMean, OneBitMean
from ldp.numeric.piecewise import HybridMean, PiecewiseMean

__all__ = [
    "NUMERIC_MECHANISMS",
    "DuchiMean",
    "GaussianMean",
    "HybridMean",
    "LaplaceMean",
    "MeanEstimate",
    "MeanInterval",
    "NumericMechanism",
    "OneBitMean",
    "PiecewiseMean",
    "make_numeric_mechanism",
]

_CLASSES: dict[str, type[NumericMechanism]] = {
    cls.name: cls for cls in (LaplaceMean, GaussianMean, OneBitMean, DuchiMean, PiecewiseMean, HybridMean)
}
#: The "mean" family of :data:`ldp.registry.NAMES`, name to class.
NUMERIC_MECHANISMS: dict[str, type[NumericMechanism]] = {name: _CLASSES[name] for name in names("mean")}


def make_numeric_mechanism(name: str, lo: float, hi: float, epsilon: float, **params: Any) -> NumericMechanism:
    """Build the numeric mechanism called ``name`` for values in [lo, hi] at budget epsilon.

    >>> make_numeric_mechanism("laplace", lo=0, hi=10, epsilon=1.0, grid=10).params()
    {'grid': 10}
    """
    try:
        cls = NUMERIC_MECHANISMS[name]
    except KeyError:
        raise ValueError(f"mechanism must be one of {sorted(NUMERIC_MECHANISMS)}, got {name!r}") from None
    return cls(lo=lo, hi=hi, epsilon=epsilon, **params)  # type: ignore[call-arg]  # dataclasses of lo, hi, epsilon
