"""Seed 002's pieces against exact values: Laplace sampler, mu-GDP, Gibbs sampler, overlap."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldp.experiments import central


def test_the_papers_worked_example_used_a_base_10_logarithm():
    # U = 0.3, Delta f = 1, epsilon = 0.2 (b = 5): -5 ln(0.4) = 4.5815; the paper's 1.9897 = -5 log10(0.4).
    assert float(central.laplace_noise(0.3, 1, 0.2)) == pytest.approx(-5 * math.log(0.4), abs=1e-12)
    assert float(central.laplace_noise(0.3, 1, 0.2, np.log10)) == pytest.approx(1.9897, abs=5e-5)


def test_formula_3_3_samples_the_laplace_distribution():
    # Kolmogorov-Smirnov against Laplace(0, b): with 20,000 draws the statistic stays below its
    # alpha = 0.001 critical value 1.95 / sqrt(n) unless the sampler is wrong.
    rng = np.random.default_rng(3)
    noise = central.sample_laplace(20_000, sensitivity=2.0, epsilon=0.5, rng=rng)
    result = stats.kstest(noise, stats.laplace(scale=4.0).cdf)
    assert result.statistic < 1.95 / math.sqrt(noise.size)
    # ...and is sensitive: the base-10 variant is a different distribution.
    wrong = central.laplace_noise(rng.uniform(-0.5, 0.5, 20_000), 2.0, 0.5, np.log10)
    assert stats.kstest(wrong, stats.laplace(scale=4.0).cdf).statistic > 1.95 / math.sqrt(noise.size)


@pytest.mark.parametrize("epsilon", central.EPSILONS)
def test_mu_solves_the_delta_equation_exactly(epsilon):
    mu = central.gdp_mu(epsilon, 1e-5)
    assert central.gdp_delta(epsilon, mu) == pytest.approx(1e-5, rel=1e-9)
    # The paper's table is 1-2 % below the exact solution (so its delta is a little smaller).
    assert -0.02 < central.PAPER_MU[epsilon] / mu - 1 < -0.01
    assert central.gdp_delta(epsilon, central.PAPER_MU[epsilon]) < 1e-5


def test_mu_at_epsilon_1_is_0_2681():
    assert central.gdp_mu(1.0) == pytest.approx(0.2681, abs=5e-5)


def test_classical_gaussian_sigma_explains_the_papers_epsilon_delta_column():
    # Its MAPE is proportional to sigma, so the paper's (eps, delta) / mu-GDP MAPE ratios (Table 6.3)
    # should be sigma_classical / sigma_GDP = sqrt(2 ln(1.25e5)) mu / epsilon, at the paper's mu.
    for epsilon, classical in central.PAPER_MAPE_MEAN["classical Gaussian"].items():
        ratio = classical / central.PAPER_MAPE_MEAN["Gaussian DP"][epsilon]
        predicted = central.classical_gaussian_sigma(epsilon, 1e-5, 1.0) * central.PAPER_MU[epsilon]
        assert ratio == pytest.approx(predicted, rel=0.05)


def test_synthetic_data_has_the_papers_moments_and_bounds():
    data = central.synthetic_financial_data(np.random.default_rng(1))
    assert data.size == central.RECORDS
    assert data.min() >= central.LOWER and data.max() <= central.UPPER
    assert data.mean() == pytest.approx(central.MEAN, rel=1e-3)
    assert data.var() == pytest.approx(central.VARIANCE, rel=1e-3)


def test_gibbs_sampler_approaches_the_analytic_posterior_with_vague_priors_and_no_noise():
    rng = np.random.default_rng(11)
    n, x_bar, s2 = 500, 10.0, 4.0
    mus, lambdas = central.gibbs_normal_gamma(x_bar, s2, n, rng)
    draws = mus.size  # 1000 after burn-in; the two blocks are nearly independent here
    spread = math.sqrt(s2 / n)
    # mu: centred on x_bar with sd s / sqrt(n); the mean of the draws within 4 Monte Carlo errors.
    assert abs(mus.mean() - x_bar) < 4 * spread / math.sqrt(draws)
    assert mus.std() == pytest.approx(spread, rel=4 * math.sqrt(1 / (2 * draws)))
    # lambda | mu ~ Gamma(n/2, rate (n s^2 + n (x_bar - mu)^2)/2), so E[lambda] = (1/s^2)(1 - 1/n + ...).
    relative_mc_error = math.sqrt(2 / n) / math.sqrt(draws)
    assert 1 / lambdas.mean() == pytest.approx(s2 * (1 + 1 / n), rel=4 * relative_mc_error + 1 / n)


@pytest.mark.parametrize(
    ("original", "synthetic", "expected"),
    [((0, 2), (0, 2), 1.0), ((0, 2), (3, 4), 0.0), ((0, 2), (1, 3), 0.5), ((0, 4), (1, 2), 0.5 / 4 + 0.5 / 1 * 1)],
)
def test_interval_overlap_is_formula_6_11(original, synthetic, expected):
    assert central.interval_overlap(original, synthetic) == pytest.approx(expected)


def test_modips_runs_and_more_budget_means_less_distortion():
    rows = central.modips_experiment(seed=5, repetitions=4)
    assert [r.epsilon for r in rows] == [0.1, 1.0, 10.0]
    errors = [abs(r.posterior_mean - central.MEAN) for r in rows]
    assert errors[2] < errors[0]
    assert all(0 <= r.overlap <= 1 for r in rows)


def test_noise_experiment_smoke():
    rows = central.noise_experiment(repetitions=500, seed=1)
    mechanisms = {(r.statistic, r.mechanism) for r in rows}
    assert ("mean", "Laplace") in mechanisms and ("variance", "Gaussian DP") in mechanisms
    assert not any(r.mechanism == "classical Gaussian" and r.epsilon >= 1 for r in rows)
    by = {(r.statistic, r.mechanism, r.epsilon): r for r in rows}
    # Noise scale is exact, so MAE of Gaussian noise is sigma sqrt(2/pi) up to Monte Carlo error.
    row = by[("mean", "Gaussian DP", 1.0)]
    assert row.mae == pytest.approx(row.noise_scale * math.sqrt(2 / math.pi), rel=4 * 0.6 / math.sqrt(500))
