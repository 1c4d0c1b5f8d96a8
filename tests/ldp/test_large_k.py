"""The large-k rule of "auto-ibu" (ldp.large_k)."""

from __future__ import annotations

import numpy as np
from scipy import stats

from ldp import make_mechanism
from ldp.estimators import estimate_proportions
from ldp.large_k import large_k_choice, largest_share_p_value
from ldp.selection import unbiased_rows
from ldp.simplex import project_onto_simplex


def test_the_largest_share_p_value_is_sidak_of_the_top_z():
    mechanism = make_mechanism("subset", k=40, epsilon=1.0)
    sd = np.sqrt(mechanism.report_variances(np.full(40, 1 / 40)) / 1000)
    unbiased = np.full(40, 1 / 40)
    unbiased[3] += 3 * sd[3]
    unbiased[5] -= 3 * sd[5]
    expected = 1 - stats.norm.cdf(3.0) ** 40
    assert abs(largest_share_p_value(mechanism, unbiased, 1000) - expected) < 1e-12


def test_the_rule_applies_only_at_large_k_with_support_counts():
    assert large_k_choice(make_mechanism("subset", k=20, epsilon=1.0), np.full(20, 0.05), 100) is None
    assert large_k_choice(make_mechanism("hadamard", k=64, epsilon=1.0), np.full(64, 1 / 64), 100) is None
    subset = make_mechanism("subset", k=64, epsilon=1.0)
    assert large_k_choice(subset, np.full(64, 1 / 64), 1000) == "eb"
    assert large_k_choice(subset, np.r_[0.5, np.full(63, 0.5 / 63)], 1000) == "ibu"


def test_even_answers_rarely_leave_empirical_bayes():
    """Under evenly spread answers each of the two tests rejects with probability about 2.5 %, so
    the rule leaves EB on at most about 5 % of tallies: 200 tallies, at most 10 + 4 SD (sd 3.1)."""
    mechanism = make_mechanism("subset", k=64, epsilon=1.0)
    n = 64 * 32
    tallies = mechanism.sample_tallies(np.full(64, 32), 200, rng=np.random.default_rng(11))
    unbiased = unbiased_rows(mechanism, tallies, n)
    left = sum(large_k_choice(mechanism, x, n) == "ibu" for x in unbiased)
    assert left <= 10 + 4 * np.sqrt(200 * 0.05 * 0.95)
    estimate = estimate_proportions(mechanism, tallies[:3], n, "auto-ibu")
    assert np.allclose(estimate.sum(axis=1), 1.0) and np.all(estimate >= 0)


def test_auto_ibu_avg_averages_ibu_and_norm_sub_where_the_rule_rejects():
    mechanism = make_mechanism("subset", k=64, epsilon=1.0)
    shares = 1 / np.arange(1, 65) ** 1.1
    counts = np.random.default_rng(3).multinomial(1000, shares / shares.sum())
    tallies = mechanism.sample_tallies(counts, 6, rng=np.random.default_rng(4))
    unbiased = unbiased_rows(mechanism, tallies, 1000)
    choices = [large_k_choice(mechanism, x, 1000) for x in unbiased]
    assert "ibu" in choices  # Zipf(1.1) answers: the sharper test rejects on most tallies
    averaged = estimate_proportions(mechanism, tallies, 1000, "auto-ibu-avg")
    ibu = estimate_proportions(mechanism, tallies, 1000, "auto-ibu")
    for choice, x, a, b in zip(choices, unbiased, averaged, ibu, strict=True):
        expected = (b + project_onto_simplex(x)) / 2 if choice == "ibu" else b
        assert np.allclose(a, expected)
    assert np.allclose(averaged.sum(axis=1), 1.0) and np.all(averaged >= 0)
