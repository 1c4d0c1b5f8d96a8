"""RAPPOR (ldp.mechanisms.rappor): exact privacy, reports, tallies and decoding."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from ldp.mechanisms.rappor import BitCounts, Rappor, decode
from ldp.mechanisms.reports import InvalidReport
from ldp.privacy import worst_case_log_ratio

SEED_FIG3 = Rappor(bits=32, hash_count=2, cohorts=64, f=0.5, p=0.25, q=0.75)
SMALL = [
    Rappor(bits=6, hash_count=2, cohorts=1, f=0.5, p=0.25, q=0.75),
    Rappor(bits=6, hash_count=3, cohorts=1, f=0.25, p=0.5, q=0.75),
    Rappor(bits=5, hash_count=1, cohorts=1, f=0.8, p=0.1, q=0.6),
]


def test_the_seeds_parameters_give_the_epsilons_of_the_closed_forms():
    # Seed 004, Fig. 3: f = 0.5, p = 0.25, q = 0.75, h = 2. Then p* = 0.375, q* = 0.625, so
    # epsilon_1 = 2 ln((5/8)^2 / (3/8)^2) = 4 ln(5/3) ("epsilon ~ 2" in the seed), and
    # epsilon_inf = 4 ln(0.75 / 0.25) = 4 ln 3.
    assert SEED_FIG3.report_one == (0.375, 0.625)
    assert math.isclose(SEED_FIG3.epsilon_one_report(), 4 * math.log(5 / 3), rel_tol=1e-14)
    assert math.isclose(SEED_FIG3.epsilon_infinity(), 4 * math.log(3), rel_tol=1e-14)


def possible_filters(bits: int, hash_count: int) -> list[np.ndarray]:
    return [
        np.isin(np.arange(bits), ones).astype(np.uint8)
        for size in range(1, hash_count + 1)
        for ones in itertools.combinations(range(bits), size)
    ]


def all_vectors(bits: int) -> np.ndarray:
    return np.array(list(itertools.product([0, 1], repeat=bits)), dtype=np.uint8)


def bit_probabilities(vectors: np.ndarray, given: np.ndarray, one_if_set: float, one_if_clear: float) -> np.ndarray:
    """P(vector | given) for bits independent given ``given``; rows: vectors."""
    one = np.where(given == 1, one_if_set, one_if_clear)
    return np.prod(np.where(vectors == 1, one, 1 - one), axis=1)


@pytest.mark.parametrize("layer", ["one report", "permanent response"])
@pytest.mark.parametrize("mechanism", SMALL, ids=lambda m: f"bits{m.bits}-h{m.hash_count}-f{m.f}")
def test_every_report_and_filter_pair_enumerated_attains_the_closed_form(mechanism, layer):
    # One report S attains epsilon_1; the permanent response B' (what infinitely many reports
    # reveal) attains epsilon_inf.
    if layer == "one report":
        (if_clear, if_set), closed_form = mechanism.report_one, mechanism.epsilon_one_report()
    else:
        (if_clear, if_set), closed_form = mechanism.permanent_one, mechanism.epsilon_infinity()
    outputs = all_vectors(mechanism.bits)
    filters = possible_filters(mechanism.bits, mechanism.hash_count)
    table = [bit_probabilities(outputs, bloom, if_set, if_clear) for bloom in filters]
    assert math.isclose(worst_case_log_ratio(table), closed_form, rel_tol=1e-9)


def layer_tables(mechanism: Rappor) -> tuple[np.ndarray, np.ndarray]:
    """(PRR[B, B'] for every possible filter B, IRR[B', S]) over all bit vectors, from f, p and q alone."""
    vectors = all_vectors(mechanism.bits)
    f = mechanism.f
    filters = possible_filters(mechanism.bits, mechanism.hash_count)
    permanent = np.array([bit_probabilities(vectors, bloom, 1 - f / 2, f / 2) for bloom in filters])
    instant = np.array([bit_probabilities(vectors, memo, mechanism.q, mechanism.p) for memo in vectors])
    return permanent, instant


@pytest.mark.parametrize("mechanism", SMALL, ids=lambda m: f"bits{m.bits}-h{m.hash_count}-f{m.f}")
def test_one_report_composed_from_the_prr_and_irr_tables_attains_epsilon_one(mechanism):
    # P(S | B) = sum over B' of P(B' | B) P(S | B'): the two layers composed, without the closed-form
    # p* and q*. The PRR alone gives epsilon_inf, one report through the IRR epsilon_1.
    permanent, instant = layer_tables(mechanism)
    assert math.isclose(worst_case_log_ratio(permanent), mechanism.epsilon_infinity(), rel_tol=1e-9)
    assert math.isclose(worst_case_log_ratio(permanent @ instant), mechanism.epsilon_one_report(), rel_tol=1e-9)


@pytest.mark.parametrize("mechanism", SMALL[:2], ids=lambda m: f"bits{m.bits}-h{m.hash_count}")
def test_two_memoized_reports_enumerated_attain_epsilon_after_two_rounds(mechanism):
    permanent, instant = layer_tables(mechanism)
    # P(S1, S2 | B) = sum_b' P(b' | B) P(S1 | b') P(S2 | b')
    table = np.einsum("bm,ms,mt->bst", permanent, instant, instant).reshape(len(permanent), -1)
    epsilon = worst_case_log_ratio(table)
    assert math.isclose(epsilon, mechanism.epsilon_after_rounds(2), rel_tol=1e-9)
    one = mechanism.epsilon_one_report()
    assert one < epsilon < min(2 * one, mechanism.epsilon_infinity())


def test_the_leak_grows_with_rounds_towards_epsilon_infinity_and_stays_below_it():
    leaks = [SEED_FIG3.epsilon_after_rounds(r) for r in range(1, 31)]
    assert all(a < b for a, b in itertools.pairwise(leaks[:10]))
    assert all(leak <= SEED_FIG3.epsilon_infinity() * (1 + 1e-12) for leak in leaks)
    assert leaks[-1] == pytest.approx(SEED_FIG3.epsilon_infinity(), rel=1e-6)
    # Without memoization r fresh reports would spend r epsilon_1 (sequential composition).
    assert 10 * SEED_FIG3.epsilon_one_report() > 4 * leaks[9]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"bits": 3, "hash_count": 2}, "at least 2 \\* hash_count"),
        ({"hash_count": 9}, "hash_count"),
        ({"cohorts": 0}, "cohorts"),
        ({"f": 0.0}, "f must lie"),
        ({"f": 1.0}, "f must lie"),
        ({"p": 0.8, "q": 0.75}, "p must be below q"),
        ({"q": 1.5}, "q must lie"),
        ({"bits": True}, "bits"),
    ],
)
def test_bad_parameters_are_refused_by_name(params, message):
    with pytest.raises(ValueError, match=message):
        Rappor(**params)


def test_a_report_round_trips_through_its_packed_form():
    mechanism = Rappor(bits=12, hash_count=2, cohorts=300)
    report = {"cohort": 299, "bits": [1, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 1]}
    packed = mechanism.parse_report(report)
    assert len(packed) == mechanism.report_width == 4
    assert mechanism.unpack_report(packed) == report


@pytest.mark.parametrize(
    ("report", "message"),
    [
        ({"cohort": 64, "bits": [0] * 32}, "cohort must lie in \\[0, 63\\]"),
        ({"cohort": -1, "bits": [0] * 32}, "cohort must lie"),
        ({"cohort": "1", "bits": [0] * 32}, "cohort must be an integer"),
        ({"cohort": 1, "bits": [0] * 31}, "bits must have 32 entries"),
        ({"cohort": 1, "bits": [0] * 33}, "bits must have 32 entries"),
        ({"cohort": 1, "bits": [2] + [0] * 31}, "bits\\[0\\] must be 0 or 1"),
        ({"cohort": 1, "bits": [True] + [0] * 31}, "bits\\[0\\] must be 0 or 1"),
        ({"cohort": 1, "bits": "0" * 32}, "bits must be a list"),
        ({"cohort": 1}, "exactly the fields"),
        ({"cohort": 1, "bits": [0] * 32, "value": "x"}, "exactly the fields"),
        ([1, 0], "must be an object"),
    ],
)
def test_malformed_reports_are_refused_with_a_clear_message(report, message):
    with pytest.raises(InvalidReport, match=message):
        SEED_FIG3.parse_report(report)


def test_tallies_count_reports_per_cohort_and_bits_and_add_up():
    mechanism = Rappor(bits=8, hash_count=2, cohorts=3)
    reports = np.array([[1, 0, 0, 0, 0, 0, 0, 1], [1, 1, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 1]])
    packed = mechanism.pack_reports([2, 2, 0], reports)
    counts = mechanism.tally(packed)
    assert counts.reports.tolist() == [1, 0, 2]
    assert counts.ones[2].tolist() == [2, 1, 0, 0, 0, 0, 0, 1]
    assert counts.ones[0].tolist() == [0, 0, 0, 0, 0, 0, 0, 1]
    total = counts + mechanism.tally(packed[:1])
    assert total.n == 4 and total.ones[2, 0] == 3
    with pytest.raises(ValueError, match="cannot add"):
        counts + Rappor(bits=16, hash_count=2, cohorts=3).empty_counts()


def test_simulated_counts_and_randomized_reports_agree_in_expectation():
    # Both estimate E[ones_ij] = N_j (p* + (q* - p*) share of filters with bit i set); compare the
    # total of each bit with 5 standard errors of a sum of n Bernoulli draws (<= sqrt(n / 4)).
    mechanism = Rappor(bits=16, hash_count=2, cohorts=4)
    values = ["a"] * 6000 + ["b"] * 3000 + ["c"] * 1000
    cohorts = np.random.default_rng(0).integers(0, 4, size=len(values))
    randomized = mechanism.tally(mechanism.pack_reports(cohorts, mechanism.randomize(values, cohorts, rng=1)))
    simulated = mechanism.simulate_counts(["a", "b", "c"], [6000, 3000, 1000], rng=2)
    p_star, q_star = mechanism.report_one
    blooms = {v: np.array([mechanism.bloom_filter(v, j) for j in range(4)]) for v in "abc"}
    sizes = {"a": 6000, "b": 3000, "c": 1000}
    expected = sum(count * (p_star + (q_star - p_star) * blooms[v].mean(axis=0)) for v, count in sizes.items())
    tolerance = 5 * math.sqrt(10_000 / 4) + 5 * math.sqrt(10_000 / 4)  # draws plus cohort assignment
    assert_allclose(randomized.ones.sum(axis=0), expected, atol=tolerance)
    assert_allclose(simulated.ones.sum(axis=0), expected, atol=tolerance)
    assert randomized.n == simulated.n == 10_000


def test_bloom_positions_are_sha256_words_and_refuse_bad_cohorts():
    # Reference: hashlib.sha256(b"\0\0\0\x10murmur-rappor-v1\0\0\0\x013\0\0\0\x06" + "서울".encode()).digest(),
    # words 0 and 1 big-endian, mod 16 (the same numbers tests/js/rappor.test.mjs checks).
    assert Rappor(bits=16).bloom_positions("서울", 3) == (4, 15)
    with pytest.raises(ValueError, match="cohort"):
        SEED_FIG3.bloom_positions("a", 64)
    with pytest.raises(ValueError, match="value must be a string"):
        SEED_FIG3.bloom_positions(3, 0)


def test_decoding_finds_the_strings_written_and_not_the_decoys():
    mechanism = Rappor(bits=16, hash_count=2, cohorts=16, f=0.25, p=0.25, q=0.75)
    candidates = ["서울", "부산", "대구", "인천", "광주", "대전"]
    counts = mechanism.simulate_counts(candidates, [20_000, 12_000, 8_000, 0, 0, 0], rng=3)
    result = decode(mechanism, counts, candidates)
    assert result.found.tolist() == [True, True, True, False, False, False]
    low, high = result.interval()
    assert np.all(low[:3] <= [20_000, 12_000, 8_000]) and np.all(high[:3] >= [20_000, 12_000, 8_000])
    count, error = result.count_of("서울")
    assert abs(count - 20_000) < 4 * error


def test_a_query_for_a_string_nnls_dropped_still_gets_an_estimate_and_band():
    mechanism = Rappor(bits=16, hash_count=2, cohorts=16, f=0.25, p=0.25, q=0.75)
    candidates = ["yes", "no", "maybe"]
    counts = mechanism.simulate_counts(candidates, [30_000, 10_000, 0], rng=4)
    plain = decode(mechanism, counts, candidates)
    asked = decode(mechanism, counts, candidates, always=["maybe"])
    count, error = asked.count_of("maybe")
    assert math.isfinite(error) and abs(count) < 4 * error
    assert not asked.found[2]
    assert plain.n == asked.n == 40_000


def test_decoding_refuses_bad_input():
    counts = SEED_FIG3.empty_counts()
    with pytest.raises(ValueError, match="zero reports"):
        decode(SEED_FIG3, counts, ["a"])
    filled = BitCounts(counts.reports + 1, counts.ones)
    with pytest.raises(ValueError, match="distinct"):
        decode(SEED_FIG3, filled, ["a", "a"])
    with pytest.raises(ValueError, match="not candidates"):
        decode(SEED_FIG3, filled, ["a"], always=["b"])
    with pytest.raises(ValueError, match="alpha"):
        decode(SEED_FIG3, filled, ["a"], alpha=1.5)


ZIPF_STRINGS = 100
ZIPF_DECOYS = 100


@pytest.mark.statistical
@pytest.mark.slow
def test_zipf_top_strings_are_recovered_at_100000_reports_within_the_false_discovery_level():
    """Seed 004's Fig. 3 parameters (epsilon_1 = 2.04, epsilon_inf = 4 ln 3 = 4.39), n = 100,000.

    100 strings written with Zipf(1.1) shares and 100 decoys nobody wrote, 20 seeded surveys.
    Bonferroni at alpha = 0.05 bounds the chance of any false discovery by 0.05, so the
    false-discovery rate (false finds / finds) must average at most 0.05. The seven most common
    strings (each at least 2.7 % of the answers, 2,748 reports) must be found in at least 95 % of
    (survey, string) pairs; below that, power falls (8th: 85 %, 10th: 25 % in this run; see
    docs/experiments.md).
    """
    written = [f"답변 {i}" for i in range(ZIPF_STRINGS)]
    candidates = written + [f"decoy {i}" for i in range(ZIPF_DECOYS)]
    shares = 1 / np.arange(1, ZIPF_STRINGS + 1) ** 1.1
    shares /= shares.sum()
    rng = np.random.default_rng(2026)
    false_rates, top_found = [], []
    for _ in range(20):
        true = np.concatenate([rng.multinomial(100_000, shares), np.zeros(ZIPF_DECOYS, dtype=np.int64)])
        result = decode(SEED_FIG3, SEED_FIG3.simulate_counts(candidates, true, rng=rng), candidates)
        found = np.flatnonzero(result.found)
        false_rates.append(np.mean(true[found] == 0) if found.size else 0.0)
        top_found.append(result.found[:7].mean())
    assert np.mean(false_rates) <= 0.05
    assert np.mean(top_found) >= 0.95
