"""Consistent estimators beyond projection, and error bands that keep their coverage.

* :func:`maximum_likelihood`: the MLE of f on the probability simplex by EM, the iterative
  Bayesian update (Agrawal and Aggarwal 2001), for mechanisms whose tally counts every possible
  report (k-RR; Hadamard response): there the tally is multinomial, counts ~ Mult(n, P f) with
  P[y, t] = P(report y | answer t), and EM iterates f <- f * P^T (counts / (P f)) / n.
* :func:`support_bayesian_update` (``"ibu"``): the same update on the per-option support counts
  of the mechanisms that tally them (k-RR, SUE/OUE, OLH, subset selection), the estimator
  multi-freq-ldpy calls IBU (ref. 6): the supports are read as draws from a multinomial with cell
  probabilities proportional to A f. For k-RR it is the MLE; for the others a pseudo-likelihood
  (each report supports several options, and their dependence is ignored).
* :func:`empirical_bayes` (``"eb"``): posterior means under the shares' fitted distribution.
* ``"cross-fit"``: per tally, whichever of Norm-Sub, clipping, ``"eb"`` and ``"ibu"`` has the
  smallest error estimated by splitting the tally's reports in two (:mod:`ldp.selection`).
* ``"sure"`` (``"sure-largest"``): per tally, whichever of Norm-Sub, clipping and ``"eb"`` has the
  smallest Stein's unbiased risk estimate (of the largest error) (:mod:`ldp.sure`; not the default).
* ``"auto-ibu"``: ``"auto"``, but at 33-64 options with a support-count tally a sharper evenness
  test and IBU where it rejects (:mod:`ldp.large_k`; not yet the pages' default); ``"auto-ibu-avg"``
  the same with the mean of IBU's and Norm-Sub's estimates where it rejects (opt-in).
* ``"auto-even"``: ``"auto"``, its ``"eb"`` shares at 5-32 options averaged with evenly spread answers
  by the posterior probability that the answers are even (:mod:`ldp.even_shrinkage`; opt-in).
* ``"auto"``: the results pages' default, per tally: ``"eb"`` when 5 <= k <= 64 and a chi-square
  test does not reject evenly spread answers (:func:`~ldp.consistency.evenness_p_value`), else Norm-Sub or
  clip-and-renormalize, chosen by a parametric bootstrap of the largest error
  (:func:`~ldp.consistency.choose_consistency`); :meth:`~ldp.mechanisms.Mechanism.automatic_consistency`.
* :func:`~ldp.intervals.score_interval` (re-exported here): error bands for consistent estimates.
  Consistent estimates are biased near the simplex boundary, so "estimate +/- z SE" loses
  coverage there (so does a basic parametric bootstrap: 54-77 % for shares of 2.5-7.5 % at
  n = 1000, measured); inverting the unbiased estimate's test, with the variance evaluated at
  each candidate share, does not.

References
----------
1. D. Agrawal, C. C. Aggarwal. "On the design and quantification of privacy preserving data
   mining algorithms." PODS 2001. (Iterative Bayesian update.)
2. T. Wang, M. Lopuhaa-Zwakenberg, Z. Li, B. Skoric, N. Li. "Locally differentially private
   frequency estimation with consistency." NDSS 2020.
3. E. B. Wilson. "Probable inference, the law of succession, and statistical inference." JASA 22,
   1927. (The score interval, here for the mechanisms' analytic variances.)
4. W. Jiang, C.-H. Zhang. "General maximum likelihood empirical Bayes estimation of normal
   means." Ann. Statist. 37, 2009.
5. B. Efron. "Bayes, oracle Bayes and empirical Bayes." Statistical Science 34, 2019.
6. H. H. Arcolezi, J.-F. Couchot, S. Gambs, C. Palamidessi, M. Zolfaghari. "Multi-Freq-LDPy: multiple
   frequency estimation under local differential privacy in Python." ESORICS 2022; its
   ``IBU`` estimator for GRR, UE, OLH and SS (read, not copied; bench/peers.py runs it).
"""

from __future__ import annotations

import numpy as np

from ldp.consistency import CONSISTENCY_ADJUSTMENTS, empirical_bayes_shares
from ldp.even_shrinkage import automatic_estimate
from ldp.ibu import support_bayesian_update
from ldp.intervals import score_interval
from ldp.large_k import auto_ibu
from ldp.mechanisms import (
    HadamardResponse,
    KRandomizedResponse,
    Mechanism,
    Tally,
)
from ldp.selection import select, unbiased_rows
from ldp.sure import sure_select

__all__ = [
    "ESTIMATORS",
    "empirical_bayes",
    "estimate_proportions",
    "maximum_likelihood",
    "score_interval",
    "support_bayesian_update",
    "supports_likelihood",
]

#: Consistent estimators, by name; "unbiased" is A^-1 z_bar itself; "auto" picks "eb", Norm-Sub
#: or clip per tally (:meth:`~ldp.mechanisms.Mechanism.automatic_consistency`); "cross-fit" picks among
#: Norm-Sub, clip, "eb" and "ibu" per tally by their cross-fitted error (:mod:`ldp.selection`; not the
#: default: docs/experiments/estimator-selection.md).
ESTIMATORS = (
    "unbiased",
    "norm-sub",
    "clip",
    "auto",
    "mle",
    "eb",
    "ibu",
    "cross-fit",
    "sure",
    "sure-largest",
    "auto-ibu",
    "auto-ibu-avg",
    "auto-even",
)


