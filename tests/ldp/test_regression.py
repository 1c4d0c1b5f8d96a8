"""Regression of randomized answers on direct covariates (ldp/regression.py).

Each fit is checked against an independent maximization written here: the likelihood of the
reports coded directly from its definition (van den Hout and van der Heijden 2007), maximized by
scipy.optimize's BFGS, its standard errors from a finite-difference Hessian of that likelihood.
The simulations (marked statistical) draw respondents from a known beta and check, over REPS
surveys, that each coefficient is unbiased within 3 Monte-Carlo standard errors (sd / sqrt(REPS))
and that its 95 % interval covers it 93-97 % of the time (Monte-Carlo SE 0.69 % at 1,000).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import optimize

from ldp.designs import ForcedResponse
from ldp.mechanisms import KRandomizedResponse
from ldp.regression import channel_of, dummies, fit_regression

FORCED = ForcedResponse(k=2, epsilon=math.log(5), forced=["1/6", "1/6"])
KRR3 = KRandomizedResponse(k=3, epsilon=1.5)
#: Log-odds of option 0 against the last option: intercept, group 1, group 2 (three direct groups).
BETA_BINARY = np.array([[-0.4], [0.9], [-0.5]])
BETA_MULTI = np.array([[0.5, -0.3], [-0.8, 0.4], [0.6, 0.2]])


def simulate(mechanism, beta, n, rng):
    """(reports, design matrix) of n respondents in three equally likely direct groups."""
    groups = rng.integers(0, 3, n)
    x = np.column_stack([np.ones(n), dummies(groups, 3)])
    eta = np.column_stack([x @ beta, np.zeros(n)])  # baseline: the last option
    shares = np.exp(eta - eta.max(axis=1, keepdims=True))
    shares /= shares.sum(axis=1, keepdims=True)
    answers = (rng.random(n)[:, None] > np.cumsum(shares, axis=1)[:, :-1]).sum(axis=1)
    return mechanism.randomize(answers, rng=rng)[:, 0], x


def direct_fit(channel, reports, x):
    """BFGS on -sum_i ln sum_v pi_iv M[v, y_i], the multinomial logit with the last option as base."""
    k, p = channel.shape[0], x.shape[1]

    def negative(flat):
        eta = np.column_stack([x @ flat.reshape(p, k - 1), np.zeros(len(x))])
        log_pi = eta - np.logaddexp.reduce(eta, axis=1, keepdims=True)
        return -np.sum(np.logaddexp.reduce(log_pi + np.log(channel[:, reports].T), axis=1))

    result = optimize.minimize(negative, np.zeros(p * (k - 1)), method="BFGS", jac="3-point", options={"gtol": 1e-7})
    h = 1e-4
    size = p * (k - 1)
    hessian = np.empty((size, size))
    for i in range(size):
        for j in range(size):
            e_i, e_j = np.eye(size)[i] * h, np.eye(size)[j] * h
            hessian[i, j] = (
                negative(result.x + e_i + e_j)
                - negative(result.x + e_i - e_j)
                - negative(result.x - e_i + e_j)
                + negative(result.x - e_i - e_j)
            ) / (4 * h * h)
    return result.x.reshape(p, k - 1), np.sqrt(np.diag(np.linalg.inv(hessian))).reshape(p, k - 1)


@pytest.mark.parametrize(("mechanism", "beta", "n"), [(FORCED, BETA_BINARY, 2000), (KRR3, BETA_MULTI, 2000)])
def test_the_fit_matches_an_independent_direct_maximization(mechanism, beta, n):
    reports, x = simulate(mechanism, beta, n, np.random.default_rng(5))
    fit = fit_regression(mechanism, reports, x)
    coefficients, errors = direct_fit(channel_of(mechanism), reports, x)
    assert fit.converged
    assert_allclose(fit.coefficients, coefficients, atol=1e-6)
    assert_allclose(fit.standard_errors, errors, rtol=1e-4)
    low, high = fit.confidence_interval()
    assert_allclose(high - low, 2 * 1.959963984540054 * fit.standard_errors)


def test_predicted_shares_per_group_and_their_delta_method_errors():
    reports, x = simulate(KRR3, BETA_MULTI, 3000, np.random.default_rng(6))
    fit = fit_regression(KRR3, reports, x)
    rows = np.array([[1.0, 0, 0], [1, 1, 0], [1, 0, 1]])
    shares, errors = fit.predict(rows)
    eta = np.column_stack([rows @ fit.coefficients, np.zeros(3)])
    assert_allclose(shares, np.exp(eta) / np.exp(eta).sum(axis=1, keepdims=True), rtol=1e-12)
    # The delta method by finite differences of the shares over the coefficients.
    h = 1e-6
    jacobian = np.empty((3, 3, fit.coefficients.size))
    for i in range(fit.coefficients.size):
        step = np.zeros(fit.coefficients.size)
        step[i] = h
        up = np.column_stack([rows @ (fit.coefficients + step.reshape(3, 2)), np.zeros(3)])
        down = np.column_stack([rows @ (fit.coefficients - step.reshape(3, 2)), np.zeros(3)])
        jacobian[:, :, i] = (
            np.exp(up) / np.exp(up).sum(axis=1, keepdims=True) - np.exp(down) / np.exp(down).sum(axis=1, keepdims=True)
        ) / (2 * h)
    expected = np.sqrt(np.einsum("gvi,ij,gvj->gv", jacobian, fit.covariance, jacobian))
    assert_allclose(errors, expected, rtol=1e-6)
    assert_allclose(shares.sum(axis=1), 1)


def test_a_group_without_variation_in_covariates_is_the_design_estimate():
    # An intercept only: the fitted share is the MLE of the share, which inside [0, 1] is the
    # design's moment estimate.
    rng = np.random.default_rng(8)
    reports, _ = simulate(FORCED, BETA_BINARY, 5000, rng)
    fit = fit_regression(FORCED, reports, np.ones((reports.size, 1)))
    counts = np.bincount(reports, minlength=2)
    moment = FORCED.analyze(FORCED.tally(reports.reshape(-1, 1).astype(np.uint8))).proportions
    assert fit.predict([[1.0]])[0][0] == pytest.approx(moment, abs=1e-9)
    assert counts.sum() == 5000


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: fit_regression(FORCED, np.array([0, 1, 2]), np.ones((3, 1))), "reports must be option indices"),
        (lambda: fit_regression(FORCED, np.array([0, 1]), np.ones((3, 1))), "covariates must be an"),
        (lambda: fit_regression(FORCED, np.array([0, 1]), np.ones((2, 2))), "full column rank"),
        (lambda: fit_regression(FORCED, np.array([0, 1]), np.ones((2, 1)), baseline=2), "baseline must lie"),
        (lambda: fit_regression(np.ones((2, 3)) / 3, np.array([0, 1]), np.ones((2, 1))), "channel must be a k x k"),
        (lambda: fit_regression(np.ones((2, 2)), np.array([0, 1]), np.ones((2, 1))), "row-stochastic"),
        (lambda: dummies([0, 3], 3), "codes must be integers in"),
        (lambda: dummies([0, 1], 3, reference=3), "reference must lie"),
    ],
)
def test_bad_arguments_are_refused_naming_them(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.slow
@pytest.mark.statistical
@pytest.mark.parametrize("n", [2000, 10_000])
@pytest.mark.parametrize(("mechanism", "beta"), [(FORCED, BETA_BINARY), (KRR3, BETA_MULTI)], ids=["forced", "krr3"])
def test_coefficients_are_unbiased_and_their_intervals_cover(mechanism, beta, n):
    reps = 1000
    rng = np.random.default_rng(2000 + n)
    estimates, covered = [], []
    for _ in range(reps):
        fit = fit_regression(mechanism, *simulate(mechanism, beta, n, rng))
        low, high = fit.confidence_interval()
        estimates.append(fit.coefficients)
        covered.append((low <= beta) & (beta <= high))
    estimates = np.array(estimates)
    monte_carlo_se = estimates.std(axis=0, ddof=1) / math.sqrt(reps)
    assert np.all(np.abs(estimates.mean(axis=0) - beta) <= 3 * monte_carlo_se), (estimates.mean(axis=0), beta)
    rate = np.mean(covered, axis=0)
    assert np.all((rate >= 0.93) & (rate <= 0.97)), rate


def test_distinct_rows_are_numpys_unique_rows_with_their_counts():
    from ldp.regression import _distinct_rows

    rng = np.random.default_rng(20261127)
    rows = np.column_stack([np.ones(500), rng.integers(0, 3, (500, 2)), rng.normal(size=500).round(1)])
    rows[:5, 1] = -0.0  # equal to 0.0, as for np.unique
    expected = np.unique(rows, axis=0, return_counts=True)
    patterns, counts = _distinct_rows(rows)
    np.testing.assert_array_equal(patterns, expected[0])
    np.testing.assert_array_equal(counts, expected[1])
