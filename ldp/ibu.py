"""The iterative Bayesian update on support counts ("ibu"), shared by :mod:`ldp.estimators` and
:mod:`ldp.selection` (which picks among estimators, IBU one of them).

Agrawal and Aggarwal 2001 (ref. 1 of ldp.estimators); multi-freq-ldpy's IBU (ref. 6).
"""

from __future__ import annotations

import numpy as np

from ldp.mechanisms import Mechanism, OptimizedUnaryEncoding, SymmetricUnaryEncoding

#: Mechanisms whose tally counts, per option, the reports that support it, with a response matrix
#: A = (a - b) I + b: :func:`support_bayesian_update` applies to them.
SUPPORT_COUNT_MECHANISMS = ("krr", "sue", "oue", "olh", "subset")


def support_counts(mechanism: Mechanism, rows: np.ndarray) -> tuple[np.ndarray, float, float]:
    """(per-option support counts, P(support | own answer), P(support | another answer))."""
    if isinstance(mechanism, (SymmetricUnaryEncoding, OptimizedUnaryEncoding)):
        # The tally is (times each bit was sampled, times it was 1); a full unary encoding samples
        # every bit of every report, so the second half counts the supports.
        return rows[:, mechanism.k :], mechanism.true_bit_probability, mechanism.other_bit_probability
    if mechanism.name in SUPPORT_COUNT_MECHANISMS:
        response = mechanism.response_matrix
        return rows, float(response[0, 0]), float(response[0, 1])
    raise ValueError(f"{mechanism.name} does not tally support counts; ibu needs one of {SUPPORT_COUNT_MECHANISMS}")


def support_bayesian_update(
    mechanism: Mechanism, counts: np.ndarray, *, iterations: int = 10_000, tolerance: float = 1e-12
) -> np.ndarray:
    """Shares by the iterative Bayesian update on support counts (``"ibu"``), on the simplex.

    With s_v = c_v / sum(c) the share of all supports that went to option v and A the response
    matrix (E[c_v / n] = (A f)_v), whose columns all sum to the same c (each report supports c
    options on average), the supports are read as draws from Mult(sum(c), A f / c) and EM iterates
    (Agrawal and Aggarwal 2001, ref. 1; multi-freq-ldpy's IBU, ref. 6)

        f <- f * (A / c)^T (s / ((A / c) f)),

    from the evenly spread f, until no share moves by more than ``tolerance`` or after
    ``iterations`` steps. Every step keeps f on the simplex. For k-RR (c = 1, the tally is the
    multinomial of the reports) this is :func:`maximum_likelihood`; for SUE/OUE, OLH and subset
    selection a pseudo-likelihood, consistent (its fixed point at the expected counts is the
    true f) but not the reports' likelihood. With few reports the step cap is reached before
    convergence, which stops short of the likelihood's boundary maximum: a mild pull toward the
    evenly spread start (so, like every consistent estimate, biased at small n; the bias vanishes
    as n grows, tests/ldp/test_support_bayesian_update.py). A = (a - b) I + b makes each step O(k).

    >>> from ldp import make_mechanism
    >>> m = make_mechanism("oue", k=3, epsilon=1.0)
    >>> p, q = m.true_bit_probability, m.other_bit_probability
    >>> ones = 1000 * (((p - q) * np.eye(3) + q) @ np.array([0.6, 0.3, 0.1]))
    >>> support_bayesian_update(m, np.r_[np.full(3, 1000), ones]).round(6).tolist()
    [0.6, 0.3, 0.1]
    """
    supports, diagonal, other = support_counts(mechanism, np.atleast_2d(np.asarray(counts, dtype=float)))
    k = mechanism.k
    column = diagonal + (k - 1) * other
    a, b = diagonal / column, other / column  # A / c = (a - b) I + b, columns summing to 1
    single = np.ndim(counts) == 1
    totals = supports.sum(axis=1, keepdims=True)
    # A tally with no support at all (possible for the unary encodings with a handful of reports)
    # says nothing about the shares: it stays at the evenly spread start.
    s = np.divide(supports, totals, out=np.full(supports.shape, 1.0 / k), where=totals > 0)
    f = np.full(supports.shape, 1.0 / k)
    active = np.arange(len(f))  # rows still moving: each row stops on its own, as if alone
    for _ in range(iterations):
        g, t = f[active], s[active]
        ratio = t / ((a - b) * g + b)  # s / ((A / c) f), as f sums to 1; b > 0 keeps it finite
        updated = g * ((a - b) * ratio + b * ratio.sum(axis=1, keepdims=True))
        moving = np.max(np.abs(updated - g), axis=1) >= tolerance
        f[active] = updated
        active = active[moving]
        if active.size == 0:
            break
    return f[0] if single else f
