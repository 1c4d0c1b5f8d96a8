"""Choose the mechanism with the lowest expected error for a question, from analytic variances.

For k options, budget epsilon and an expected number of respondents n, every candidate's
covariance is evaluated at evenly spread answers (f = 1/k; the advisor knows nothing of the
answers before they arrive) and candidates are ranked by the half-width of the widest 95 %
interval, z_0.975 * max_v sqrt(Var f_hat_v). Ties go to the earlier, simpler candidate, also when
rounding makes two equal variances differ in their last digits (``TIE_TOLERANCE``).

Candidates: k-RR; subset selection; OUE; OLH; Hadamard response; CMS and HCMS in the paper's
survey setting (512 hash functions, m = 128); dBitFlip for every d from 1 to k (d = k is SUE).

Every candidate's variance is proportional to 1/n, so the ranking depends on k and epsilon
only; n sets the error shown next to it. The ranking (each candidate's per-report variance
n Var f_hat_v at f = 1/k, :meth:`~ldp.mechanisms.base.Mechanism.report_variances`) is therefore
cached per (k, epsilon), and any n costs one square root per candidate. Every candidate's variance
is a closed form evaluated in O(k) (k-RR, subset selection, OLH, the unary encodings), O(k K)
(Hadamard response, K < 2k), or, for CMS and HCMS, from their hash family's collision matrix and
its inverse, computed once per k for every epsilon (:func:`ldp.mechanisms.cms.sketch_family`). The
values are the same as those of the mechanisms' ``covariance`` (tests/ldp/test_advisor.py).
The estimator recommended with it is always "auto"
(:func:`ldp.consistency.choose_consistency`): whether Norm-Sub or clipping errs less depends on the
answers themselves, which the advisor cannot know, so the choice is made per tally.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import stats

from ldp.families import Candidate, Recommendation
from ldp.mechanisms import Mechanism, make_mechanism

__all__ = ["Candidate", "Recommendation", "candidates", "expected_half_width", "recommend"]

Z_95 = float(stats.norm.ppf(0.975))


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


#: Variances this close (relative) are ties: some candidates are the same mechanism in other words
#: (subset selection with omega = 1 is k-RR; at k = 2 OLH with g = 2 and Hadamard response too) and
#: their computed variances differ only by rounding.
TIE_TOLERANCE = 1e-9


@lru_cache(maxsize=1024)
def _ranking(k: int, epsilon: float) -> tuple[tuple[str, tuple[tuple[str, Any], ...], float], ...]:
    """Candidates as (name, params, largest per-report variance at f = 1/k), best first.

    Sorted by variance; a run of variances within TIE_TOLERANCE of the run's first is put back in
    candidate order, so that a tie goes to the earlier, simpler candidate.
    """
    scored = [
        (index, m.name, tuple(m.params().items()), float(np.max(m.report_variances())))
        for index, m in enumerate(candidates(k, epsilon))
    ]
    ranked: list[tuple[int, str, tuple[tuple[str, Any], ...], float]] = []
    run: list[tuple[int, str, tuple[tuple[str, Any], ...], float]] = []
    for candidate in sorted(scored, key=lambda candidate: candidate[3]):
        if run and candidate[3] > run[0][3] * (1 + TIE_TOLERANCE):
            ranked += sorted(run)  # by candidate index
            run = []
        run.append(candidate)
    ranked += sorted(run)
    return tuple((name, params, variance) for _, name, params, variance in ranked)


def recommend(k: int, epsilon: float, n: int) -> Recommendation:
    """The candidate with the lowest expected error for k options, epsilon and n respondents.

    The ranking is cached per (k, epsilon); n only scales each half-width, Z sqrt(variance / n).

    >>> recommend(5, 1.0, 1000).best.mechanism
    'krr'
    """
    if n < 1:
        raise ValueError(f"n must be a positive number of respondents, got {n!r}")
    ranking = tuple(
        Candidate(name, dict(params), Z_95 * math.sqrt(variance / n)) for name, params, variance in _ranking(k, epsilon)
    )
    return Recommendation(ranking[0], ranking)
