"""Power and sample size (ldp/power.py): closed forms, the mechanisms' own variances, simulation.

Simulated power has Monte-Carlo SE sqrt(0.8 * 0.2 / REPS): 0.63 % at 4,000 surveys (the share
comparison, within 0.025 of the normal approximation) and 1.3 % at 1,000 (the regression
coefficient, marked statistical, within 0.04).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldp.designs import ForcedResponse, Warner
from ldp.mechanisms import KRandomizedResponse
from ldp.power import (
    per_respondent_variance,
    regression_information,
    regression_sample_size,
    two_shares_power,
    two_shares_sample_size,
)
from ldp.regression import _derivatives, dummies, fit_regression

FORCED = ForcedResponse(k=2, epsilon=math.log(5), forced=["1/6", "1/6"])
WARNER = Warner(k=2, epsilon=math.log(3), p="3/4")
Z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)


@pytest.mark.parametrize("share", [0.05, 0.3, 0.5, 0.9])
def test_the_variance_is_the_literatures_closed_form(share):
    # Warner: lambda (1 - lambda) / (2p - 1)^2; forced response: lambda (1 - lambda) / t^2.
    lam = 0.25 + 0.5 * share
    assert per_respondent_variance(WARNER, share) == pytest.approx(lam * (1 - lam) / 0.25, rel=1e-12)
    lam = 1 / 6 + 2 / 3 * share
    assert per_respondent_variance(FORCED, share) == pytest.approx(lam * (1 - lam) / (4 / 9), rel=1e-12)


@pytest.mark.parametrize("k", [2, 3, 6])
def test_the_variance_is_k_rrs_fixed_population_variance_plus_the_sampling_of_answers(k):
    mechanism = KRandomizedResponse(k=k, epsilon=1.2)
    share = 0.35
    f = np.full(k, (1 - share) / (k - 1))
    f[1] = share
    fixed = mechanism.report_variances(f)[1]  # ldp.mechanisms.krr's closed form
    assert per_respondent_variance(mechanism, share, option=1) == pytest.approx(fixed + share * (1 - share), rel=1e-10)


def test_the_sample_size_is_the_normal_approximation_and_reaches_the_power():
    n = two_shares_sample_size(FORCED, 0.2, 0.3)
    variance = per_respondent_variance(FORCED, 0.2) + per_respondent_variance(FORCED, 0.3)
    assert n == math.ceil(Z * Z * variance / 0.01)
    assert two_shares_power(FORCED, 0.2, 0.3, n) >= 0.8 > two_shares_power(FORCED, 0.2, 0.3, n - 2)
    # A smaller budget needs more respondents: the design's variance, not a fixed rule.
    weaker = ForcedResponse(k=2, epsilon=1.0)
    assert two_shares_sample_size(weaker, 0.2, 0.3) > n
    assert two_shares_sample_size(FORCED, 0.2, 0.3, power=0.9) > n


def test_the_simulated_power_at_that_size_is_80_percent():
    n = two_shares_sample_size(FORCED, 0.2, 0.3)
    reps = 4000
    rng = np.random.default_rng(9)
    estimates, variances = [], []
    for share in (0.2, 0.3):
        lam = rng.multinomial(n, FORCED.channel.T @ [share, 1 - share], size=reps)[:, 0] / n
        estimates.append((lam - 1 / 6) / (2 / 3))  # Fox and Tracy's estimator and its variance
        variances.append(lam * (1 - lam) / (n * 4 / 9))
    z = (estimates[0] - estimates[1]) / np.sqrt(variances[0] + variances[1])
    rejected = np.mean(np.abs(z) > stats.norm.ppf(0.975))
    assert abs(rejected - two_shares_power(FORCED, 0.2, 0.3, n)) <= 0.025


def test_the_regression_information_is_the_expected_negative_hessian():
    rows = np.array([[1.0, 0, 0], [1, 1, 0], [1, 0, 1]])
    shares = np.array([0.5, 0.3, 0.2])
    mechanism = KRandomizedResponse(k=3, epsilon=1.5)
    beta = np.array([[0.5, -0.3], [-0.8, 0.4], [0.6, 0.2]])
    information = regression_information(mechanism, rows, shares, beta)
    # Louis: E[s s^T] = E[-H]; -H summed over every (row, report) weighted by its probability.
    channel = mechanism.report_probabilities()
    x = np.repeat(rows, 3, axis=0)
    reports = np.tile(np.arange(3), 3)
    weights = np.concatenate([q * (channel.T @ p) for q, p in zip(shares, _shares_of(rows, beta), strict=True)])
    _, hessian = _derivatives(beta, channel, reports, x, 2, weights)
    np.testing.assert_allclose(information, -hessian, rtol=1e-10, atol=1e-14)


def _shares_of(rows, beta):
    eta = np.column_stack([rows @ beta, np.zeros(len(rows))])
    return np.exp(eta) / np.exp(eta).sum(axis=1, keepdims=True)


def test_regression_sample_size_grows_with_a_smaller_effect_and_budget():
    rows, shares = [[1, 0], [1, 1]], [0.5, 0.5]
    n = regression_sample_size(FORCED, rows, shares, [[-0.4], [0.5]])
    assert regression_sample_size(FORCED, rows, shares, [[-0.4], [0.25]]) > 3.5 * n
    assert regression_sample_size(ForcedResponse(k=2, epsilon=1.0), rows, shares, [[-0.4], [0.5]]) > n


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: two_shares_sample_size(FORCED, 0.2, 0.2), "share_a and share_b must differ"),
        (lambda: two_shares_sample_size(FORCED, 0.2, 1.3), "shares must lie in"),
        (lambda: two_shares_sample_size(FORCED, 0.2, 0.3, power=1.0), "power must lie in"),
        (lambda: two_shares_sample_size(FORCED, 0.2, 0.3, alpha=0), "alpha must lie in"),
        (lambda: two_shares_sample_size(FORCED, 0.2, 0.3, option=2), "option must lie in"),
        (lambda: two_shares_power(FORCED, 0.2, 0.3, 0), "n must be a positive number"),
        (lambda: regression_sample_size(FORCED, [[1, 0], [1, 1]], [0.5, 0.4], [[0], [1]]), "row_shares must be"),
        (lambda: regression_sample_size(FORCED, [[1, 0], [1, 1]], [0.5, 0.5], [[1], [0]]), "must not be 0"),
    ],
)
def test_bad_arguments_are_refused_naming_them(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.slow
@pytest.mark.statistical
def test_the_simulated_power_for_a_coefficient_is_80_percent():
    beta = np.array([[-0.4], [0.5]])
    n = regression_sample_size(FORCED, [[1, 0], [1, 1]], [0.5, 0.5], beta)
    rng = np.random.default_rng(10)
    reps = 1000
    rejected = 0
    for _ in range(reps):
        group = rng.integers(0, 2, n)
        x = np.column_stack([np.ones(n), dummies(group, 2)])
        yes = rng.random(n) < 1 / (1 + np.exp(-(x @ beta)[:, 0]))
        reports = FORCED.randomize((~yes).astype(np.int64), rng=rng)[:, 0]
        fit = fit_regression(FORCED, reports, x)
        rejected += abs(fit.coefficients[1, 0] / fit.standard_errors[1, 0]) > stats.norm.ppf(0.975)
    assert abs(rejected / reps - 0.8) <= 0.04
