"""Numeric mechanisms: validation, report formats, tallies, exact unbiasedness and variances."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp import InvalidReport, make_numeric_mechanism
from ldp.mechanisms import Tally
from ldp.numeric import NUMERIC_MECHANISMS, GaussianMean, LaplaceMean, OneBitMean, PiecewiseMean
from ldp.numeric.piecewise import duchi_variance, piecewise_variance

BUILDERS = {
    "laplace": lambda e: LaplaceMean(lo=0, hi=10, epsilon=e, grid=20),
    "gaussian": lambda e: GaussianMean(lo=0, hi=10, epsilon=e),
    "1bitmean": lambda e: OneBitMean(lo=0, hi=10, epsilon=e, grid=20),
    "duchi": lambda e: make_numeric_mechanism("duchi", lo=0, hi=10, epsilon=e),
    "piecewise": lambda e: PiecewiseMean(lo=0, hi=10, epsilon=e),
    "hybrid": lambda e: make_numeric_mechanism("hybrid", lo=0, hi=10, epsilon=e),
}


@pytest.fixture(params=sorted(NUMERIC_MECHANISMS))
def mechanism(request):
    return BUILDERS[request.param](1.0)


def test_every_mechanism_has_a_builder():
    assert set(BUILDERS) == set(NUMERIC_MECHANISMS)


@pytest.mark.parametrize("epsilon", [0.01, 0.5, 2.0, 10.0])
@pytest.mark.parametrize("name", sorted(NUMERIC_MECHANISMS))
def test_decoding_is_exactly_unbiased_at_every_grid_point(name, epsilon):
    mechanism = BUILDERS[name](epsilon)
    expected = mechanism.report_probabilities() @ mechanism.decode
    grid = np.arange(mechanism.grid + 1)
    # Float error only: the decoders solve E[decode | k] = k for the integer weights in use.
    np.testing.assert_allclose(expected, grid, rtol=0, atol=1e-9 * max(1.0, np.abs(mechanism.decode).max()))
    second = mechanism.report_probabilities() @ mechanism.decode**2
    np.testing.assert_allclose(mechanism.grid_second_moments(), second, rtol=1e-9)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 1.29, 3.0])
def test_grid_variances_match_the_published_continuous_ones(epsilon):
    # Duchi / 1BitMean: C^2 - t^2 exactly (Wang et al. 2019, Alg. 1); Piecewise within 1 % of
    # Lemma 1's t^2 / (e^(eps/2) - 1) + (e^(eps/2) + 3) / (3 (e^(eps/2) - 1)^2); values on [-1, 1].
    for cls, variance, tolerance in ((OneBitMean, duchi_variance, 1e-9), (PiecewiseMean, piecewise_variance, 0.01)):
        mechanism = cls(lo=-1, hi=1, epsilon=epsilon)
        t = np.linspace(-1, 1, mechanism.grid + 1)
        np.testing.assert_allclose(mechanism.grid_variances() * mechanism.step**2, variance(t, epsilon), rtol=tolerance)


def test_laplace_variance_is_below_the_unclamped_laplace():
    # Clamping with conditional-mean ends never adds variance: below 2 b^2 (b = (hi - lo) / epsilon).
    for epsilon in (0.1, 1.0, 5.0):
        mechanism = LaplaceMean(lo=0, hi=1, epsilon=epsilon, grid=200)
        assert mechanism.grid_variances().max() * mechanism.step**2 < 2 / epsilon**2


def test_reports_round_trip_through_the_packed_form(mechanism):
    for index in (0, mechanism.output_size - 1, mechanism.output_size // 2):
        packed = mechanism.parse_report({"index": index})
        assert len(packed) == mechanism.report_width
        assert mechanism.unpack_report(packed) == {"index": index}
    reports = mechanism.randomize(np.linspace(0, 10, 50), rng=3)
    buffer = reports.tobytes()
    np.testing.assert_array_equal(mechanism.unpack_many(buffer), reports)
    assert all(mechanism.parse_report(mechanism.unpack_report(bytes(row))) == bytes(row) for row in reports)


@pytest.mark.parametrize(
    "report",
    [
        {"index": -1},
        {"index": 10**9},
        {"index": 1.0},
        {"index": True},
        {"index": "3"},
        {"index": None},
        {"index": float("nan")},
        {"value": 3},
        {"index": 3, "extra": 1},
        [3],
        3,
    ],
)
def test_malformed_reports_are_refused(mechanism, report):
    with pytest.raises(InvalidReport):
        mechanism.parse_report(report)


def test_report_widths_follow_the_output_size():
    assert OneBitMean(0, 1, 1.0).report_width == 1
    assert PiecewiseMean(0, 1, 1.0, grid=300).report_width == 2
    assert GaussianMean(0, 1, 0.01).report_width == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"lo": 1, "hi": 1}, "lo must be below hi"),
        ({"lo": 0, "hi": math.inf}, "hi must be finite"),
        ({"lo": "0", "hi": 1}, "lo must be a number"),
        ({"lo": 0, "hi": 1, "epsilon": 0}, "epsilon"),
        ({"lo": 0, "hi": 1, "grid": 0}, "grid"),
        ({"lo": 0, "hi": 1, "grid": 2.5}, "grid"),
        ({"lo": 0, "hi": 1, "grid": True}, "grid"),
    ],
)
def test_bad_parameters_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LaplaceMean(**{"epsilon": 1.0, **kwargs})


def test_gaussian_delta_is_validated():
    for delta in (0, 0.5, True, "1e-5"):
        with pytest.raises(ValueError, match="delta"):
            GaussianMean(0, 1, 1.0, delta=delta)


def test_unknown_mechanisms_are_named():
    with pytest.raises(ValueError, match="must be one of"):
        make_numeric_mechanism("laplce", lo=0, hi=1, epsilon=1.0)


def test_values_outside_the_range_are_refused(mechanism):
    for bad in ([-0.1], [10.5], [np.nan], [np.inf]):
        with pytest.raises(ValueError, match="values must be finite and lie in"):
            mechanism.randomize(bad, rng=1)
    with pytest.raises(ValueError, match="1-d numeric"):
        mechanism.randomize(np.array(["a"]), rng=1)


def test_rounding_is_unbiased_and_alpha_point_rounding_is_deterministic():
    mechanism = OneBitMean(lo=0, hi=10, epsilon=1.0, grid=10)
    k = mechanism.round_to_grid(np.full(200_000, 3.3), rng=5)
    assert set(np.unique(k)) == {3, 4}
    assert k.mean() == pytest.approx(3.3, abs=4 * math.sqrt(0.21 / k.size))
    # Seed 004 formula (4): x rounds up iff frac + alpha >= 1; a kept alpha gives the same point.
    alpha = np.array([0.0, 0.69, 0.71, 0.99])
    assert mechanism.round_to_grid(np.full(4, 3.3), alpha=alpha).tolist() == [3, 3, 4, 4]
    assert mechanism.round_to_grid([0.0, 10.0], rng=1).tolist() == [0, 10]
    with pytest.raises(ValueError, match="alpha"):
        mechanism.round_to_grid([1.0], alpha=[1.0])


def test_tallies_count_indices_and_add_up(mechanism):
    reports = mechanism.randomize(np.linspace(0, 10, 400), rng=7)
    whole = mechanism.tally(reports)
    merged = mechanism.tally(reports[:150]) + mechanism.tally(reports[150:])
    assert whole.n == merged.n == 400
    np.testing.assert_array_equal(whole.counts, merged.counts)
    assert whole.counts.sum() == 400 and whole.counts.shape == (mechanism.output_size,)
    assert mechanism.empty_tally().n == 0


def test_the_randomizer_draws_from_the_report_distribution(mechanism):
    # Grid point 3 of 20 (or of the default grid), 200,000 draws: every index's count within
    # 5 standard errors of its exact probability.
    k = np.full(200_000, 3)
    rng = np.random.default_rng(11)
    counts = np.bincount(mechanism.sample_grid(k, rng), minlength=mechanism.output_size)
    p = mechanism.report_probabilities()[3]
    assert np.all(np.abs(counts - k.size * p) <= 5 * np.sqrt(k.size * p * (1 - p)) + 1)


def test_sample_tallies_match_randomize_then_tally(mechanism):
    values = np.linspace(0, 10, 30)
    counts = mechanism.sample_tallies(values, 400, rng=2)
    assert counts.shape == (400, mechanism.output_size)
    assert np.all(counts.sum(axis=1) == values.size)
    means, _ = mechanism.estimate_many(counts)
    se = math.sqrt(mechanism.variance(values) / values.size / 400)
    assert means.mean() == pytest.approx(values.mean(), abs=4 * se)


def test_estimate_and_its_interval(mechanism):
    values = np.random.default_rng(1).uniform(0, 10, 5000)
    estimate = mechanism.estimate(mechanism.tally(mechanism.randomize(values, rng=8)))
    assert estimate.n == 5000
    assert abs(estimate.mean - values.mean()) < 4 * estimate.standard_error
    # The data's standard error agrees with the analytic one at these values (within 10 %).
    assert estimate.standard_error == pytest.approx(math.sqrt(mechanism.variance(values) / 5000), rel=0.1)
    assert estimate.standard_error <= estimate.expected_standard_error * 1.05
    low, high = estimate.confidence_interval()
    assert low < estimate.mean < high
    assert high - low == pytest.approx(2 * 1.959964 * estimate.standard_error)
    with pytest.raises(ValueError, match="zero reports"):
        mechanism.estimate(mechanism.empty_tally())
    with pytest.raises(ValueError, match="shape"):
        mechanism.estimate(Tally(1, np.zeros(mechanism.output_size + 1, dtype=np.int64)))


def test_one_report_uses_the_worst_case_variance():
    mechanism = OneBitMean(lo=0, hi=1, epsilon=1.0)
    estimate = mechanism.estimate(mechanism.tally(mechanism.randomize([0.5], rng=1)))
    assert estimate.standard_error == pytest.approx(estimate.expected_standard_error)


@pytest.mark.parametrize("name", ["laplace", "piecewise", "hybrid"])
def test_distribution_estimate_recovers_a_two_peaked_population(name):
    # 30 % of respondents answer 2 and 70 % answer 7 on a 0-10 scale; five bins of width 2.
    mechanism = make_numeric_mechanism(name, lo=0, hi=10, epsilon=3.0, grid=10)
    values = np.repeat([2.0, 7.0], [30_000, 70_000])
    estimate = mechanism.estimate_distribution(mechanism.tally(mechanism.randomize(values, rng=21)), bins=5)
    np.testing.assert_allclose(estimate.edges, [0, 2, 4, 6, 8, 10])
    np.testing.assert_allclose(estimate.proportions, [0, 0.3, 0, 0.7, 0], atol=0.05)
    assert estimate.proportions.sum() == pytest.approx(1)
    per_point = mechanism.estimate_distribution(mechanism.tally(mechanism.randomize(values, rng=22)))
    assert per_point.proportions.size == 11 and per_point.edges[1] == pytest.approx(0.5)
    assert per_point.proportions[[2, 7]].sum() > 0.8


def test_one_bit_reports_do_not_give_a_distribution():
    mechanism = OneBitMean(lo=0, hi=1, epsilon=1.0)
    with pytest.raises(ValueError, match="one bit"):
        mechanism.estimate_distribution(mechanism.tally(mechanism.randomize([0.5], rng=1)))
    laplace = LaplaceMean(lo=0, hi=1, epsilon=1.0, grid=4)
    with pytest.raises(ValueError, match="bins"):
        laplace.estimate_distribution(laplace.tally(laplace.randomize([0.5], rng=1)), bins=6)


def test_grids_are_bounded_so_tables_stay_small():
    with pytest.raises(ValueError, match="grid"):
        LaplaceMean(lo=0, hi=1, epsilon=1.0, grid=4097)
    with pytest.raises(ValueError, match="coarser grid"):
        GaussianMean(lo=0, hi=1, epsilon=0.01, grid=100)
    # The finest Laplace grid's variances come from a convolution, not a (G + 1)^2 table.
    assert LaplaceMean(lo=0, hi=1, epsilon=1.0, grid=4096).grid_variances().shape == (4097,)
