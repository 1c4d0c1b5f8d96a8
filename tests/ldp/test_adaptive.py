"""Two-phase designs (ldp.adaptive): the choice reads only phase 1, every design is epsilon-LDP,
and the combination is unbiased with the variance it states."""

from __future__ import annotations

import numpy as np
import pytest

from ldp import make_mechanism
from ldp.adaptive import combine, combined_consistent, design_candidates, focus_candidates, joint_shares, retune
from ldp.estimators import estimate_proportions


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_every_design_retune_can_choose_is_epsilon_ldp_exactly(epsilon):
    """max over reports and answer pairs of ln P[y | v] / P[y | v'] is epsilon, by enumeration."""
    for mechanism in design_candidates(5, epsilon):
        if mechanism.name == "olh":  # its reports depend on a hash; checked in test_privacy_exact.py
            assert mechanism.worst_case_log_ratio() == pytest.approx(epsilon)
            continue
        p = mechanism.report_probabilities()
        ratio = np.log(p.max(axis=0) / p.min(axis=0)).max()
        assert ratio == pytest.approx(epsilon, abs=1e-9)


def test_retune_depends_on_the_phase_one_estimate_only():
    """Same phase-1 estimate, same design: no argument carries a phase-2 answer."""
    shares = np.r_[0.5, np.full(9, 0.5 / 9)]
    first = retune(shares, 10, 1.0, 2000)
    assert first == retune(shares.copy(), 10, 1.0, 2000)
    assert first.build(10, 1.0).worst_case_log_ratio() == pytest.approx(1.0)


def test_combination_is_unbiased_with_the_stated_variance():
    """Two versions (k-RR, subset selection) of a k = 5 question, 2000 repetitions: the combined
    estimate's mean is within 4 standard errors of the truth and its variance within 15 %."""
    truth = np.array([500, 250, 125, 75, 50])
    first, second = make_mechanism("krr", k=5, epsilon=1.0), make_mechanism("subset", k=5, epsilon=1.0, subset_size=2)
    n1, n2 = 300, 700
    one = first.sample_tallies(np.round(truth * n1 / 1000).astype(int), 2000, rng=1)
    two = second.sample_tallies(np.round(truth * n2 / 1000).astype(int), 2000, rng=2)
    u1 = estimate_proportions(first, one, n1, "unbiased")
    u2 = estimate_proportions(second, two, n2, "unbiased")
    combined = np.array([combine([(first, a, n1), (second, b, n2)]).unbiased for a, b in zip(u1, u2, strict=True)])
    shares = truth / 1000
    stated = combine([(first, shares, n1), (second, shares, n2)]).variances(shares)
    assert np.all(np.abs(combined.mean(axis=0) - shares) < 4 * np.sqrt(stated / 2000))
    assert np.allclose(combined.var(axis=0), stated, rtol=0.15)
    # Never worse than either version alone.
    assert np.all(stated <= first.unit_variances @ shares / n1)
    assert np.all(stated <= second.unit_variances @ shares / n2)


def test_the_combined_estimate_is_consistent_and_inside_its_bands():
    first, second = make_mechanism("krr", k=5, epsilon=1.0), make_mechanism("krr", k=5, epsilon=2.0)
    u1 = estimate_proportions(first, first.sample_tallies(np.full(5, 40), 1, rng=3), 200, "unbiased")[0]
    u2 = estimate_proportions(second, second.sample_tallies(np.full(5, 160), 1, rng=4), 800, "unbiased")[0]
    estimate = combined_consistent(combine([(first, u1, 200), (second, u2, 800)]))
    low, high = estimate.confidence_interval()
    assert estimate.proportions.sum() == pytest.approx(1.0) and np.all(estimate.proportions >= 0)
    assert np.all((low <= estimate.proportions) & (estimate.proportions <= high))


