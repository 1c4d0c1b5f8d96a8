"""Consistent post-processing: the two ways of moving an estimate onto the probability simplex.

An unbiased frequency estimate may have negative entries and need not sum to 1. Making it
*consistent* (non-negative, summing to 1) never costs privacy: it touches only the aggregate.
:func:`project_onto_simplex` is Norm-Sub, :func:`clip_and_renormalize` what most LDP libraries
do; :mod:`ldp.consistency` chooses between them.

References
----------
1. T. Wang, M. Lopuhaa-Zwakenberg, Z. Li, B. Skoric, N. Li. "Locally differentially private
   frequency estimation with consistency." NDSS 2020. (Norm-Sub, clip-and-renormalize.)
2. W. Wang, M. A. Carreira-Perpinan. "Projection onto the probability simplex: an efficient
   algorithm with a simple proof." arXiv:1309.1541, 2013.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["clip_and_renormalize", "project_onto_simplex"]


def project_onto_simplex(values: ArrayLike) -> np.ndarray:
    """Euclidean projection onto the probability simplex {f : f >= 0, sum f = 1}, per last-axis row.

    The result is max(values - tau, 0) with the one tau that makes it sum to 1. This is
    exactly Norm-Sub of Wang et al. (2020, ref. 1) on a full domain: subtract the same amount
    from every positive entry and zero the negatives until the rest sums to 1. Computed by
    sorting (Wang and Carreira-Perpinan 2013, ref. 2), O(k log k) per row.

    >>> project_onto_simplex([0.7, 0.5, -0.2]).round(12).tolist()
    [0.6, 0.4, 0.0]
    >>> project_onto_simplex([[0.7, 0.5, -0.2], [2.0, 0.0, 0.0]]).round(12).tolist()
    [[0.6, 0.4, 0.0], [1.0, 0.0, 0.0]]
    """
    v = _rows(values)
    descending = -np.sort(-v, axis=-1)
    cumulative = np.cumsum(descending, axis=-1) - 1.0
    ranks = np.arange(1, v.shape[-1] + 1)
    rho = np.sum(descending - cumulative / ranks > 0, axis=-1, keepdims=True)  # the support is a prefix
    tau = np.take_along_axis(cumulative, rho - 1, axis=-1) / rho
    return np.maximum(v - tau, 0.0)


def clip_and_renormalize(values: ArrayLike) -> np.ndarray:
    """Set negative entries to 0 and divide by the sum (uniform if nothing is positive), per last-axis row.

    Simple, and what most LDP libraries do, but it shrinks every large entry by the same
    factor, which biases skewed distributions; :func:`project_onto_simplex` does not.

    >>> clip_and_renormalize([0.6, 0.6, -0.2]).tolist()
    [0.5, 0.5, 0.0]
    """
    v = np.clip(_rows(values), 0.0, None)
    total = v.sum(axis=-1, keepdims=True)
    uniform = np.full_like(v, 1.0 / v.shape[-1])
    return np.divide(v, total, out=uniform, where=total > 0)


def _rows(values: ArrayLike) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    if v.ndim not in (1, 2) or v.shape[-1] == 0:
        raise ValueError(f"values must be a non-empty 1-d array or a stack of rows, got shape {v.shape}")
    return v
