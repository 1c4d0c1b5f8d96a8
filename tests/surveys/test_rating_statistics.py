"""A rating's mean and Net Promoter Score from its randomized shares: unbiased, 95 % intervals cover.

Each case fixes a population of N = 1000 respondents on a rating scale and randomizes their
answers REPS = 4000 times with a categorical mechanism (its vectorized ``sample_tallies``); every
tally is estimated as the dashboard does (``mechanism.estimate``, then
:func:`surveys.kinds.linear_summary` with the rating kind's ``point_weights``).
Tolerances: the mean of REPS estimates lies within 4 of its standard errors (from the spread of
the estimates) of the truth; a coverage rate has standard error sqrt(0.95 * 0.05 / REPS) = 0.34 %,
so 94-96 % is +-2.9 of them. The numeric mechanisms' means are tested the same way in
tests/ldp/test_numeric_statistics.py; the dashboard's mean is their ``estimate`` (checked equal
to ``estimate_many`` below).
"""

from __future__ import annotations

import numpy as np
import pytest

from ldp import Tally, make_mechanism
from ldp.numeric import make_numeric_mechanism
from surveys.kinds import kind_of, linear_summary
from surveys.models import Question

N = 1000
REPS = 4000
NPS_SHARES = [0.02, 0.02, 0.03, 0.04, 0.05, 0.09, 0.1, 0.17, 0.2, 0.16, 0.12]
FIVE_SHARES = [0.1, 0.15, 0.2, 0.3, 0.25]
CASES = [
    ("krr", {}, "0-10", NPS_SHARES, 2.0),
    ("oue", {}, "0-10", NPS_SHARES, 1.0),
    ("subset", {"subset_size": 3}, "0-10", NPS_SHARES, 1.0),
    ("hadamard", {}, "1-5", FIVE_SHARES, 1.0),
    ("krr", {}, "1-5", FIVE_SHARES, 0.5),
]


@pytest.mark.statistical
@pytest.mark.parametrize(("name", "params", "scale", "shares", "epsilon"), CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_rating_mean_and_nps_are_unbiased_and_cover(name, params, scale, shares, epsilon):
    question = Question(kind="rating", scale=scale)
    weights = kind_of("rating").point_weights(question)
    assert set(weights) == ({"mean", "nps"} if scale == "0-10" else {"mean"})
    mechanism = make_mechanism(name, k=len(shares), epsilon=epsilon, **params)
    true_counts = np.round(np.asarray(shares) * N).astype(int)
    n = int(true_counts.sum())
    tallies = mechanism.sample_tallies(
        true_counts, REPS, rng=1400 + CASES.index((name, params, scale, shares, epsilon))
    )
    for statistic, c in weights.items():
        truth = float(np.asarray(c) @ true_counts / n)
        summaries = [linear_summary(c, mechanism.estimate(Tally(n, counts))) for counts in tallies]
        values = np.array([s["value"] for s in summaries])
        covered = np.mean([s["low"] <= truth <= s["high"] for s in summaries])
        assert values.mean() == pytest.approx(truth, abs=4 * values.std() / np.sqrt(REPS)), statistic
        assert 0.94 <= covered <= 0.96, f"{statistic}: coverage {covered:.4f}"


def test_the_dashboards_mean_is_the_vectorized_estimators():
    mechanism = make_numeric_mechanism("hybrid", lo=1, hi=7, epsilon=1.0)
    counts = mechanism.sample_tallies(np.array([2.0, 5.0, 7.0] * 100), 3, rng=7)
    means, errors = mechanism.estimate_many(counts)
    for row, mean, error in zip(counts, means, errors, strict=True):
        estimate = mechanism.estimate(Tally(int(row.sum()), row))
        assert (estimate.mean, estimate.standard_error) == pytest.approx((mean, error), rel=1e-12)
