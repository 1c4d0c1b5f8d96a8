"""Multi-select mechanisms: the worst-case likelihood ratio over sets, enumerated, equals epsilon.

Enumeration covers every admissible set (sizes 0..l, the empty set included) and every report:
all 2^k bit vectors for the unary encodings; every oracle report (value, or OLH's (a, b, c, y)
over a small prime) for padding-and-sampling, with its dummy items.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp import worst_case_log_ratio
from ldp.mechanisms import OptimalLocalHashing
from ldp.multiselect import PaddingAndSampling, SetUnaryEncoding, all_sets, make_set_mechanism
from ldp.multiselect.unary import set_log_ratio
from ldp.privacy import EPSILON_MAX, EPSILON_MIN
from tests.js.make_specs import small_padding_olh

UNARY_CASES = [(k, ell) for k in (2, 3, 5, 6) for ell in range(1, k + 1)]


@pytest.mark.parametrize("variant", ["sue", "oue"])
@pytest.mark.parametrize(("k", "ell"), UNARY_CASES)
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_unary_encoding_spends_exactly_epsilon_over_sets(variant, k, ell, epsilon):
    mechanism = SetUnaryEncoding(k=k, epsilon=epsilon, max_choices=ell, variant=variant)
    table = mechanism.report_probabilities()
    assert table.shape == (sum(math.comb(k, m) for m in range(ell + 1)), 2**k)
    assert worst_case_log_ratio(table) == pytest.approx(epsilon, rel=1e-9)
    assert mechanism.worst_case_log_ratio() == pytest.approx(epsilon, rel=1e-12)


@pytest.mark.parametrize(("k", "ell", "flipped"), [(5, 1, 2), (5, 2, 4), (5, 3, 5), (6, 3, 6), (20, 4, 8), (3, 3, 3)])
def test_symmetric_unary_splits_epsilon_over_the_bits_a_set_change_can_flip(k, ell, flipped):
    # Sensitivity: min(2l, k) bits, each at beta = epsilon / flipped (p / q = e^beta).
    mechanism = SetUnaryEncoding(k=k, epsilon=1.2, max_choices=ell, variant="sue")
    p, q = mechanism.true_bit_probability, mechanism.other_bit_probability
    assert math.log(p / q) == pytest.approx(1.2 / flipped, rel=1e-12)


def test_a_single_choice_budget_would_leak_with_two_choices():
    # SUE calibrated for one choice (beta = epsilon / 2) spends 2 epsilon once two may be chosen.
    single = SetUnaryEncoding(k=5, epsilon=1.0, max_choices=1, variant="sue")
    p, q = single.true_bit_probability, single.other_bit_probability
    two = [[p if x else q for x in row] for row in all_sets(5, 2)]
    reports = np.array(list(np.ndindex(*(2,) * 5)), dtype=bool)
    table = np.array([[np.prod(np.where(r, row, 1 - np.array(row))) for r in reports] for row in two])
    assert worst_case_log_ratio(table) == pytest.approx(2.0, rel=1e-9)


def test_optimized_unary_with_many_choices_is_solved_for_the_asymmetric_bound():
    # 2l > k: the bound is l ln((e^g + 1)/2) + (k - l) ln(2 e^g / (e^g + 1)), solved for g.
    mechanism = SetUnaryEncoding(k=5, epsilon=3.0, max_choices=4, variant="oue")
    gamma = mechanism.bit_epsilon
    high = math.log((math.exp(gamma) + 1) / 2)
    assert 4 * high + 1 * (gamma - high) == pytest.approx(3.0, rel=1e-12)
    assert set_log_ratio(0.5, mechanism.other_bit_probability, 5, 4) == pytest.approx(3.0, rel=1e-12)


@pytest.mark.parametrize(("k", "ell"), [(2, 1), (3, 2), (4, 2), (5, 3), (5, 5), (8, 2)])
@pytest.mark.parametrize("epsilon", [EPSILON_MIN, 0.5, 1.0, 3.0, EPSILON_MAX])
def test_padding_with_krr_spends_exactly_epsilon_thanks_to_sampling(k, ell, epsilon):
    mechanism = PaddingAndSampling(k=k, epsilon=epsilon, max_choices=ell, oracle_name="krr")
    table = mechanism.report_probabilities()
    assert table.shape == (sum(math.comb(k, m) for m in range(ell + 1)), k + ell)
    assert worst_case_log_ratio(table) == pytest.approx(epsilon, rel=1e-9)
    # The oracle alone spends ln(1 + l (e^epsilon - 1)) >= epsilon; sampling 1 of l brings it back.
    assert mechanism.oracle.worst_case_log_ratio() == pytest.approx(math.log1p(ell * math.expm1(epsilon)), rel=1e-12)


def test_every_dummy_item_is_reported_and_matters():
    # The empty set samples each of the l dummies with probability 1/l; a full set none.
    mechanism = PaddingAndSampling(k=4, epsilon=1.0, max_choices=3)
    sampling = mechanism.sampling_matrix()
    sets = all_sets(4, 3)
    assert np.allclose(sampling.sum(axis=1), 1.0)
    empty = np.flatnonzero(sets.sum(axis=1) == 0)[0]
    assert sampling[empty].tolist() == [0, 0, 0, 0, 1 / 3, 1 / 3, 1 / 3]
    for row, chosen in zip(sampling, sets, strict=True):
        assert np.allclose(row[:4], chosen / 3)
        assert np.allclose(row[4 : 4 + 3 - chosen.sum()], 1 / 3)


def test_padding_with_olh_is_bounded_by_epsilon_and_attains_it():
    mechanism = small_padding_olh()  # the same construction over a prime small enough to enumerate
    assert isinstance(mechanism.oracle, OptimalLocalHashing) and mechanism.oracle.prime == 7
    table = mechanism.report_probabilities()
    assert table.shape == (1 + 3 + 3, 7**3 * 2)
    assert worst_case_log_ratio(table) == pytest.approx(1.0, rel=1e-9)
    assert mechanism.worst_case_log_ratio() == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("name", ["set-sue", "set-oue", "padding-krr", "padding-olh"])
def test_epsilon_outside_the_allowed_range_is_refused(name):
    for epsilon in (0.0, EPSILON_MAX * 2, float("nan")):
        with pytest.raises(ValueError, match="epsilon"):
            make_set_mechanism(name, k=5, epsilon=epsilon, max_choices=2)
