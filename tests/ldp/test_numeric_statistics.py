"""Numeric mean estimators: unbiased, and their 95 % intervals cover 94-96 %.

Each survey draws n = 400 respondents' values afresh from a skewed population on [lo, hi]
(a Beta(2, 5) law scaled to [0, 10], mean 20/7), randomizes them with the vectorized randomizer
and estimates the mean. The target is the population mean, which the interval from the data's
standard error is built for. Over R = 4000 seeded surveys a coverage rate has a standard error
of 0.34 %, so 94-96 % is a band of +-2.9 standard errors around 95 %; the mean of the R estimates
must lie within 4 standard errors (computed from the analytic per-report variance) of the truth.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp.numeric import make_numeric_mechanism

POPULATION_MEAN = 10 * 2 / 7
SURVEYS = 4000
N = 400

CASES = [
    ("laplace", 0.5, {"grid": 50}),
    ("laplace", 2.0, {"grid": 50}),
    ("gaussian", 1.0, {"delta": 1e-5}),
    ("gaussian", 3.0, {"delta": 1e-5}),
    ("1bitmean", 0.5, {}),
    ("1bitmean", 2.0, {}),
    ("duchi", 1.0, {}),
    ("piecewise", 0.5, {}),
    ("piecewise", 4.0, {}),
    ("hybrid", 1.0, {}),
    ("hybrid", 4.0, {}),
]


def simulate(name, epsilon, params, seed):
    mechanism = make_numeric_mechanism(name, lo=0, hi=10, epsilon=epsilon, **params)
    rng = np.random.default_rng(seed)
    values = 10 * rng.beta(2, 5, size=SURVEYS * N)
    indices = mechanism.sample_grid(mechanism.round_to_grid(values, rng=rng), rng)
    offsets = np.repeat(np.arange(SURVEYS) * mechanism.output_size, N)
    counts = np.bincount(indices + offsets, minlength=SURVEYS * mechanism.output_size)
    means, errors = mechanism.estimate_many(counts.reshape(SURVEYS, mechanism.output_size))
    # Analytic variance of one report for a random respondent: E[Var(report | x)] + Var(x).
    population_variance = 100 * (2 * 5) / ((2 + 5) ** 2 * (2 + 5 + 1))
    report_variance = mechanism.variance(values[:200_000]) + population_variance
    return mechanism, means, errors, report_variance


@pytest.mark.statistical
@pytest.mark.parametrize(("name", "epsilon", "params"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_mean_estimates_are_unbiased_and_cover(name, epsilon, params):
    # One seed per case, so the cases do not share their respondents' values.
    seed = 1400 + CASES.index((name, epsilon, params))
    mechanism, means, errors, report_variance = simulate(name, epsilon, params, seed=seed)
    standard_error = math.sqrt(report_variance / N)
    assert means.mean() == pytest.approx(POPULATION_MEAN, abs=4 * standard_error / math.sqrt(SURVEYS))
    # The spread of the estimates is the analytic one (within 6 %: R = 4000 gives ~2.2 % on an SD).
    assert means.std() == pytest.approx(standard_error, rel=0.06)
    covered = np.abs(means - POPULATION_MEAN) <= 1.959964 * errors
    assert 0.94 <= covered.mean() <= 0.96, f"coverage {covered.mean():.4f}"


def test_a_quick_unbiasedness_check():
    # The fast suite's version: 300 surveys of Piecewise at epsilon = 1.
    mechanism = make_numeric_mechanism("piecewise", lo=0, hi=10, epsilon=1.0)
    values = np.linspace(0, 10, N)
    means, errors = mechanism.estimate_many(mechanism.sample_tallies(values, 300, rng=1))
    se = math.sqrt(mechanism.variance(values) / N)
    assert means.mean() == pytest.approx(5.0, abs=4 * se / math.sqrt(300))
    assert errors.mean() == pytest.approx(se, rel=0.1)
