"""Report validation, packing and tallying, for every mechanism."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ldp import CountMeanSketch, DBitFlip, InvalidReport, KRandomizedResponse, make_mechanism
from ldp.numeric import make_numeric_mechanism

KRR = KRandomizedResponse(k=5, epsilon=1.0)
CMS = CountMeanSketch(k=5, epsilon=1.0, hash_count=16, width=16)
FLIP = DBitFlip(k=5, epsilon=1.0, d=4)


def test_randomized_reports_round_trip_through_json(mechanism):
    packed = mechanism.randomize(np.arange(5).repeat(20), rng=3)
    assert packed.shape == (100, mechanism.report_width)
    assert packed.dtype == np.uint8
    for row in packed:
        wire = json.loads(json.dumps(mechanism.unpack_report(row.tobytes())))
        assert mechanism.parse_report(wire) == row.tobytes()


def test_client_spec_is_json_serializable_and_names_the_mechanism(mechanism):
    spec = json.loads(json.dumps(mechanism.client_spec()))
    assert spec["mechanism"] == mechanism.name
    assert spec["k"] == mechanism.k
    assert spec["epsilon"] == mechanism.epsilon


def test_tallies_merge(mechanism):
    packed = mechanism.randomize(np.arange(5).repeat(40), rng=5)
    whole = mechanism.tally(packed)
    merged = mechanism.tally(packed[:77]) + mechanism.tally(packed[77:])
    assert merged.n == whole.n == 200
    assert np.array_equal(merged.counts, whole.counts)


def test_an_empty_tally_cannot_be_estimated(mechanism):
    with pytest.raises(ValueError, match="zero reports"):
        mechanism.estimate(mechanism.empty_tally())


def test_unpack_many_reads_concatenated_reports(mechanism):
    packed = mechanism.randomize(np.zeros(7, dtype=int), rng=1)
    assert np.array_equal(mechanism.unpack_many(packed.tobytes()), packed)


def test_unpack_many_refuses_a_truncated_buffer():
    with pytest.raises(ValueError, match="multiple of 18"):
        CountMeanSketch(k=5, epsilon=1.0).unpack_many(b"\x00" * 35)


@pytest.mark.parametrize(
    ("mechanism", "report", "reason"),
    [
        (KRR, {"value": 5}, "value must lie in"),
        (KRR, {"value": -1}, "value must lie in"),
        (KRR, {"value": 1.0}, "value must be an integer"),
        (KRR, {"value": True}, "value must be an integer"),
        (KRR, {"value": "1"}, "value must be an integer"),
        (KRR, {}, "exactly the fields"),
        (KRR, {"value": 1, "answer": 1}, "exactly the fields"),
        (KRR, [1], "must be an object"),
        (FLIP, {"buckets": [0, 1, 2], "bits": [0, 1, 0]}, "buckets must have 4 entries"),
        (FLIP, {"buckets": [0, 1, 2, 2], "bits": [0, 1, 0, 0]}, "must not repeat"),
        (FLIP, {"buckets": [0, 1, 2, 5], "bits": [0, 1, 0, 0]}, r"buckets\[3\] must lie in"),
        (FLIP, {"buckets": [0, 1, 2, 3], "bits": [0, 1, 0]}, "4 entries"),
        (FLIP, {"buckets": [0, 1, 2, 3], "bits": [0, 1, 0, 2]}, r"bits\[3\] must be 0 or 1"),
        (FLIP, {"buckets": [0, 1, 2, 3], "bits": [0, 1, 0, False]}, r"bits\[3\] must be 0 or 1"),
        (FLIP, {"buckets": "0123", "bits": [0, 1, 0, 1]}, "buckets must be a list"),
        (CMS, {"hash_index": 16, "bits": [0] * 16}, "hash_index must lie in"),
        (CMS, {"hash_index": 0, "bits": [0] * 15}, "16 entries"),
        (CMS, {"hash_index": 0, "bits": [0.5] * 16}, r"bits\[0\] must be 0 or 1"),
        (CMS, {"hash_index": 0, "bits": "0" * 16}, "bits must be a list"),
        (CMS, {"hash_index": 0}, "exactly the fields"),
    ],
)
def test_malformed_reports_are_rejected_with_a_reason(mechanism, report, reason):
    with pytest.raises(InvalidReport, match=reason):
        mechanism.parse_report(report)


@pytest.mark.parametrize(
    ("mechanism", "report", "code", "params"),
    [
        (KRR, [1], "not-an-object", {}),
        (KRR, {"value": 1, "answer": 1}, "wrong-fields", {"fields": ["value"]}),
        (KRR, {"value": "1"}, "not-an-integer", {"field": "value", "position": None}),
        (
            KRR,
            {"value": 5},
            "out-of-range",
            {"field": "value", "position": None, "low": 0, "high": 4, "value": 5},
        ),
        (FLIP, {"buckets": "0123", "bits": [0, 1, 0, 1]}, "not-a-list", {"field": "buckets"}),
        (FLIP, {"buckets": [0, 1, 2], "bits": [0, 1, 0]}, "wrong-length", {"field": "buckets", "length": 4, "got": 3}),
        (FLIP, {"buckets": [0, 1, 2, 2], "bits": [0, 1, 0, 0]}, "repeated", {"field": "buckets"}),
        (
            FLIP,
            {"buckets": [0, 1, 2, 5], "bits": [0, 1, 0, 0]},
            "out-of-range",
            {"field": "buckets", "position": 3, "low": 0, "high": 4, "value": 5},
        ),
        (CMS, {"hash_index": 0, "bits": [0] * 15 + ["x"]}, "not-a-bit", {"field": "bits", "position": 15}),
        (make_mechanism("subset", k=8, epsilon=0.5), {"subset": [0, 0, 1]}, "repeated", {"field": "subset"}),
        (
            make_mechanism("olh", k=5, epsilon=1.0),
            {"hash": [1, 2], "value": 0},
            "wrong-length",
            {"field": "hash", "length": 3, "got": 2},
        ),
    ],
)
def test_a_refused_report_says_why_in_a_code_and_parameters(mechanism, report, code, params):
    """An application can say why in its own words (the survey app translates them); no parameter
    repeats a string the sender chose."""
    with pytest.raises(InvalidReport) as refused:
        mechanism.parse_report(report)
    assert (refused.value.code, refused.value.params) == (code, params)


def test_a_stored_report_of_the_wrong_width_is_refused_with_its_code():
    numeric = make_numeric_mechanism("piecewise", lo=0.0, hi=1.0, epsilon=1.0)
    with pytest.raises(InvalidReport) as refused:
        numeric.unpack_report(b"\x00" * (numeric.report_width + 1))
    assert refused.value.code == "packed-width"
    assert refused.value.params == {"width": numeric.report_width, "got": numeric.report_width + 1}


def test_dbitflip_packs_buckets_and_bits_as_masks():
    packed = FLIP.parse_report({"buckets": [4, 0, 1, 3], "bits": [1, 0, 1, 0]})
    assert packed == bytes([0b11011, 0b10010])
    assert FLIP.unpack_report(packed) == {"buckets": [0, 1, 3, 4], "bits": [0, 1, 0, 1]}


def test_cms_tally_counts_plus_signs_at_each_options_coordinate():
    j = 3
    bits = [0] * CMS.width
    bits[CMS.hash_table[j, 2]] = 1
    tally = CMS.tally(np.frombuffer(CMS.parse_report({"hash_index": j, "bits": bits}), dtype=np.uint8)[None, :])
    expected = (CMS.hash_table[j] == CMS.hash_table[j, 2]).astype(int)
    assert tally.counts.tolist() == expected.tolist()


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("krr", {"k": 1, "epsilon": 1.0}, "k .number of options."),
        ("krr", {"k": 5, "epsilon": 0.0}, "epsilon"),
        ("dbitflip", {"k": 5, "epsilon": 1.0, "d": 6}, "d must be"),
        ("dbitflip", {"k": 5, "epsilon": 1.0, "d": 0}, "d must be"),
        ("cms", {"k": 5, "epsilon": 1.0, "width": 1}, "width must be"),
        ("cms", {"k": 5, "epsilon": 1.0, "hash_count": 0}, "hash_count must be"),
        ("cms", {"k": 3, "epsilon": 1.0, "hash_count": 1, "width": 2}, "cannot be told apart"),
        ("rappor", {"k": 5, "epsilon": 1.0}, "mechanism must be one of"),
    ],
)
def test_bad_parameters_are_rejected(name, params, message):
    with pytest.raises(ValueError, match=message):
        make_mechanism(name, **params)


@pytest.mark.parametrize("values", [np.array([0, 5]), np.array([-1]), np.array([0.5]), np.zeros((2, 2), dtype=int)])
def test_randomize_rejects_values_outside_the_options(mechanism, values):
    with pytest.raises(ValueError, match="values must"):
        mechanism.randomize(values)


def test_randomize_is_reproducible_from_a_seed(mechanism):
    values = np.arange(5).repeat(10)
    assert np.array_equal(mechanism.randomize(values, rng=9), mechanism.randomize(values, rng=9))


def test_cms_hash_family_is_seeded_and_in_range():
    table = CountMeanSketch(k=5, epsilon=1.0, hash_seed=7).hash_table
    assert np.array_equal(table, CountMeanSketch(k=5, epsilon=1.0, hash_seed=7).hash_table)
    assert not np.array_equal(table, CountMeanSketch(k=5, epsilon=1.0, hash_seed=8).hash_table)
    assert table.min() >= 0
    assert table.max() < 128


def test_cms_hash_family_collides_at_rate_one_over_width():
    # For a pairwise-independent family P[h(x) = h(y)] = 1/m for x != y. Over 512 functions and
    # 10 option pairs the collision count is Binomial(5120, 1/128): mean 40, sd 6.3.
    table = CountMeanSketch(k=5, epsilon=1.0).hash_table
    pairs = [(a, b) for a in range(5) for b in range(a + 1, 5)]
    collisions = sum(int((table[:, a] == table[:, b]).sum()) for a, b in pairs)
    expected = len(pairs) * 512 / 128
    sd = np.sqrt(len(pairs) * 512 * (1 / 128) * (1 - 1 / 128))
    assert abs(collisions - expected) < 4 * sd


def test_covariances_are_the_per_answer_covariances_mixed_by_the_answer_shares(mechanism):
    # covariance() and the score bands rely on Cov(f_hat) being affine in f on the simplex.
    rng = np.random.default_rng(6)
    for f in rng.dirichlet(np.ones(mechanism.k), size=5):
        direct = mechanism.direct_covariance(f, 700)
        np.testing.assert_allclose(mechanism.covariance(f, 700), direct, rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(mechanism.unit_variances @ f / 700, np.diag(direct), rtol=1e-9, atol=1e-15)
