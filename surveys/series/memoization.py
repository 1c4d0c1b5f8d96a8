"""Which questions of a recurring survey are memoized, and what "Automatic" picks for them.

Split from :mod:`surveys.series.rounds` so that the question form and the cost panel
(:mod:`surveys.forms.question`, :mod:`surveys.costs`) ask it without importing the rounds machinery, which
itself builds question forms (no import circle)."""

from __future__ import annotations

from ldp.advisor import Candidate, recommend
from ldp.mechanisms import make_mechanism
from ldp.memo import memo_layers, memoizes
from ldp.numeric import make_numeric_mechanism
from ldp.numeric.advisor import MeanCandidate, recommend_mean

#: What "Automatic" picks for a short answer in a recurring survey: RAPPOR, whose permanent randomized
#: response is memoized (a count-mean sketch would be randomized afresh, its epsilon adding up each round).
RECURRING_TEXT_MECHANISM = "rappor"


def memoized_choice(k: int, epsilon: float, n: int) -> Candidate | None:
    """The advisor's best-ranked mechanism for k options that a recurring survey memoizes, or None.

    :func:`ldp.advisor.recommend` ranks every candidate by its widest 95 % band; only dBitFlip (some d)
    has a memoized form, and only while the default flip allows it at this epsilon
    (:func:`ldp.memo.memoizes`). Its band is wider than the overall best's (by 1.0 to 3 times at epsilon from
    0.5 to 4, k from 2 to 64), but without memoization every round adds the question's epsilon again.
    """
    for candidate in recommend(k, epsilon, n).ranking:
        if memo_layers(candidate.mechanism):
            built = make_mechanism(candidate.mechanism, k=k, epsilon=epsilon, **candidate.params)
            if memoizes(built.client_spec()):
                return candidate
    return None


def memoized_mean(lo: float, hi: float, epsilon: float, n: int) -> MeanCandidate | None:
    """1BitMean's entry of :func:`ldp.numeric.advisor.recommend_mean` when a recurring survey memoizes it
    at this epsilon (below ln 3), else None. Where it does, its worst-case band is at most 6 % wider than
    the best pure mechanism's (Hybrid near ln 3; 1BitMean itself below epsilon ~ 0.61)."""
    for candidate in recommend_mean(lo, hi, epsilon, n).ranking:
        if memo_layers(candidate.mechanism):
            built = make_numeric_mechanism(candidate.mechanism, lo=lo, hi=hi, epsilon=epsilon)
            if memoizes(built.client_spec()):
                return candidate
    return None