def test_every_focused_design_retune_can_choose_is_epsilon_ldp_exactly():
    """Focused response on phase 1's largest options, m = 1 .. 8 at k = 20: enumerated ratio = epsilon."""
    shares = 1.0 / np.arange(1, 21) ** 1.1
    for mechanism in focus_candidates(shares / shares.sum(), 20, 1.0):
        p = mechanism.report_probabilities()
        assert np.log(p.max(axis=0) / p.min(axis=0)).max() == pytest.approx(1.0, abs=1e-9)
        assert mechanism.params()["focus"] == list(range(len(mechanism.params()["focus"])))


def test_retune_focuses_on_one_option_that_phase_one_found_dominant():
    """90 % on one option of ten, 5,000 respondents to come, epsilon = 1: naming it beats every
    full-domain design, and the design is built from the phase-1 estimate alone."""
    shares = np.r_[0.9, np.full(9, 0.1 / 9)]
    design = retune(shares, 10, 1.0, 5000, focus=True)
    assert design.mechanism == "focus" and design.params["focus"][0] == 0
    assert design == retune(shares.copy(), 10, 1.0, 5000, focus=True)
    assert retune(shares, 10, 1.0, 5000, focus=True, evenness_p=0.5).mechanism != "focus"


def test_joint_shares_of_one_design_split_in_two_is_that_design_s_likelihood():
    """Two k-RR versions with the same parameters: the joint likelihood is the pooled tally's."""
    mechanism = make_mechanism("krr", k=5, epsilon=1.0)
    one, two = mechanism.sample_tallies(np.array([40, 30, 20, 5, 5]), 2, rng=5)
    split = joint_shares([(mechanism, one, 100), (mechanism, two, 100)])
    pooled = joint_shares([(mechanism, one + two, 200)])
    np.testing.assert_allclose(split, pooled, atol=1e-6)


@pytest.mark.parametrize("first", ["krr", "subset"])
def test_joint_shares_recover_every_option_from_a_full_and_a_focused_version(first):
    """At the expected tallies (no noise) the joint estimate is the truth: phase 1 identifies the
    split inside the bucket, phase 2 the named options and the bucket's total."""
    truth = np.array([0.35, 0.25, 0.15, 0.1, 0.1, 0.05])
    one = make_mechanism(first, k=6, epsilon=1.0)
    two = make_mechanism("focus", k=6, epsilon=1.0, focus=[0, 1])
    ones = 1000 * one.response_matrix @ truth
    twos = 9000 * two.response_matrix @ truth
    estimate = joint_shares([(one, ones, 1000), (two, twos, 9000)], tolerance=1e-13, iterations=100_000)
    np.testing.assert_allclose(estimate, truth, atol=1e-6)


def test_joint_shares_refuse_a_tally_that_is_not_one_report_per_count():
    with pytest.raises(ValueError, match="joint_shares"):
        joint_shares([(make_mechanism("hadamard", k=5, epsilon=1.0), np.ones(5), 10)])


def test_retune_beats_the_design_it_is_given_or_keeps_it():
    """With ``current`` the baseline is the question's own design, not the advisor's: a hand-picked
    k-RR at k = 10, epsilon = 1 gives way to subset selection of 3 on answers 60 % on one option
    (expected largest error 0.078 against 0.093, probed), and subset selection of 3 stays."""
    shares = np.r_[0.6, np.full(9, 0.4 / 9)]
    krr = make_mechanism("krr", k=10, epsilon=1.0)
    subset = make_mechanism("subset", k=10, epsilon=1.0, subset_size=3)
    moved = retune(shares, 10, 1.0, 1700, current=krr)
    assert (moved.mechanism, moved.params) == ("subset", {"subset_size": 3})
    kept = retune(shares, 10, 1.0, 1700, current=subset)
    assert (kept.mechanism, kept.params) == ("subset", {"subset_size": 3})
    even = retune(np.full(10, 0.1), 10, 1.0, 1700, current=krr, evenness_p=0.5)
    assert even.mechanism == "krr"  # answers that look even keep the design they started with
