"""Choose the multi-select mechanism with the lowest expected error for (k, l, epsilon, n).

As :mod:`ldp.advisor` does for one choice, every candidate's per-option variance is evaluated at
a reference population that knows nothing of the answers: the number of options chosen is
uniform on 0..l (l / 2 on average) and the choices are spread evenly, so each option's share is
pi = l / (2k). Candidates are ranked by the half-width of the widest 95 % interval,
z_0.975 max_j sqrt(Var pi_hat_j); ties go to the earlier candidate (set-OUE, set-SUE,
padding-k-RR, padding-OLH).

For padding-and-sampling the reference's sampled-item distribution over the k + l items is
pi / l per option and, per dummy i = 1..l, P(|x| <= l - i) / l = (l - i + 1) / ((l + 1) l).
"""

from __future__ import annotations

import math

import numpy as np

from ldp.advisor import TIE_TOLERANCE, Z_95
from ldp.families import Candidate, Recommendation
from ldp.multiselect.base import check_max_choices
from ldp.multiselect.padding import PaddingAndSampling
from ldp.multiselect.unary import SetUnaryEncoding

__all__ = ["SetCandidate", "SetRecommendation", "recommend_multiselect", "reference_variance"]

CANDIDATES = (
    ("set-oue", "unary", "oue"),
    ("set-sue", "unary", "sue"),
    ("padding-krr", "padding", "krr"),
    ("padding-olh", "padding", "olh"),
)


#: The multi-select advisor's results are every advisor's (:mod:`ldp.registry`); a candidate's
#: ``half_width`` is its expected widest 95 % half-width of one option's share.
SetCandidate = Candidate
SetRecommendation = Recommendation


def reference_items(k: int, max_choices: int) -> np.ndarray:
    """The reference population's sampled-item distribution over the k + l items (module docstring)."""
    ell = max_choices
    dummies = (ell - np.arange(1, ell + 1) + 1) / ((ell + 1) * ell)
    return np.concatenate([np.full(k, 1.0 / (2 * k)), dummies])


def reference_variance(mechanism: SetUnaryEncoding | PaddingAndSampling) -> float:
    """Largest n Var(pi_hat_j) over the options at the reference population."""
    k, ell = mechanism.k, mechanism.ell
    if isinstance(mechanism, SetUnaryEncoding):
        return float(np.max(mechanism.report_variances(np.full(k, ell / (2 * k)))))
    f = reference_items(k, ell)
    return float(np.max(ell * ell * (mechanism.unit_variances @ f)[:k]))


def recommend_multiselect(k: int, max_choices: int | None, epsilon: float, n: int) -> Recommendation:
    """The multi-select mechanism with the smallest expected error.

    >>> recommend_multiselect(5, 1, 1.0, 1000).best.mechanism
    'padding-krr'
    >>> recommend_multiselect(5, 5, 4.0, 1000).best.mechanism
    'set-sue'
    """
    k, ell = check_max_choices(k, max_choices)
    if n < 1:
        raise ValueError(f"n must be a positive number of respondents, got {n!r}")
    scored = []
    for name, family, variant in CANDIDATES:
        if family == "unary":
            mechanism: SetUnaryEncoding | PaddingAndSampling = SetUnaryEncoding(k, epsilon, ell, variant)
        else:
            mechanism = PaddingAndSampling(k, epsilon, ell, variant)
        scored.append((name, mechanism.params(), reference_variance(mechanism)))
    best_variance = min(v for _, _, v in scored)
    ranked = sorted(
        enumerate(scored), key=lambda item: (item[1][2] > best_variance * (1 + TIE_TOLERANCE), item[1][2], item[0])
    )
    ranking = tuple(Candidate(name, params, Z_95 * math.sqrt(v / n)) for _, (name, params, v) in ranked)
    return Recommendation(ranking[0], ranking, estimator="unbiased")
