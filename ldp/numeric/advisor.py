"""Choose the numeric mechanism with the narrowest expected 95 % interval of the mean.

For a range [lo, hi], budget epsilon and n expected respondents, every pure-epsilon candidate's
worst-case variance of one decoded report (:meth:`~ldp.numeric.base.NumericMechanism.worst_case_variance`,
exact for the grid and integer weights actually sampled) gives the half-width
z_0.975 * sqrt(Var / n). The Gaussian mechanism is listed but never recommended: it is
(epsilon, delta), not pure epsilon.

The published crossover (Wang et al., ICDE 2019, section IV): Duchi et al.'s one-bit mechanism
(and 1BitMean, the same bit) has the smaller worst-case variance below epsilon ~ 1.29, the
Piecewise mechanism above; Hybrid mixes the two and is never worse than either.

References
----------
1. N. Wang, X. Xiao, Y. Yang, J. Zhao, S. C. Hui, H. Shin, J. Shin, G. Yu. "Collecting and
   analyzing multidimensional data with local differential privacy." ICDE 2019.
2. J. C. Duchi, M. I. Jordan, M. J. Wainwright. "Minimax optimal procedures for locally private
   estimation." JASA 2018.

>>> rec = recommend_mean(0, 10, 2.0, 1000)
>>> rec.best.mechanism, rec.regime
('hybrid', 'piecewise')
"""

from __future__ import annotations

import math
from functools import lru_cache

from scipy import stats

from ldp.families import Candidate, Recommendation
from ldp.numeric import NUMERIC_MECHANISMS, make_numeric_mechanism

__all__ = ["CROSSOVER_EPSILON", "MeanCandidate", "MeanRecommendation", "recommend_mean"]

Z_95 = float(stats.norm.ppf(0.975))

#: Wang et al. 2019: Duchi et al.'s worst-case variance equals Piecewise's at epsilon ~ 1.29.
CROSSOVER_EPSILON = 1.29

#: Mechanisms the advisor may recommend: every pure-epsilon one, simplest first (ties go to it).
PURE = ("1bitmean", "duchi", "laplace", "piecewise", "hybrid")


#: The numeric advisor's results are every advisor's (:mod:`ldp.registry`): a candidate's
#: ``half_width`` is that of the mean's 95 % interval, in the question's units, and the
#: recommendation's ``regime`` is "one-bit" below the crossover epsilon, "piecewise" at or above it.
MeanCandidate = Candidate
MeanRecommendation = Recommendation


@lru_cache(maxsize=256)
def _unit_variances(epsilon: float) -> tuple[tuple[str, float], ...]:
    """Worst-case variance of one report on the range [0, 1], per mechanism (scales with range^2)."""
    return tuple(
        (name, make_numeric_mechanism(name, lo=0.0, hi=1.0, epsilon=epsilon).worst_case_variance())
        for name in NUMERIC_MECHANISMS
    )


def recommend_mean(lo: float, hi: float, epsilon: float, n: int) -> Recommendation:
    """Every numeric mechanism's expected half-width of the mean, best pure-epsilon one first."""
    if n < 1:
        raise ValueError(f"n must be a positive number of respondents, got {n!r}")
    width = float(hi) - float(lo)
    if not width > 0:
        raise ValueError(f"lo must be below hi, got lo={lo!r}, hi={hi!r}")
    candidates = [
        Candidate(name, {}, Z_95 * width * math.sqrt(variance / n), pure=name in PURE)
        for name, variance in _unit_variances(float(epsilon))
    ]
    order = {name: i for i, name in enumerate(PURE)}
    ranking = sorted(candidates, key=lambda c: (not c.pure, round(c.half_width, 12), order.get(c.mechanism, 99)))
    regime = "one-bit" if epsilon < CROSSOVER_EPSILON else "piecewise"
    return Recommendation(ranking[0], tuple(ranking), estimator="unbiased", regime=regime)