def empirical_bayes(mechanism: Mechanism, unbiased: np.ndarray, n: int) -> np.ndarray:
    """Posterior means of the shares under their fitted distribution, projected onto the simplex.

    The distribution of the k shares is estimated from the tally itself by nonparametric maximum
    likelihood (:func:`~ldp.consistency.share_prior`, a data-driven prior), each option's share is
    estimated by its posterior mean E[theta_v | f_hat_v] (Jiang and Zhang 2009; Efron 2019), and
    Norm-Sub makes the result sum to 1. Shares the data cannot tell apart are pulled together
    (evenly spread answers come out nearly even), a share far from the others stays where its
    estimate is. Biased toward the bulk of the shares by design; the bias vanishes as n grows
    (tests/ldp/test_estimators.py). One row or a stack of rows.

    >>> from ldp import make_mechanism
    >>> m = make_mechanism("krr", k=4, epsilon=1.0)
    >>> empirical_bayes(m, np.array([0.3, 0.2, 0.3, 0.2]), 100).round(2).tolist()
    [0.25, 0.25, 0.25, 0.25]
    """
    rows = np.atleast_2d(np.asarray(unbiased, dtype=float))
    result = np.array([empirical_bayes_shares(mechanism.unit_variances, row, n) for row in rows])
    return result if np.ndim(unbiased) == 2 else result[0]


def supports_likelihood(mechanism: Mechanism) -> bool:
    """Whether the tally is a multinomial count of every possible report."""
    return isinstance(mechanism, (KRandomizedResponse, HadamardResponse))


def _report_matrix(mechanism: Mechanism) -> np.ndarray:
    if isinstance(mechanism, KRandomizedResponse):
        return mechanism.response_matrix
    if isinstance(mechanism, HadamardResponse):
        return mechanism.index_probabilities
    raise ValueError(f"{mechanism.name} has no multinomial tally; maximum likelihood needs k-RR or Hadamard response")


def maximum_likelihood(
    mechanism: Mechanism, counts: np.ndarray, *, iterations: int = 10_000, tolerance: float = 1e-10
) -> np.ndarray:
    """MLE of the answer distribution from tally counts (shape (size,) or (repetitions, size)), by EM.

    Starts from the uniform distribution; stops when no share moves by more than ``tolerance``.

    >>> from ldp import make_mechanism
    >>> m = make_mechanism("krr", k=3, epsilon=1.0)
    >>> maximum_likelihood(m, np.array([50, 30, 20])).round(3).tolist()
    [0.77, 0.23, 0.0]
    """
    p = _report_matrix(mechanism)
    single = np.ndim(counts) == 1
    counts = np.atleast_2d(np.asarray(counts, dtype=float))
    n = counts.sum(axis=1, keepdims=True)
    f = np.full((counts.shape[0], mechanism.k), 1.0 / mechanism.k)
    for _ in range(iterations):
        expected = f @ p.T  # (R, reports)
        ratio = np.divide(counts, expected, out=np.zeros_like(counts), where=expected > 0)
        updated = f * (ratio @ p) / n
        if np.max(np.abs(updated - f)) < tolerance:
            f = updated
            break
        f = updated
    return f[0] if single else f


def estimate_proportions(mechanism: Mechanism, counts: np.ndarray, n: int, estimator: str) -> np.ndarray:
    """Proportions by the named estimator, for one tally or a stack of them (rows)."""
    counts = np.asarray(counts)
    stacked = counts.ndim == 2
    rows = counts if stacked else counts[None, :]
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
    if estimator == "mle":
        result = maximum_likelihood(mechanism, rows)
    elif estimator == "cross-fit":
        result = select(mechanism, rows, n)
    elif estimator == "auto-even":
        result = np.array([automatic_estimate(mechanism, u, n)[1] for u in unbiased_rows(mechanism, rows, n)])
    elif estimator in ("auto-ibu", "auto-ibu-avg"):
        average = estimator == "auto-ibu-avg"
        result = auto_ibu(mechanism, rows, unbiased_rows(mechanism, rows, n), n, average=average)
    elif estimator in ("sure", "sure-largest"):
        result = sure_select(mechanism, rows, n, loss="l2" if estimator == "sure" else "largest")
    elif estimator == "ibu":
        result = support_bayesian_update(mechanism, rows)
    else:
        result = mechanism.observed_mean(Tally(n, rows)) @ np.linalg.inv(mechanism.response_matrix).T
        if estimator == "eb":
            result = empirical_bayes(mechanism, result, n)
        elif estimator == "auto":
            methods = [mechanism.automatic_consistency(row, n) for row in result]
            result = np.array(
                [
                    empirical_bayes(mechanism, row, n) if m == "eb" else CONSISTENCY_ADJUSTMENTS[m](row)
                    for m, row in zip(methods, result, strict=True)
                ]
            )
        elif estimator != "unbiased":
            result = CONSISTENCY_ADJUSTMENTS[estimator](result)
    return result if stacked else result[0]
