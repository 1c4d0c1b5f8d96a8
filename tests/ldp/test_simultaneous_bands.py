"""Simultaneous bands: all options' bands together cover the whole distribution >= 95 % of the time.

Seeded simulations, REPS = 2000 repetitions per setting (a coverage rate's standard error is
sqrt(0.95 * 0.05 / REPS) = 0.49 %). The bands are made to hold jointly with probability 95 %
to the normal approximation's accuracy, so a single setting's measured rate may fall below 95 %
by sampling error alone: each setting must lie within 3 standard errors of 95 % or above, and at
k = 5 and at k = 20 separately the mean over that k's four settings (8000 repetitions, standard
error 0.24 %) must be >= 95 %, with nothing allowed for sampling error (measured with this seed:
96.4 % at k = 5, 96.8 % at k = 20). Per-option bands (the unified bands of consistent
estimates, computed once per distinct variance terms as ``affine_unified_interval`` does) must
cover 94-96 % on average over the options, and every option 93-97 %.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from ldp.intervals import affine_unified_interval, affine_variance_terms, simultaneous_bands, simultaneous_level
from ldp.mechanisms import Tally, make_mechanism

REPS = 2000
SE = (0.95 * 0.05 / REPS) ** 0.5
N = 1000
GEOMETRIC = 0.7 ** np.arange(20) / (0.7 ** np.arange(20)).sum()
DISTRIBUTIONS = {
    "k5-skewed": (0.5, 0.25, 0.15, 0.075, 0.025),
    "k5-concentrated": (0.9, 0.04, 0.03, 0.02, 0.01),
    "k20-geometric": tuple(GEOMETRIC),
    "k20-uniform": (0.05,) * 20,
}
MECHANISMS = ("krr", "oue")  # Hadamard response and OLH: python -m ldp.experiments simultaneous


@cache
def coverage(name: str, distribution: str) -> tuple[float, np.ndarray]:
    """(joint coverage of the simultaneous bands, per-option coverage of the 95 % bands)."""
    shares = np.array(DISTRIBUTIONS[distribution])
    mechanism = make_mechanism(name, k=shares.size, epsilon=1.0)
    truth = np.round(shares * N).astype(int)
    n, f = int(truth.sum()), truth / truth.sum()
    counts = mechanism.sample_tallies(truth, REPS, rng=20261123)
    unbiased = mechanism.observed_mean(Tally(n, counts)) @ np.linalg.inv(mechanism.response_matrix).T
    joint, per_option = 0, np.zeros(shares.size)
    for u in unbiased:
        low, high = simultaneous_bands(mechanism.unit_variances, u, n)
        joint += bool(np.all((low <= f) & (f <= high)))
        a, b = (np.round(x, 12) for x in affine_variance_terms(mechanism.unit_variances, u))
        low, high = affine_unified_interval(a, b, u, n)
        per_option += (low <= f) & (f <= high)
    return joint / REPS, per_option / REPS


def test_simultaneous_level():
    assert simultaneous_level(0.95, 1) == 0.95
    assert simultaneous_level(0.95, 5) ** 5 == pytest.approx(0.95)
    with pytest.raises(ValueError, match="correction"):
        simultaneous_level(0.95, 5, "holm")


def test_simultaneous_bands_contain_the_per_option_bands():
    mechanism = make_mechanism("krr", k=5, epsilon=1.0)
    for unbiased in ([0.5, 0.3, 0.1, 0.1, 0.0], [1.2, -0.1, -0.05, 0.0, -0.05], [0.2] * 5):
        u = np.array(unbiased)
        joint = simultaneous_bands(mechanism.unit_variances, u, 300)
        single = affine_unified_interval(*affine_variance_terms(mechanism.unit_variances, u), u, 300)
        assert np.all(joint.low <= single.low + 1e-9) and np.all(joint.high >= single.high - 1e-9)
        assert np.all(joint.high - joint.low > 0)  # never collapses to a point


@pytest.mark.statistical
@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
@pytest.mark.parametrize("name", MECHANISMS)
@pytest.mark.slow
def test_simultaneous_bands_cover_every_option_at_once(name, distribution):
    joint, _ = coverage(name, distribution)
    assert joint >= 0.95 - 3 * SE, f"joint coverage {joint:.4f}"


@pytest.mark.statistical
@pytest.mark.parametrize("k", [5, 20])
@pytest.mark.slow
def test_simultaneous_bands_cover_at_least_95_percent_on_average_at_each_k(k):
    rates = [coverage(name, d)[0] for name in MECHANISMS for d in DISTRIBUTIONS if d.startswith(f"k{k}-")]
    assert len(rates) == 4
    assert np.mean(rates) >= 0.95, rates


@pytest.mark.statistical
@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
@pytest.mark.parametrize("name", MECHANISMS)
@pytest.mark.slow
def test_per_option_bands_keep_95_percent(name, distribution):
    _, per_option = coverage(name, distribution)
    assert 0.94 <= per_option.mean() <= 0.96, per_option
    assert per_option.min() >= 0.93 and per_option.max() <= 0.97, per_option
