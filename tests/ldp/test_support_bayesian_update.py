"""The iterative Bayesian update on support counts ("ibu"): what it equals, where it stays, its bias."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from ldp import Tally, make_mechanism
from ldp.estimators import estimate_proportions, maximum_likelihood
from ldp.ibu import SUPPORT_COUNT_MECHANISMS, support_bayesian_update


def expected_tally(mechanism, shares, n):
    """The tally's expectation for answers spread as ``shares``: each report's supports averaged."""
    if mechanism.name in ("sue", "oue"):
        p, q = mechanism.true_bit_probability, mechanism.other_bit_probability
        return np.r_[np.full(mechanism.k, float(n)), n * (((p - q) * np.eye(mechanism.k) + q) @ shares)]
    return n * (mechanism.response_matrix @ shares)


def test_for_krr_it_is_the_maximum_likelihood_estimate():
    mechanism = make_mechanism("krr", k=6, epsilon=1.0)
    tallies = mechanism.sample_tallies(np.array([50, 20, 15, 10, 5, 0]), 20, rng=np.random.default_rng(2))
    mle = maximum_likelihood(mechanism, tallies, tolerance=1e-13)
    assert_allclose(support_bayesian_update(mechanism, tallies), mle, atol=1e-8)


@pytest.mark.parametrize("name", SUPPORT_COUNT_MECHANISMS)
def test_the_expected_tally_gives_back_the_shares(name):
    # Consistency: at the tally's expectation the update's fixed point is the true distribution.
    mechanism = make_mechanism(name, k=6, epsilon=1.0)
    shares = np.array([0.4, 0.25, 0.15, 0.1, 0.06, 0.04])
    assert_allclose(support_bayesian_update(mechanism, expected_tally(mechanism, shares, 1000)), shares, atol=1e-6)


@pytest.mark.parametrize("name", SUPPORT_COUNT_MECHANISMS)
def test_estimates_stay_on_the_simplex_with_few_reports(name):
    mechanism = make_mechanism(name, k=8, epsilon=0.5)
    tallies = mechanism.sample_tallies(np.array([30, 10, 5, 3, 2, 0, 0, 0]), 50, rng=np.random.default_rng(5))
    estimates = estimate_proportions(mechanism, tallies, 50, "ibu")
    assert estimates.min() >= 0
    assert_allclose(estimates.sum(axis=1), 1.0, atol=1e-9)
    single = support_bayesian_update(mechanism, tallies[0])
    assert single.shape == (8,)
    assert_allclose(single, estimates[0])


def test_a_tally_without_supports_gives_evenly_spread_shares():
    mechanism = make_mechanism("oue", k=4, epsilon=1.0)
    tally = np.r_[np.full(4, 2), np.zeros(4)]  # two reports, every bit 0
    assert_allclose(estimate_proportions(mechanism, tally, 2, "ibu"), np.full(4, 0.25))


@pytest.mark.parametrize("name", ["cms", "hadamard", "dbitflip", "hcms"])
def test_mechanisms_without_support_counts_are_refused(name):
    mechanism = make_mechanism(name, k=8, epsilon=1.0, **({"d": 2} if name == "dbitflip" else {}))
    with pytest.raises(ValueError, match="support counts"):
        support_bayesian_update(mechanism, np.ones(mechanism.empty_tally().counts.size))


def test_for_subset_selection_it_equals_the_unbiased_estimate_inside_the_simplex():
    # Subset selection sends exactly d supports per report, so s = c / (n d) and the fixed point
    # (A / d) f = s is A^-1 c / n, the unbiased estimate, whenever that is a distribution.
    mechanism = make_mechanism("subset", k=10, epsilon=1.0)
    counts = mechanism.sample_tallies(np.full(10, 1000), 1, rng=np.random.default_rng(9))[0]
    unbiased = mechanism.estimate(Tally(10_000, counts)).proportions
    assert unbiased.min() > 0
    assert_allclose(support_bayesian_update(mechanism, counts), unbiased, atol=1e-8)


@pytest.mark.statistical
@pytest.mark.parametrize("name", ["subset", "oue"])
@pytest.mark.slow
def test_unbiased_at_many_reports(name):
    # Zipf(1.1) over 10 options (the smallest share 4.1 %, seven standard deviations from 0),
    # epsilon = 1, n = 100,000: each option's mean over R = 300 seeded tallies lies within 4
    # standard errors of its true share, the standard error from the unbiased estimate's analytic
    # variance (the update's own is no larger where the estimate lies inside the simplex, as it
    # almost always does here). OLH's and k-RR's consistency: the deterministic tests above.
    k, n, repetitions = 10, 100_000, 300
    weights = 1.0 / np.arange(1, k + 1) ** 1.1
    counts = np.round(n * weights / weights.sum()).astype(int)
    shares = counts / counts.sum()
    mechanism = make_mechanism(name, k=k, epsilon=1.0)
    tallies = mechanism.sample_tallies(counts, repetitions, rng=np.random.default_rng(20261127))
    estimates = estimate_proportions(mechanism, tallies, int(counts.sum()), "ibu")
    standard_errors = np.sqrt(np.diag(mechanism.covariance(shares, int(counts.sum()))) / repetitions)
    assert np.all(np.abs(estimates.mean(axis=0) - shares) <= 4 * standard_errors)
