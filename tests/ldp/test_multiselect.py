"""Multi-select mechanisms: reports, validation, estimates, the advisor; seeded statistics.

Statistical part: a fixed population of N = 2000 respondents (each chooses 0..l options, options
favoured geometrically, seed 1), REPS = 2000 randomizations per mechanism. Shares and the mean
number chosen must be unbiased (mean within 4 standard errors of the truth); per-option 95 %
bands cover 94-96 % on average over the options and 93-97 % each (a rate's standard error is
0.49 %); the simultaneous bands cover all options at once >= 95 % within 3 standard errors, as
in tests/ldp/test_simultaneous_bands.py.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from ldp.mechanisms import InvalidReport, Tally
from ldp.multiselect import PaddingAndSampling, SetUnaryEncoding, make_set_mechanism, recommend_multiselect
from ldp.multiselect.padding import padded_items

NAMES = ["set-sue", "set-oue", "padding-krr", "padding-olh"]


def population(k: int, ell: int, n: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    weights = 0.6 ** np.arange(k)
    sets = np.zeros((n, k), dtype=bool)
    for row in sets:
        row[rng.choice(k, rng.integers(0, ell + 1), replace=False, p=weights / weights.sum())] = True
    return sets


@pytest.mark.parametrize("name", NAMES)
def test_reports_round_trip_and_tally(name):
    mechanism = make_set_mechanism(name, k=6, epsilon=1.0, max_choices=3)
    packed = mechanism.randomize(population(6, 3, 50), rng=2)
    assert packed.shape == (50, mechanism.report_width)
    for row in packed:
        assert mechanism.parse_report(mechanism.unpack_report(row.tobytes())) == row.tobytes()
    assert mechanism.tally(packed).n == 50


@pytest.mark.parametrize("name", NAMES)
def test_stored_reports_unpack_from_one_buffer_and_tally_as_every_mechanism_does(name):
    """What a survey stores: reports concatenated, read back as rows; the empty tally has the tally's cells."""
    mechanism = make_set_mechanism(name, k=10, epsilon=1.0, max_choices=3)  # unary reports: 2 bytes
    packed = mechanism.randomize(population(10, 3, 40), rng=5)
    rows = mechanism.unpack_many(packed.tobytes())
    assert np.array_equal(rows, packed)
    assert np.array_equal(mechanism.tally(rows).counts, mechanism.tally(packed).counts)
    empty = mechanism.empty_tally()
    assert empty.n == 0 and empty.counts.shape == mechanism.tally(packed).counts.shape and not empty.counts.any()
    if mechanism.report_width > 1:  # one-byte reports (padding-krr) make every buffer length valid
        with pytest.raises(ValueError, match="not a multiple"):
            mechanism.unpack_many(packed.tobytes()[:-1])


def test_unary_reports_are_validated():
    mechanism = SetUnaryEncoding(k=5, epsilon=1.0, max_choices=2)
    for bad, message in [
        ({"bits": [1, 0, 1, 0]}, "5 entries"),
        ({"bits": [1, 0, 2, 0, 0]}, "0 or 1"),
        ({"bits": [1, 0, True, 0, 0]}, "0 or 1"),
        ({"bits": [1, 0, 0, 0, 0], "extra": 1}, "exactly the fields"),
        ([1, 0, 0, 0, 0], "object"),
    ]:
        with pytest.raises(InvalidReport, match=message):
            mechanism.parse_report(bad)


def test_padding_reports_are_validated_over_the_options_and_dummies():
    mechanism = PaddingAndSampling(k=5, epsilon=1.0, max_choices=2)
    assert mechanism.parse_report({"value": 6}) == b"\x06"  # the second dummy
    with pytest.raises(InvalidReport, match=r"\[0, 6\]"):
        mechanism.parse_report({"value": 7})


def test_sets_are_validated():
    mechanism = SetUnaryEncoding(k=4, epsilon=1.0, max_choices=2)
    with pytest.raises(ValueError, match="more than max_choices"):
        mechanism.randomize(np.array([[1, 1, 1, 0]]))
    with pytest.raises(ValueError, match="only 0 and 1"):
        mechanism.randomize(np.array([[2, 0, 0, 0]]))
    with pytest.raises(ValueError, match=r"\(n, 4\)"):
        mechanism.randomize(np.array([[1, 0, 0]]))
    with pytest.raises(ValueError, match="max_choices"):
        SetUnaryEncoding(k=4, epsilon=1.0, max_choices=5)
    with pytest.raises(ValueError, match="variant"):
        SetUnaryEncoding(k=4, epsilon=1.0, variant="rappor")
    with pytest.raises(ValueError, match="mechanism must be one of"):
        make_set_mechanism("krr", k=4, epsilon=1.0)


