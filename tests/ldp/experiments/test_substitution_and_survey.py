"""Seed 001's and seed 004's experiment code, on small grids."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp import Tally, make_mechanism
from ldp.experiments import estimates_from_tallies, substitution, survey


def test_changed_ratio_is_one_minus_the_keep_probability():
    rng = np.random.default_rng(2)
    counts = substitution.make_counts("uniform", 20, rng, records=100_000)
    gamma = 5.0
    _, changed = substitution.perturb_and_reconstruct(counts, gamma, rng)
    expected = 1 - gamma / (gamma + 20 - 1)
    assert changed == pytest.approx(expected, abs=4 * math.sqrt(expected * (1 - expected) / 100_000))


def test_errors_fall_as_gamma_grows():
    rows = substitution.run_grid(repetitions=3, sizes=(50,), gammas=(2, 21), records=100_000)
    normal = {r.gamma: r for r in rows if r.distribution == "normal"}
    assert normal[21].error1 < normal[2].error1
    assert normal[21].changed_ratio < normal[2].changed_ratio


def test_error_measures_are_zero_for_a_perfect_reconstruction():
    counts = np.array([5, 10, 20, 10, 5])
    assert substitution.errors(counts, counts.astype(float)) == (0.0, 0.0, 0.0)
    assert substitution.mean_and_sd(np.array([0, 1, 0])) == (2.0, 0.0)


@pytest.mark.parametrize("estimator", ["unbiased", "norm-sub"])
def test_vectorized_estimates_equal_ldps(estimator):
    for mechanism in (make_mechanism("krr", k=5, epsilon=1.0), make_mechanism("dbitflip", k=5, epsilon=1.0, d=4)):
        tallies = mechanism.sample_tallies([30, 20, 20, 20, 10], 5, rng=1)
        stacked = estimates_from_tallies(mechanism, tallies, 100, estimator)
        for row, counts in zip(stacked, tallies, strict=True):
            estimate = mechanism.estimate(Tally(100, counts))
            expected = estimate.proportions if estimator == "unbiased" else estimate.consistent().proportions
            np.testing.assert_allclose(row, expected, atol=1e-12)


def test_survey_grid_smoke(tmp_path, monkeypatch):
    monkeypatch.setattr(survey, "SIZES", (500, 5000))
    monkeypatch.setattr(survey, "EPSILONS", (0.5, 5.0))
    cells = survey.run_grid(repetitions=30)
    assert len(cells) == 2 * 2 * len(survey.SETTINGS)
    by = {(c.n, c.epsilon, c.label): c for c in cells}
    for setting in survey.SETTINGS:
        assert by[(5000, 5.0, setting.label)].mean_max_error < by[(500, 0.5, setting.label)].mean_max_error
    table = survey.lowest_error_table(cells, ("CMS (paper)", "4BitFlip", "5BitFlip"))
    assert set(table) == {(n, e) for n in (500, 5000) for e in (0.5, 5.0)}
    survey.write_cells(cells, tmp_path / "grid.csv")
    survey.plot_cells(cells, ["k-RR", "5BitFlip"], tmp_path / "grid.png", "smoke")
    assert (tmp_path / "grid.png").stat().st_size > 1000


def test_krr_mean_max_error_matches_its_analytic_sd_at_large_n():
    # With n = 10,000 and epsilon = 5 the errors are nearly normal with the analytic sd; the mean of
    # the largest of 5 correlated |errors| lies between the mean of one |error| and the sum bound.
    mechanism = make_mechanism("krr", k=5, epsilon=5.0)
    counts = np.full(5, 2000)
    setting = survey.Setting("k-RR", "krr", {})
    errors = survey.max_errors(setting, 5.0, counts, 400, np.random.default_rng(3))
    sd = math.sqrt(mechanism.covariance(np.full(5, 0.2), 10_000)[0, 0])
    assert sd * math.sqrt(2 / math.pi) < errors.mean() < 5 * sd * math.sqrt(2 / math.pi)


def test_coverage_experiment_smoke(tmp_path, monkeypatch):
    from ldp.experiments import coverage

    monkeypatch.setattr(coverage, "SETTINGS", {"k-RR": ("krr", {})})
    monkeypatch.setattr(coverage, "SIZES", (1000,))
    rows = coverage.run(tmp_path, repetitions=50)
    assert [r.distribution for r in rows] == list(coverage.DISTRIBUTIONS)
    assert all(0 <= r.consistent_min <= r.consistent_max <= 1 for r in rows)
    assert (tmp_path / "coverage.csv").exists()
