"""Post-processing to a consistent distribution, and confidence intervals."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import optimize

from ldp import FrequencyEstimate, clip_and_renormalize, project_onto_simplex

RAW = [
    [0.7, 0.5, -0.2],
    [0.2, 0.2, 0.2, 0.2, 0.2],
    [-0.3, -0.1, 0.05, 1.4],
    [0.1, 0.1],
    [-1.0, -2.0, -3.0],
]


@pytest.mark.parametrize("raw", RAW)
def test_projection_is_the_nearest_point_of_the_simplex(raw):
    raw = np.asarray(raw)
    projected = project_onto_simplex(raw)
    # Reference: the same least-squares problem solved by a general-purpose optimizer.
    reference = optimize.minimize(
        lambda f: np.sum((f - raw) ** 2),
        np.full(raw.size, 1 / raw.size),
        bounds=[(0, 1)] * raw.size,
        constraints={"type": "eq", "fun": lambda f: f.sum() - 1},
        method="SLSQP",
        options={"ftol": 1e-14},
    ).x
    assert_allclose(projected, reference, atol=1e-6)
    assert projected.min() >= 0
    assert projected.sum() == pytest.approx(1.0)


def test_projection_never_moves_an_estimate_away_from_a_distribution():
    rng = np.random.default_rng(0)
    for _ in range(200):
        truth = rng.dirichlet(np.ones(6))
        raw = truth + rng.normal(0, 0.2, size=6)
        assert np.linalg.norm(project_onto_simplex(raw) - truth) <= np.linalg.norm(raw - truth) + 1e-12


def test_clip_and_renormalize():
    assert_allclose(clip_and_renormalize([0.6, 0.6, -0.2]), [0.5, 0.5, 0.0])
    assert_allclose(clip_and_renormalize([-0.1, -0.2]), [0.5, 0.5])


def test_consistent_estimates_keep_the_unbiased_one():
    estimate = FrequencyEstimate(np.array([0.7, 0.5, -0.2]), np.diag([0.01, 0.01, 0.01]), n=100)
    consistent = estimate.consistent()
    assert consistent.method == "norm-sub"
    assert_allclose(consistent.proportions, [0.6, 0.4, 0.0])
    assert_allclose(consistent.unbiased, estimate.proportions)
    clipped = consistent.consistent("clip")
    assert_allclose(clipped.proportions, [7 / 12, 5 / 12, 0.0])
    with pytest.raises(ValueError, match="method must be one of"):
        estimate.consistent("round")


def test_interval_is_estimate_plus_minus_z_standard_errors():
    estimate = FrequencyEstimate(np.array([0.3, 0.7]), np.diag([0.0004, 0.0009]), n=500)
    low, high = estimate.confidence_interval(0.95)
    # z = 1.959964 for 95 % (R: qnorm(0.975)).
    assert_allclose(low, [0.3 - 1.959964 * 0.02, 0.7 - 1.959964 * 0.03], atol=1e-6)
    assert_allclose(high, [0.3 + 1.959964 * 0.02, 0.7 + 1.959964 * 0.03], atol=1e-6)


def test_consistent_interval_stays_within_zero_and_one():
    estimate = FrequencyEstimate(np.array([1.02, -0.02]), np.diag([0.01, 0.01]), n=50).consistent()
    low, high = estimate.confidence_interval()
    assert low.min() >= 0
    assert high.max() <= 1


@pytest.mark.parametrize("level", [0, 1, 1.5])
def test_interval_level_must_be_a_probability(level):
    with pytest.raises(ValueError, match="level"):
        FrequencyEstimate(np.array([0.5, 0.5]), np.eye(2), n=1).confidence_interval(level)
