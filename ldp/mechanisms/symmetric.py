"""Covariance algebra of the mechanisms whose response matrix is symmetric, in O(k) or O(k^2).

For A = (p - q) I + q 11^T (k-RR, subset selection, local hashing, Hadamard response) the
inverse has the same form (:func:`symmetric_inverse`, Sherman-Morrison), so the estimate's
covariance and variances need no k x k inversion (``Mechanism`` is :class:`ldp.mechanisms.base.Mechanism`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "symmetric_covariance",
    "symmetric_inverse",
    "symmetric_report_variances",
    "symmetric_uniform_variance",
    "symmetric_unit_variances",
]


def symmetric_covariance(
    response: np.ndarray, frequencies: np.ndarray, with_answer: float, without_answer: float
) -> np.ndarray:
    """Sigma(f) for 0/1 statistics z_v = [v is named by the report] with symmetric structure.

    For mechanisms where P(z_v = z_v' = 1 | answer t) is ``with_answer`` when t is v or v', and
    ``without_answer`` otherwise (subset selection, local hashing), averaging over t ~ f gives
    diagonal A f, off-diagonal with (f_v + f_v') + without (1 - f_v - f_v'), minus A diag(f) A^T.
    """
    f = frequencies
    pair = with_answer * (f[:, None] + f[None, :]) + without_answer * (1 - f[:, None] - f[None, :])
    np.fill_diagonal(pair, response @ f)
    return pair - (response * f) @ response.T


def symmetric_inverse(diagonal: float, off_diagonal: float, k: int) -> tuple[float, float]:
    """(a, b) with (a I + b 11^T) = A^-1 for A = (p - q) I + q 11^T, p = ``diagonal``, q = ``off_diagonal``.

    Sherman-Morrison: a = 1 / (p - q), b = -q / ((p - q)(p - q + k q)).

    >>> symmetric_inverse(0.75, 0.25, 2)
    (2.0, -0.5)
    """
    alpha = diagonal - off_diagonal
    return 1.0 / alpha, -off_diagonal / (alpha * (alpha + k * off_diagonal))


def symmetric_report_variances(
    diagonal: float, off_diagonal: float, with_answer: float, without_answer: float, frequencies: np.ndarray
) -> np.ndarray:
    """diag(A^-1 Sigma(f) A^-T) in O(k), for A = (p - q) I + q 11^T and Sigma of :func:`symmetric_covariance`.

    With A^-1 = a I + b 11^T (:func:`symmetric_inverse`) and P = Sigma(f) + A diag(f) A^T the second
    moment of z (diagonal A f; off-diagonal with (f_v + f_v') + without (1 - f_v - f_v')), and since
    A^-1 A diag(f) A^T A^-T = diag(f),

        Var_v = a^2 P_vv + 2 a b (P 1)_v + b^2 1^T P 1 - f_v,

    (P 1)_v = (A f)_v + with ((k - 2) f_v + F) + without ((k - 1) - (k - 2) f_v - F),  F = sum f.
    k-RR is the case with = without = 0 (one option per report).

    >>> symmetric_report_variances(0.75, 0.25, 0.0, 0.0, np.array([0.5, 0.5])).tolist()
    [0.75, 0.75]
    """
    f = np.asarray(frequencies, dtype=float)
    k, total = f.size, float(f.sum())
    a, b = symmetric_inverse(diagonal, off_diagonal, k)
    own = (diagonal - off_diagonal) * f + off_diagonal * total
    rows = own + with_answer * ((k - 2) * f + total) + without_answer * ((k - 1) - (k - 2) * f - total)
    return a * a * own + 2 * a * b * rows + b * b * rows.sum() - f


def symmetric_uniform_variance(
    diagonal: ArrayLike, off_diagonal: ArrayLike, with_answer: ArrayLike, without_answer: ArrayLike, k: int
) -> np.ndarray:
    """:func:`symmetric_report_variances` at f = 1/k, the same for every option; vectorized over settings.

    There (A f)_v = (p + (k - 1) q) / k, (P 1)_v = (A f)_v + 2 with (k - 1)/k + without (k - 1)(k - 2)/k
    and 1^T P 1 = k (P 1)_v.

    >>> float(symmetric_uniform_variance(0.75, 0.25, 0.0, 0.0, 2))
    0.75
    """
    p, q = np.asarray(diagonal, dtype=float), np.asarray(off_diagonal, dtype=float)
    alpha = p - q
    a, b = 1.0 / alpha, -q / (alpha * (alpha + k * q))
    own = (p + (k - 1) * q) / k
    rows = own + 2 * np.asarray(with_answer) * (k - 1) / k + np.asarray(without_answer) * (k - 1) * (k - 2) / k
    return a * a * own + 2 * a * b * rows + b * b * k * rows - 1.0 / k


def symmetric_unit_variances(
    diagonal: float, off_diagonal: float, with_answer: float, without_answer: float, k: int
) -> np.ndarray:
    """V[v, t] of :attr:`Mechanism.unit_variances` in O(k^2) for the structure of :func:`symmetric_report_variances`.

    With B = A^-1 = a I + b 11^T, s = a + k b (row sums of B), r = (a + b)^2 + (k - 1) b^2 (row sums
    of squares) and the one-answer second moment P_t = without (11^T - I) + (with - without)
    (e_t 1^T + 1 e_t^T - 2 e_t e_t^T) + diag(A e_t):

        (B P_t B)_vv = without (s^2 - r) + 2 (with - without)(B_vt s - B_vt^2) + (p - q) B_vt^2 + q r,

    and V = that - I.
    """
    a, b = symmetric_inverse(diagonal, off_diagonal, k)
    inverse = b + a * np.eye(k)
    s, r = a + k * b, (a + b) ** 2 + (k - 1) * b * b
    second = (
        without_answer * (s * s - r)
        + 2 * (with_answer - without_answer) * (inverse * s - inverse**2)
        + (diagonal - off_diagonal) * inverse**2
        + off_diagonal * r
    )
    return second - np.eye(k)
