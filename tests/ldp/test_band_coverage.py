"""The consistent estimate's bands (Feldman-Cousins unified intervals) cover
94-96 % at k = 5, 20 and 64, options nobody chose included.

10,000 seeded tallies per case: a coverage rate's standard error is sqrt(0.95 * 0.05 / 10000)
= 0.22 %, so 94-96 % is +/- 4.6 of them (for 64 options at once, a false alarm has probability
about 64 * 4e-6). Coverage is decided at the true shares (:func:`ldp.intervals.unified_covers`),
which is what the band is, without its grid; the first test checks that the two agree.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldp import make_mechanism
from ldp.estimators import estimate_proportions
from ldp.intervals import unified_covers, unified_interval


def zipf_counts(options: int, n: int) -> np.ndarray:
    weights = 1 / np.arange(1, options + 1) ** 1.1
    return np.round(weights / weights.sum() * n).astype(int)


CASES = {
    "k-RR, k = 5, two options nobody chose": ("krr", 1.0, np.array([1000, 600, 400, 0, 0])),
    "OUE, k = 20, Zipf": ("oue", 1.0, zipf_counts(20, 2000)),
    "OUE, k = 64, Zipf over 48, 16 nobody chose": ("oue", 2.0, np.r_[zipf_counts(48, 5000), np.zeros(16, int)]),
    "subset, k = 64, Zipf over 48, 16 nobody chose": ("subset", 0.5, np.r_[zipf_counts(48, 2000), np.zeros(16, int)]),
}


def test_deciding_coverage_at_the_truth_agrees_with_the_band():
    mechanism = make_mechanism("oue", k=20, epsilon=1.0)
    truth = np.r_[zipf_counts(15, 1000), np.zeros(5, int)]
    n = int(truth.sum())
    unbiased = estimate_proportions(mechanism, mechanism.sample_tallies(truth, 300, rng=5), n, "unbiased")
    covers = unified_covers(mechanism.unit_variances, unbiased, n, truth / n)
    for row, decided in zip(unbiased, covers, strict=True):
        low, high = unified_interval(mechanism.unit_variances, row, n)
        inside = (low <= truth / n) & (truth / n <= high)
        near_an_edge = np.minimum(np.abs(truth / n - low), np.abs(truth / n - high)) < 1e-3
        assert np.all((inside == decided) | near_an_edge)
        assert np.all(high - low > 0)  # never zero-width
    assert 0 < covers.mean() < 1


@pytest.mark.statistical
@pytest.mark.parametrize("case", CASES)
@pytest.mark.slow
def test_bands_cover_94_to_96_percent_for_every_option(case):
    name, epsilon, truth = CASES[case]
    mechanism = make_mechanism(name, k=truth.size, epsilon=epsilon)
    n = int(truth.sum())
    unbiased = estimate_proportions(mechanism, mechanism.sample_tallies(truth, 10_000, rng=20261123), n, "unbiased")
    rate = unified_covers(mechanism.unit_variances, unbiased, n, truth / n).mean(axis=0)
    assert np.all((rate >= 0.94) & (rate <= 0.96)), rate
    assert np.all((rate[truth == 0] >= 0.94) & (rate[truth == 0] <= 0.96))
