"""Which questions of a recurring survey are memoized, and what "Automatic" picks for them.

Split from :mod:`surveys.series.rounds` so that the question form and the cost panel
(:mod:`surveys.forms.question`, :mod:`surveys.costs`) ask it without importing the rounds machinery, which
itself builds question forms (no import circle)."""

from __future__ import annotations

from typing import Any

from ldp.advisor import Candidate, recommend
from ldp.mechanisms import make_mechanism
from ldp.numeric import make_numeric_mechanism
from ldp.numeric.advisor import MeanCandidate, recommend_mean
from surveys.models import DEFAULT_MEMO_GAMMA

#: The layers of a memoized report, per mechanism: RAPPOR's permanent randomized response (PRR,
#: memoized per series, question and true value) under a fresh instantaneous one (IRR) each round.
MEMO_LAYERS = {"rappor": "memoized-prr+irr", "dbitflip": "memoized-bits+flip", "1bitmean": "memoized-bit+flip"}


def memoizes(spec: dict[str, Any], gamma: float | None = None) -> bool:
    """Whether a question of a recurring survey randomized with this client spec is memoized.

    ``gamma`` is the randomization's stored flip; None: the default a new randomization gets. RAPPOR
    always is; dBitFlip while p1' < 1 - gamma; 1BitMean with a flip of 1/4 (the only one that keeps
    its weights integers) while 4A > D, i.e. epsilon below ln 3. Other mechanisms never are: they are
    randomized afresh every round.
    """
    mechanism = spec["mechanism"]
    if mechanism not in MEMO_LAYERS:
        return False
    flip = DEFAULT_MEMO_GAMMA.get(mechanism) if gamma is None else gamma
    if mechanism == "dbitflip":
        return bool(spec["true_bit_probability"] < 1 - flip - 1e-9)
    if mechanism == "1bitmean":
        return flip == 0.25 and 4 * spec["base"] - spec["denominator"] >= 1
    return True


#: What "Automatic" picks for a short answer in a recurring survey: RAPPOR, whose permanent randomized
#: response is memoized (a count-mean sketch would be randomized afresh, its epsilon adding up each round).
RECURRING_TEXT_MECHANISM = "rappor"


def memoized_choice(k: int, epsilon: float, n: int) -> Candidate | None:
    """The advisor's best-ranked mechanism for k options that a recurring survey memoizes, or None.

    :func:`ldp.advisor.recommend` ranks every candidate by its widest 95 % band; only dBitFlip (some d)
    has a memoized form, and only while the default flip allows it at this epsilon
    (:func:`memoizes`). Its band is wider than the overall best's (by 1.0 to 3 times at epsilon from
    0.5 to 4, k from 2 to 64), but without memoization every round adds the question's epsilon again.
    """
    for candidate in recommend(k, epsilon, n).ranking:
        if candidate.mechanism in MEMO_LAYERS:
            built = make_mechanism(candidate.mechanism, k=k, epsilon=epsilon, **candidate.params)
            if memoizes(built.client_spec()):
                return candidate
    return None


def memoized_mean(lo: float, hi: float, epsilon: float, n: int) -> MeanCandidate | None:
    """1BitMean's entry of :func:`ldp.numeric.advisor.recommend_mean` when a recurring survey memoizes it
    at this epsilon (below ln 3), else None. Where it does, its worst-case band is at most 6 % wider than
    the best pure mechanism's (Hybrid near ln 3; 1BitMean itself below epsilon ~ 0.61)."""
    for candidate in recommend_mean(lo, hi, epsilon, n).ranking:
        if candidate.mechanism in MEMO_LAYERS:
            built = make_numeric_mechanism(candidate.mechanism, lo=lo, hi=hi, epsilon=epsilon)
            if memoizes(built.client_spec()):
                return candidate
    return None
