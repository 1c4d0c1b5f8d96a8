"""Question sampling with fake data (ldp.sampling): the exact epsilon of the whole submission, the
unbiased estimates corrected for fakes, and sampling against splitting at the same epsilon."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp.advisor import expected_half_width
from ldp.mechanisms import make_mechanism
from ldp.sampling import (
    expected_mse,
    expected_sampled_half_width,
    paper_epsilon,
    sampled_epsilon,
    sampled_estimate,
    submission_epsilon,
    worst_sampled_log_ratio,
)


@pytest.mark.parametrize(("name", "m"), [("krr", 1), ("krr", 2), ("oue", 1)])
def test_the_whole_submission_spends_exactly_m_times_the_per_question_epsilon(name, m):
    total = 1.5
    mechanism = make_mechanism(name, k=3, epsilon=sampled_epsilon(total, m, 3))
    tables = [mechanism.report_probabilities()] * 3
    assert math.isclose(worst_sampled_log_ratio(tables, m), total, rel_tol=1e-9)


def test_the_papers_amplified_epsilon_does_not_hold_for_the_whole_submission():
    amplified = paper_epsilon(1.0, 3)
    tables = [make_mechanism("krr", k=2, epsilon=amplified).report_probabilities()] * 3
    assert math.isclose(worst_sampled_log_ratio(tables, 1), amplified, rel_tol=1e-9)
    assert amplified > 1.0


@pytest.mark.parametrize("name", ["krr", "oue"])
def test_estimates_corrected_for_fakes_are_unbiased(name):
    rng = np.random.default_rng(8)
    mechanism = make_mechanism(name, k=4, epsilon=2.0)
    shares = np.array([0.4, 0.3, 0.2, 0.1])
    n, m, q = 40_000, 1, 5
    truth = np.repeat(np.arange(4), (shares * n).astype(int))
    inputs = np.where(rng.random(n) < m / q, truth, rng.integers(0, 4, size=n))
    est = sampled_estimate(mechanism, mechanism.tally(mechanism.randomize(inputs, rng=rng)), m, q)
    assert np.all(np.abs(est.proportions - shares) <= 4 * est.standard_errors)


def test_sampling_errs_less_than_splitting_for_krr_at_the_same_epsilon():
    """q = 5 questions of k = 4 at a whole-submission epsilon of 1: one question at epsilon = 1
    against all five at 0.2 (docs/experiments.md has the table)."""
    shares = np.array([0.4, 0.3, 0.2, 0.1])
    split = expected_mse(make_mechanism("krr", k=4, epsilon=0.2), shares, 10_000)
    sampled = expected_mse(make_mechanism("krr", k=4, epsilon=1.0), shares, 10_000, 0.2)
    assert sampled < 0.8 * split


@pytest.mark.slow
def test_the_analytic_variance_matches_simulation():
    rng = np.random.default_rng(4)
    mechanism = make_mechanism("krr", k=4, epsilon=1.0)
    shares = np.array([0.4, 0.3, 0.2, 0.1])
    n = 5000
    truth = np.repeat(np.arange(4), (shares * n).astype(int))
    errors = []
    for _ in range(1000):
        inputs = np.where(rng.random(n) < 0.2, truth, rng.integers(0, 4, size=n))
        est = sampled_estimate(mechanism, mechanism.tally(mechanism.randomize(inputs, rng=rng)), 1, 5)
        errors.append(np.mean((est.proportions - shares) ** 2))
    analytic = expected_mse(mechanism, shares, n, 0.2)
    assert abs(np.mean(errors) / analytic - 1) < 4 * math.sqrt(2 / 1000) * 2


@pytest.mark.parametrize("m", [1, 2])
def test_a_small_sampled_survey_is_exactly_total_ldp_over_every_draw_and_answer(m):
    """q = 3 yes/no questions, m of them answered at total / m: every draw and every answer vector is
    enumerated (:func:`worst_sampled_log_ratio`), the body's worst ratio is e^total, and
    :func:`submission_epsilon` states exactly that (the mirror of tests/js/sampling.test.mjs)."""
    total = 1.5
    epsilon = sampled_epsilon(total, m, 3)
    tables = [make_mechanism("krr", k=2, epsilon=epsilon).report_probabilities()] * 3
    assert math.isclose(worst_sampled_log_ratio(tables, m), total, rel_tol=1e-9)
    assert math.isclose(submission_epsilon([], [epsilon] * 3, m), total, rel_tol=1e-12)
    assert submission_epsilon([0.5], [epsilon] * 3, m) == pytest.approx(0.5 + total)


def test_the_sampled_half_width_is_the_unsampled_one_at_rate_one_and_wider_below():
    mechanism = make_mechanism("krr", k=4, epsilon=1.0)
    assert expected_sampled_half_width(mechanism, 2000, 1.0) == pytest.approx(expected_half_width(mechanism, 2000))
    assert expected_sampled_half_width(mechanism, 2000, 0.4) > expected_half_width(mechanism, 2000)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["krr", "oue"])
def test_rsfd_estimates_are_unbiased_and_their_bands_cover_95_percent(name):
    """2,000 seeded surveys of n = 2,000, one question asked of 2 of 5 (the others send fakes): the
    corrected shares average to the truth within 4 standard errors of the mean, and the analytic 95 %
    bands (:func:`sampled_covariance` at the plug-in) cover each share 94-96 % of the time, averaged
    over the options (a binomial standard error of 0.25 points)."""
    rng = np.random.default_rng(30)
    mechanism = make_mechanism(name, k=4, epsilon=1.5)
    shares = np.array([0.4, 0.3, 0.2, 0.1])
    n, m, q, surveys = 2000, 2, 5, 2000
    truth = np.repeat(np.arange(4), (shares * n).astype(int))
    estimates, covered = [], []
    for _ in range(surveys):
        inputs = np.where(rng.random(n) < m / q, truth, rng.integers(0, 4, size=n))
        est = sampled_estimate(mechanism, mechanism.tally(mechanism.randomize(inputs, rng=rng)), m, q)
        estimates.append(est.proportions)
        covered.append(np.abs(est.proportions - shares) <= 1.959963984540054 * est.standard_errors)
    estimates = np.array(estimates)
    spread = estimates.std(axis=0, ddof=1) / math.sqrt(surveys)
    assert np.all(np.abs(estimates.mean(axis=0) - shares) <= 4 * spread)
    assert 0.94 <= float(np.mean(covered)) <= 0.96
    # The half-width the builder's panel predicts matches the simulated spread within 10 %.
    predicted = expected_sampled_half_width(mechanism, n, m / q)
    uniform = np.full(4, 0.25)
    simulated = []
    for _ in range(400):
        inputs = np.where(rng.random(n) < m / q, rng.choice(4, size=n, p=uniform), rng.integers(0, 4, size=n))
        reports = mechanism.randomize(inputs, rng=rng)
        simulated.append(sampled_estimate(mechanism, mechanism.tally(reports), m, q).proportions)
    assert abs(1.959963984540054 * float(np.max(np.std(simulated, axis=0))) / predicted - 1) < 0.10
