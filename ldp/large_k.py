"""``"auto-ibu"``: "auto" with a sharper evenness test and the iterative Bayesian update at large k.

At k = 64, Zipf(1.1) answers often pass "auto"'s chi-square test of evenly spread answers (its 63
degrees of freedom dilute one large share), so "auto" shrinks them by empirical Bayes, and when
the test does reject, Norm-Sub or clipping follow, while the iterative Bayesian update (``"ibu"``,
:func:`ldp.ibu.support_bayesian_update`) errs least on skewed answers there (measured:
docs/experiments/estimator-selection.md). This rule, for k in :data:`IBU_OPTIONS` and mechanisms
whose tally counts supports:

1. tests evenness twice, each at half of :data:`~ldp.consistency.EVEN_TEST_LEVEL` (Bonferroni):
   the chi-square test (:func:`~ldp.consistency.evenness_p_value`) and the largest standardized
   share, max_v (f_hat_v - 1/k) / sd_v with sd_v at evenly spread answers, whose p-value under
   evenness is 1 - Phi(z)^k (Sidak; the options' estimates are nearly independent at large k);
2. keeps empirical Bayes (``"eb"``) if neither rejects, else applies IBU.

``"auto-ibu-avg"`` (:func:`auto_ibu` with ``average=True``) differs in step 2 only: where a test
rejects, the average of the IBU and Norm-Sub estimates, (IBU(c) + NormSub(f_hat)) / 2, a point of
the simplex (both are). The two are consistent estimates whose errors are far from perfectly
correlated (IBU's stays near the evenly spread start where the likelihood is flat and shrinks a
lone large share; Norm-Sub keeps the bulk's positive noise and subtracts evenly), so on Zipf(1.1)
answers at k = 64 their average errs less than either or between them (measured, 300 paired
tallies on the bench.peers data, largest error: 9.47 % against Norm-Sub's 9.90 % and IBU's
10.74 % at n = 5000, epsilon = 0.5; 10.35 % against 10.44 % and 10.27 % at n = 1000, epsilon = 1).
A fixed-weight combination of estimators, as in stacking (Breiman 1996, ref. 1).
It costs on point masses, where IBU errs more than Norm-Sub, and on Zipf(2) answers
(docs/benchmarks-peers.md), so it is opt-in.

Elsewhere both are "auto". Not yet the results pages' default (the pages' estimate goes through
:meth:`~ldp.mechanisms.base.Mechanism.consistent_estimate`, which would need IBU from the
unbiased estimate); an estimator name for :func:`ldp.estimators.estimate_proportions` and the
benchmarks. Post-processing only: no privacy cost.

References
----------
1. L. Breiman. "Stacked regressions." Machine Learning 24, 1996.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ldp.consistency import (
    CONSISTENCY_ADJUSTMENTS,
    EMPIRICAL_BAYES_OPTIONS,
    EVEN_TEST_LEVEL,
    empirical_bayes_shares,
    evenness_p_value,
)
from ldp.ibu import SUPPORT_COUNT_MECHANISMS, support_bayesian_update
from ldp.mechanisms import Mechanism

__all__ = ["IBU_OPTIONS", "auto_ibu", "large_k_choice", "largest_share_p_value"]

#: Numbers of options where "auto-ibu" differs from "auto".
IBU_OPTIONS = range(33, 65)


def largest_share_p_value(mechanism: Mechanism, unbiased: np.ndarray, n: int) -> float:
    """p-value of the largest standardized share under evenly spread answers (Sidak over k options).

    >>> from ldp import make_mechanism
    >>> m = make_mechanism("subset", k=40, epsilon=1.0)
    >>> round(largest_share_p_value(m, np.full(40, 1 / 40), 1000), 3)
    1.0
    """
    k = unbiased.size
    sd = np.sqrt(mechanism.report_variances(np.full(k, 1.0 / k)) / n)
    z = float(np.max((np.asarray(unbiased) - 1.0 / k) / sd))
    return float(-np.expm1(k * stats.norm.logcdf(z)))


def large_k_choice(mechanism: Mechanism, unbiased: np.ndarray, n: int) -> str | None:
    """``"eb"`` or ``"ibu"`` where the rule applies (module docstring), else None ("auto" decides)."""
    if mechanism.k not in IBU_OPTIONS or mechanism.k not in EMPIRICAL_BAYES_OPTIONS:
        return None
    if mechanism.name not in SUPPORT_COUNT_MECHANISMS:
        return None
    even = evenness_p_value(unbiased, n, *mechanism.even_test) > EVEN_TEST_LEVEL / 2
    if even and largest_share_p_value(mechanism, unbiased, n) > EVEN_TEST_LEVEL / 2:
        return "eb"
    return "ibu"


def auto_ibu(
    mechanism: Mechanism, counts: np.ndarray, unbiased: np.ndarray, n: int, *, average: bool = False
) -> np.ndarray:
    """The ``"auto-ibu"`` estimate of each tally (rows of ``counts``, with their unbiased estimates).

    With ``average``, ``"auto-ibu-avg"``: the mean of IBU's and Norm-Sub's estimates where the
    rule would apply IBU (module docstring).
    """
    result = []
    for row, x in zip(np.atleast_2d(counts), np.atleast_2d(unbiased), strict=True):
        choice = large_k_choice(mechanism, x, n) or mechanism.automatic_consistency(x, n)
        if choice == "ibu":
            shares = support_bayesian_update(mechanism, row)
            result.append((shares + CONSISTENCY_ADJUSTMENTS["norm-sub"](x)) / 2 if average else shares)
        elif choice == "eb":
            result.append(empirical_bayes_shares(mechanism.unit_variances, x, n))
        else:
            result.append(CONSISTENCY_ADJUSTMENTS[choice](x))
    return np.array(result)