def test_padding_puts_the_chosen_options_first_then_the_dummies():
    sets = np.array([[0, 1, 0, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 0, 0]], dtype=bool)
    assert padded_items(sets, 3).tolist() == [[1, 3, 5], [5, 6, 7], [0, 1, 2]]


def test_the_advisor_ranks_every_candidate_by_its_half_width():
    recommendation = recommend_multiselect(10, 3, 1.0, 2000)
    widths = [c.half_width for c in recommendation.ranking]
    assert widths == sorted(widths)
    assert {c.mechanism for c in recommendation.ranking} == set(NAMES)
    # Quadrupling n halves every half-width.
    larger = recommend_multiselect(10, 3, 1.0, 8000)
    assert larger.best.half_width == pytest.approx(recommendation.best.half_width / 2)


def test_the_advisor_uses_the_estimates_own_variance_at_its_reference_population():
    # Reference: each option chosen by l / (2k); the unary encodings' variance there, in closed form.
    k, ell, n = 8, 2, 1000
    unary = SetUnaryEncoding(k=k, epsilon=1.0, max_choices=ell, variant="sue")
    p, q, pi = unary.true_bit_probability, unary.other_bit_probability, ell / (2 * k)
    variance = (pi * p * (1 - p) + (1 - pi) * q * (1 - q)) / (p - q) ** 2
    width = next(c.half_width for c in recommend_multiselect(k, ell, 1.0, n).ranking if c.mechanism == "set-sue")
    assert width == pytest.approx(1.959964 * np.sqrt(variance / n), rel=1e-6)


@cache
def simulate(name: str, k: int, ell: int, epsilon: float = 2.0):
    sets = population(k, ell, 2000)
    mechanism = make_set_mechanism(name, k, epsilon, ell)
    reps = 2000 if name != "padding-olh" else 300
    counts = mechanism.sample_tallies(sets, reps, rng=20261123)
    return sets, [mechanism.estimate(Tally(len(sets), c)) for c in counts]


CASES = [(name, k, ell) for name in NAMES[:3] for k, ell in ((5, 2), (20, 3))]


@pytest.mark.statistical
@pytest.mark.parametrize(("name", "k", "ell"), [*CASES, ("padding-olh", 5, 2)])
@pytest.mark.slow
def test_shares_and_mean_count_are_unbiased(name, k, ell):
    sets, estimates = simulate(name, k, ell)
    shares = np.array([e.shares for e in estimates])
    se = shares.std(axis=0, ddof=1) / np.sqrt(len(estimates))
    assert np.all(np.abs(shares.mean(axis=0) - sets.mean(axis=0)) <= 4 * se)
    counts = np.array([e.mean_count for e in estimates])
    truth = sets.sum(axis=1).mean()
    assert abs(counts.mean() - truth) <= 4 * counts.std(ddof=1) / np.sqrt(len(counts))
    # The analytic variance of the mean number chosen matches the simulated one within 10 %.
    assert np.mean([e.mean_count_variance for e in estimates]) == pytest.approx(counts.var(ddof=1), rel=0.1)


@pytest.mark.statistical
@pytest.mark.parametrize(("name", "k", "ell"), CASES)
@pytest.mark.slow
def test_bands_cover_per_option_and_all_options_at_once(name, k, ell):
    sets, estimates = simulate(name, k, ell)
    truth = sets.mean(axis=0)
    per_option = np.mean([(e.bands.low <= truth) & (truth <= e.bands.high) for e in estimates], axis=0)
    assert 0.94 <= per_option.mean() <= 0.96, per_option
    assert per_option.min() >= 0.93 and per_option.max() <= 0.97, per_option
    joint = np.mean([np.all((e.simultaneous.low <= truth) & (truth <= e.simultaneous.high)) for e in estimates])
    assert joint >= 0.95 - 3 * (0.95 * 0.05 / len(estimates)) ** 0.5, joint
