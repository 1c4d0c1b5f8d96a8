"""Choose the mechanism with the lowest expected error for a question, from analytic variances.

For k options, budget epsilon and an expected number of respondents n, every candidate's
covariance is evaluated at evenly spread answers (f = 1/k; the advisor knows nothing of the
answers before they arrive) and candidates are ranked by the half-width of the widest 95 %
interval, z_0.975 * max_v sqrt(Var f_hat_v). Ties go to the earlier, simpler candidate.

Candidates: k-RR; subset selection; OUE; OLH; Hadamard response; CMS and HCMS in the paper's
survey setting (512 hash functions, m = 128); dBitFlip for every d from 1 to k (d = k is SUE).

Every candidate's variance is proportional to 1/n, so the ranking depends on k and epsilon
only; n sets the error shown next to it. The estimator recommended with it is always "auto"
(:func:`ldp.estimates.choose_consistency`): whether Norm-Sub or clipping errs less depends on the
answers themselves, which the advisor cannot know, so the choice is made per tally.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import stats

from ldp.mechanisms import Mechanism, make_mechanism

__all__ = ["Candidate", "Recommendation", "candidates", "expected_half_width", "recommend"]

Z_95 = float(stats.norm.ppf(0.975))


@dataclass(frozen=True)
class Candidate:
    """One mechanism setting and its expected error."""

    mechanism: str
    params: dict[str, Any]
    half_width: float


@dataclass(frozen=True)
class Recommendation:
    """The best candidate, and every candidate considered, best first, and the estimator to use."""

    best: Candidate
    ranking: tuple[Candidate, ...]
    estimator: str = "auto"


def expected_half_width(mechanism: Mechanism, n: int) -> float:
    """Half-width of the widest 95 % interval at n reports with evenly spread answers.

    >>> round(expected_half_width(make_mechanism("krr", k=2, epsilon=1.0), 1000), 4)
    0.0595
    """
    if n < 1:
        raise ValueError(f"n must be a positive number of respondents, got {n!r}")
    return Z_95 * float(np.max(mechanism.expected_standard_errors(n)))


def candidates(k: int, epsilon: float) -> list[Mechanism]:
    """The mechanism settings the advisor compares for k options at epsilon."""
    return [
        make_mechanism("krr", k=k, epsilon=epsilon),
        make_mechanism("subset", k=k, epsilon=epsilon),
        make_mechanism("oue", k=k, epsilon=epsilon),
        make_mechanism("olh", k=k, epsilon=epsilon),
        make_mechanism("hadamard", k=k, epsilon=epsilon),
        make_mechanism("cms", k=k, epsilon=epsilon, hash_count=512, width=128),
        make_mechanism("hcms", k=k, epsilon=epsilon, hash_count=512, width=128),
        *(make_mechanism("dbitflip", k=k, epsilon=epsilon, d=d) for d in range(1, k + 1)),
    ]


@lru_cache(maxsize=1024)
def recommend(k: int, epsilon: float, n: int) -> Recommendation:
    """The candidate with the lowest expected error for k options, epsilon and n respondents.

    >>> recommend(5, 1.0, 1000).best.mechanism
    'krr'
    """
    scored = [Candidate(m.name, m.params(), expected_half_width(m, n)) for m in candidates(k, epsilon)]
    ranking = tuple(sorted(scored, key=lambda c: c.half_width))
    return Recommendation(ranking[0], ranking)
