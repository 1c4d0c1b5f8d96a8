"""Cross-fitted choice of the consistent estimator (ldp.selection)."""

from __future__ import annotations

import numpy as np
import pytest

from ldp import make_mechanism
from ldp.estimators import estimate_proportions
from ldp.selection import candidates, choose_estimators, expected_largest, split_tallies, supports_selection


@pytest.mark.parametrize("name", ["krr", "subset", "olh", "oue", "hadamard"])
def test_the_halves_add_up_to_the_tally(name):
    mechanism = make_mechanism(name, k=6, epsilon=1.0)
    counts = mechanism.sample_tallies(np.array([300, 200, 100, 50, 25, 25]), 1, rng=3)[0]
    a, n_a, b, n_b = split_tallies(mechanism, counts, 700, 5, np.random.default_rng(1))
    assert supports_selection(mechanism)
    assert (n_a, n_b) == (350, 350)
    assert np.all(a + b == counts) and np.all(a >= 0) and np.all(b >= 0)


def test_a_report_count_half_is_a_random_half_of_the_reports():
    """k-RR: A's counts are multivariate hypergeometric, so each count's mean is c * n_A / n, and a
    count's variance c (n - c) n_A n_B / (n^2 (n - 1)); 4000 splits put the mean within 4 SE."""
    mechanism = make_mechanism("krr", k=3, epsilon=1.0)
    counts = np.array([500, 300, 200])
    a, n_a, _, _ = split_tallies(mechanism, counts, 1000, 4000, np.random.default_rng(7))
    variance = counts * (1000 - counts) * n_a * (1000 - n_a) / (1000**2 * 999)
    assert np.all(np.abs(a.mean(axis=0) - counts * n_a / 1000) < 4 * np.sqrt(variance / 4000))
    assert np.all(a.sum(axis=1) == n_a)


def test_the_choice_is_a_function_of_the_tally():
    mechanism = make_mechanism("subset", k=5, epsilon=1.0)
    tallies = mechanism.sample_tallies(np.full(5, 100), 2, rng=2)
    first = choose_estimators(mechanism, tallies, 500)
    assert first == choose_estimators(mechanism, tallies, 500)
    assert set(first) <= set(candidates(mechanism))


def test_the_cross_fit_estimate_is_consistent():
    mechanism = make_mechanism("krr", k=5, epsilon=2.0)
    tallies = mechanism.sample_tallies(np.array([400, 300, 200, 100, 0]), 2, rng=5)
    shares = estimate_proportions(mechanism, tallies, 1000, "cross-fit")
    assert np.allclose(shares.sum(axis=1), 1) and np.all(shares >= 0)


def test_expected_largest_matches_one_normal_and_grows_with_k():
    """E|Z| = sd sqrt(2 / pi) for one option; the maximum of more options is larger."""
    assert expected_largest(np.array([[0.04]]))[0] == pytest.approx(0.2 * np.sqrt(2 / np.pi), rel=1e-3)
    assert expected_largest(np.full((1, 20), 0.04))[0] > expected_largest(np.full((1, 2), 0.04))[0]
