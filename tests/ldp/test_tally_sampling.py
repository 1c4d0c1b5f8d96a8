"""sample_tallies draws what randomize-then-tally would, for every mechanism.

Two independent samples of REPS tallies each (N respondents per survey): per count, the means
must agree within 4 standard errors of their difference, and the variances within 4 standard
errors of their ratio (sqrt(4 / REPS) = 4.5 % relative, for near-normal counts); so must the
mean of the experiments' metric, the largest absolute error over the options.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldp import make_mechanism

pytestmark = pytest.mark.statistical

REPS = 2000
TRUE_COUNTS = np.array([40, 25, 15, 12, 8])
CASES = {
    "krr": ("krr", {}),
    "cms": ("cms", {"hash_count": 16, "width": 8, "hash_seed": 3}),  # small: many shared cells
    "4bitflip": ("dbitflip", {"d": 4}),
    "5bitflip": ("dbitflip", {"d": 5}),
    "2bitflip": ("dbitflip", {"d": 2}),
    "oue": ("oue", {}),
    "subset2": ("subset", {"subset_size": 2}),
    "subset1": ("subset", {"subset_size": 1}),
    "hadamard": ("hadamard", {}),
    "olh": ("olh", {}),
    "hcms": ("hcms", {"hash_count": 16, "width": 8}),
}


def by_randomizing(mechanism, rng):
    values = np.repeat(np.arange(5), TRUE_COUNTS)
    packed = mechanism.randomize(np.tile(values, REPS), rng=rng).reshape(REPS, values.size, -1)
    return np.array([mechanism.tally(packed[r]).counts for r in range(REPS)])


def max_errors(mechanism, tallies):
    from ldp import Tally

    n = TRUE_COUNTS.sum()
    truth = TRUE_COUNTS / n
    inverse = np.linalg.inv(mechanism.response_matrix)
    return np.array([np.abs(inverse @ mechanism.observed_mean(Tally(n, c)) - truth).max() for c in tallies])


@pytest.mark.parametrize("case", CASES)
def test_sampled_tallies_match_randomized_ones(case):
    name, params = CASES[case]
    mechanism = make_mechanism(name, k=5, epsilon=1.0, **params)
    direct = by_randomizing(mechanism, np.random.default_rng(1))
    sampled = mechanism.sample_tallies(TRUE_COUNTS, REPS, rng=2)
    assert sampled.shape == direct.shape

    difference_se = np.sqrt((direct.var(axis=0) + sampled.var(axis=0)) / REPS)
    assert np.all(np.abs(direct.mean(axis=0) - sampled.mean(axis=0)) <= 4 * difference_se + 1e-12)
    varying = direct.var(axis=0) > 0
    ratio = sampled.var(axis=0)[varying] / direct.var(axis=0)[varying]
    assert np.all(np.abs(ratio - 1) < 4 * np.sqrt(4 / REPS)), ratio
    assert np.array_equal(direct.var(axis=0) == 0, sampled.var(axis=0) == 0)

    a, b = max_errors(mechanism, direct), max_errors(mechanism, sampled)
    assert abs(a.mean() - b.mean()) < 4 * np.sqrt((a.var() + b.var()) / REPS)


def test_sample_tallies_refuses_bad_counts():
    mechanism = make_mechanism("krr", k=3, epsilon=1.0)
    for bad in ([1, 2], [1, -1, 2], [0.5, 1, 1]):
        with pytest.raises(ValueError, match="true_counts"):
            mechanism.sample_tallies(bad, 10)
