"""Modips from randomized reports (seed 002): sanitized statistics, Gibbs sampling, formula 6.11."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp import Tally
from ldp.numeric import make_numeric_mechanism
from ldp.numeric.modips import (
    SanitizedStatistics,
    gibbs_normal_gamma,
    interval_overlap,
    sanitized_statistics,
    second_moment_decoder,
    synthesize,
    t_interval,
)


@pytest.mark.parametrize("name", ["laplace", "gaussian", "piecewise", "hybrid"])
def test_the_second_moment_decoder_is_unbiased_on_every_grid_point(name):
    mechanism = make_numeric_mechanism(name, lo=0, hi=10, epsilon=2.0)
    k = np.arange(mechanism.grid + 1)
    np.testing.assert_allclose(mechanism.report_probabilities() @ second_moment_decoder(mechanism), k**2, atol=1e-5)


@pytest.mark.parametrize("name", ["1bitmean", "duchi"])
def test_one_bit_reports_cannot_give_a_variance(name):
    with pytest.raises(ValueError, match="identifies only the mean"):
        second_moment_decoder(make_numeric_mechanism(name, lo=0, hi=10, epsilon=1.0))


def test_sanitized_variance_is_unbiased_within_its_standard_error():
    # 300 surveys of 2000 respondents (Piecewise, epsilon 2, range [0, 80]): the mean of the raw
    # s^2* estimates lies within 4 standard errors of the respondents' variance (minus Var(x_bar),
    # the textbook bias of m2 - x_bar^2), and the delta-method standard error matches their spread.
    mechanism = make_numeric_mechanism("piecewise", lo=0, hi=80, epsilon=2.0)
    values = np.clip(np.random.default_rng(1).normal(42, 8, 2000), 0, 80)
    tallies = mechanism.sample_tallies(values, 300, rng=2)
    stats = [sanitized_statistics(mechanism, Tally(values.size, counts)) for counts in tallies]
    variances = np.array([s.variance for s in stats])
    errors = np.array([s.variance_standard_error for s in stats])
    assert variances.mean() == pytest.approx(values.var(), abs=4 * variances.std() / math.sqrt(300) + 1.0)
    assert errors.mean() == pytest.approx(variances.std(), rel=0.15)


def test_gibbs_posterior_centres_on_the_sanitized_statistics():
    # With a flat prior and n = 5000, mu's posterior is N(x_bar, s^2 / n) and 1 / lambda is close to s^2.
    statistics = SanitizedStatistics(5000, 42.0, 64.0, 1.0, (41.0, 43.0))
    posterior = gibbs_normal_gamma(statistics, rng=3)
    assert posterior.mu.size == 1000  # M = 5000 after a burn-in of 4000 (formula 6.9)
    assert posterior.mu.mean() == pytest.approx(42.0, abs=4 * math.sqrt(64 / 5000))
    assert posterior.mu.std() == pytest.approx(math.sqrt(64 / 5000), rel=0.15)
    assert (1 / posterior.precision).mean() == pytest.approx(64.0, rel=0.02)
    records = synthesize(posterior, 20_000, rng=4)
    assert records.mean() == pytest.approx(42.0, abs=0.3) and records.var() == pytest.approx(64.0, rel=0.05)


def test_the_t_interval_is_formula_6_10():
    values = np.array([1.0, 2.0, 3.0, 4.0])
    # x_bar = 2.5, S = sqrt(1.25) (divisor n), t_{0.975, 3} = 3.182446 (R: qt(0.975, 3)).
    half = 3.182446305284263 * math.sqrt(1.25) / math.sqrt(3)
    assert t_interval(values) == pytest.approx((2.5 - half, 2.5 + half))


@pytest.mark.parametrize(
    ("original", "synthetic", "expected"),
    [((0, 2), (0, 2), 1.0), ((0, 2), (1, 3), 0.5), ((0, 2), (2, 4), 0.0), ((0, 4), (1, 2), 0.125 + 0.5)],
)
def test_interval_overlap_is_formula_6_11(original, synthetic, expected):
    assert interval_overlap(original, synthetic) == pytest.approx(expected)
