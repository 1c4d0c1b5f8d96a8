"""Shrinking toward evenly spread answers by the posterior probability that they are even.

"auto" shrinks a tally whose chi-square test does not reject evenly spread answers by empirical
Bayes (``"eb"``, :func:`~ldp.consistency.empirical_bayes_shares`). The nonparametric prior of the
shares that empirical Bayes fits overfits where the noise is large next to the shares (k = 20 or
64 at epsilon = 0.1): a few noisy estimates get prior atoms of their own and their posterior means
stay spread out, so on evenly spread answers "eb" erred up to 25 times more than the iterative
Bayesian update, which there stays near its evenly spread start (docs/benchmarks-peers.md). This
module averages two models of the tally instead of choosing one (Bayesian model averaging; Hoeting
et al. 1999, ref. 3):

* M0, every share is 1/k; its estimate is the evenly spread distribution;
* M1, the shares differ; its estimate is ``"eb"``'s, g_1(f_hat).

The evidence is the chi-square statistic T of :func:`~ldp.consistency.evenness_statistic`
(d degrees of freedom). Under M0, T ~ chi-square(d). Under M1 the deviation from 1/k is given a
normal prior whose covariance is g times the estimate's noise covariance (Zellner's g-prior,
ref. 1), so that the whitened estimate is normal with g + 1 times the noise variance and
T / (1 + g) ~ chi-square(d): the Bayes factor of a test statistic (Johnson 2005, ref. 2) is

    BF_10 = (1 + g)^(-d/2) exp(T g / (2 (1 + g))),

and with even prior odds the posterior probability of M0 is pi_0 = 1 / (1 + BF_10). The estimate
is the posterior mean pi_0 / k + (1 - pi_0) g_1(f_hat), a point of the simplex. On evenly spread
answers T is about d and pi_0 about 0.57 at g = 0.3 (d = 19), so about half of the noise that
"eb" keeps is removed; where T is well above d, pi_0 is negligible. Applied only where "auto"
chooses "eb" (the test does not reject) and at :data:`AVERAGED_OPTIONS`. :data:`PRIOR_SCALE` (g)
and the range were chosen on the per-shape grid (docs/experiments/estimator-selection.md): it
gains on evenly spread and mildly skewed answers and costs about 1 % on Zipf(2) and point masses
at epsilon = 0.1, where those pass the test; so it is opt-in (``"auto-even"``), not the default.
Post-processing of the tally only: no privacy cost.

References
----------
1. A. Zellner. "On assessing prior distributions and Bayesian regression analysis with g-prior
   distributions." In Bayesian Inference and Decision Techniques, 1986.
2. V. E. Johnson. "Bayes factors based on test statistics." JRSS B 67, 2005.
3. J. A. Hoeting, D. Madigan, A. E. Raftery, C. T. Volinsky. "Bayesian model averaging: a
   tutorial." Statistical Science 14, 1999.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ldp.consistency import CONSISTENCY_ADJUSTMENTS, empirical_bayes_shares, evenness_statistic

if TYPE_CHECKING:
    from ldp.mechanisms import Mechanism

__all__ = ["AVERAGED_OPTIONS", "PRIOR_SCALE", "automatic_estimate", "evenness_probability", "shrink_toward_even"]

#: g: the prior variance of the shares' deviation from 1/k under M1, in units of the noise's.
PRIOR_SCALE = 0.3
#: Numbers of options where the averaging applies: at 64 options the chi-square test (63 degrees of
#: freedom) passes Zipf(1.1) answers with T near d, where pi_0 is near 1 (measured: 1.14 times
#: "auto"'s error on the two k = 64 Zipf cells of bench.peers).
AVERAGED_OPTIONS = range(5, 33)


def evenness_probability(statistic: float, degrees: int, scale: float = PRIOR_SCALE) -> float:
    """pi_0: the posterior probability of evenly spread answers given the chi-square statistic.

    >>> round(evenness_probability(19.0, 19), 3)
    0.574
    >>> evenness_probability(120.0, 19) < 1e-4
    True
    """
    log_factor = -degrees / 2 * np.log1p(scale) + statistic * scale / (2 * (1 + scale))
    return float(1.0 / (1.0 + np.exp(min(log_factor, 700.0))))


def shrink_toward_even(estimate: np.ndarray, statistic: float, degrees: int) -> np.ndarray:
    """pi_0 / k + (1 - pi_0) estimate: the model average of evenly spread answers and ``estimate``.

    >>> shrink_toward_even(np.array([0.6, 0.4]), 1.0, 1).round(3).tolist()
    [0.55, 0.45]
    """
    weight = evenness_probability(statistic, degrees)
    return weight / estimate.size + (1.0 - weight) * np.asarray(estimate, dtype=float)


def automatic_estimate(mechanism: Mechanism, unbiased: np.ndarray, n: int) -> tuple[str, np.ndarray]:
    """The ``"auto"`` estimate of one tally: (the estimator's name, the shares).

    :meth:`~ldp.mechanisms.base.Mechanism.automatic_consistency` chooses; where it chooses
    ``"eb"`` (the chi-square test does not reject evenly spread answers) the empirical-Bayes shares
    are averaged with the evenly spread answers by :func:`shrink_toward_even`; elsewhere Norm-Sub
    or clipping as chosen.

    >>> from ldp import make_mechanism
    >>> m = make_mechanism("krr", k=5, epsilon=1.0)
    >>> name, shares = automatic_estimate(m, np.array([0.25, 0.15, 0.2, 0.22, 0.18]), 500)
    >>> name, np.allclose(shares, 0.2, atol=0.01)
    ('eb', True)
    """
    u = np.asarray(unbiased, dtype=float)
    method = mechanism.automatic_consistency(u, n)
    if method != "eb":
        return method, CONSISTENCY_ADJUSTMENTS[method](u)
    shares = empirical_bayes_shares(mechanism.unit_variances, u, n)
    if mechanism.k not in AVERAGED_OPTIONS:
        return "eb", shares
    precision, degrees = mechanism.even_test
    return "eb", shrink_toward_even(shares, evenness_statistic(u, n, precision), degrees)
