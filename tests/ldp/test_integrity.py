"""Manipulation detection (ldp.integrity): exact null laws, detection of an obvious attack, false alarms."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ldp import integrity, report_weights, weight_tests
from ldp.experiments import poisoning
from ldp.mechanisms import Tally, make_mechanism

WEIGHTED = [
    make_mechanism("oue", k=4, epsilon=1.0),
    make_mechanism("sue", k=5, epsilon=0.7),
    make_mechanism("dbitflip", k=5, epsilon=2.0, d=3),
    make_mechanism("dbitflip", k=4, epsilon=1.0, d=1),
    make_mechanism("cms", k=4, epsilon=1.0, hash_count=3, width=6),
]


def enumerated_weights(mechanism) -> np.ndarray:
    """The weight of every report in ``report_probabilities`` order."""
    if mechanism.name == "cms":
        patterns = np.array(list(itertools.product((0, 1), repeat=mechanism.width)))
        return np.tile(patterns.sum(axis=1), mechanism.hash_count)
    subsets = math.comb(mechanism.k, mechanism.d)
    patterns = np.array(list(itertools.product((0, 1), repeat=mechanism.d)))
    return np.tile(patterns.sum(axis=1), subsets)


@pytest.mark.parametrize("mechanism", WEIGHTED, ids=lambda m: f"{m.name}{m.params().get('d', '')}")
def test_weight_law_is_exact_and_the_same_for_every_answer(mechanism):
    # Enumerate every report: P(W = w | answer) summed over reports of weight w, for each answer.
    table = mechanism.report_probabilities()
    weights = enumerated_weights(mechanism)
    law = report_weights.weight_distribution(mechanism)
    for answer in range(mechanism.k):
        by_weight = np.bincount(weights, weights=table[answer], minlength=law.size)
        np.testing.assert_allclose(by_weight, law, rtol=0, atol=1e-12)


@pytest.mark.parametrize("mechanism", WEIGHTED[:4], ids=lambda m: f"{m.name}{m.params().get('d', '')}")
def test_the_weight_and_bit_law_is_exact(mechanism):
    # P(W = w, bit v = 1 | answer a) by enumeration, for a = v and a != v, against weight_bit_law.
    table = mechanism.report_probabilities()
    weights = enumerated_weights(mechanism)
    subsets = list(itertools.combinations(range(mechanism.k), mechanism.d))
    patterns = np.array(list(itertools.product((0, 1), repeat=mechanism.d)))
    bit_zero = np.concatenate([(patterns[:, list(s).index(0)] if 0 in s else np.zeros(len(patterns))) for s in subsets])
    alpha, gamma = report_weights.weight_bit_law(mechanism)
    for answer, law in ((0, alpha), (1, gamma)):
        joint = np.bincount(weights, weights=table[answer] * bit_zero, minlength=alpha.size)
        np.testing.assert_allclose(joint, law, rtol=0, atol=1e-12)


@pytest.mark.parametrize("mechanism", WEIGHTED, ids=lambda m: f"{m.name}{m.params().get('d', '')}")
def test_weight_profile_counts_reports_by_weight_and_bit(mechanism):
    packed = mechanism.randomize(np.arange(200) % mechanism.k, rng=4)
    profile = report_weights.weight_profile(mechanism, packed)
    reports = [mechanism.unpack_report(row.tobytes()) for row in packed]
    weights = np.array([sum(r["bits"]) for r in reports])
    assert profile[:, 0].tolist() == np.bincount(weights, minlength=profile.shape[0]).tolist()
    if mechanism.name != "cms":
        for v in range(mechanism.k):
            has_v = np.array([v in r["buckets"] and r["bits"][r["buckets"].index(v)] == 1 for r in reports])
            assert profile[:, 1 + v].tolist() == np.bincount(weights[has_v], minlength=profile.shape[0]).tolist()


def test_mechanisms_with_one_value_per_report_have_no_weights():
    for name in ("krr", "olh", "subset", "hadamard"):
        mechanism = make_mechanism(name, k=5, epsilon=1.0)
        assert report_weights.weight_distribution(mechanism) is None
        assert report_weights.weight_profile(mechanism, mechanism.randomize([1, 2], rng=1)) is None


@pytest.mark.parametrize("name", ["krr", "subset", "oue", "dbitflip"])
def test_the_floor_is_the_estimate_of_one_report_that_does_not_name_the_option(name):
    # One report supporting option 0 (and nothing else the attacker controls): its unbiased estimate
    # at option 1, averaged over its random parts, is the floor L (module docstring).
    mechanism = make_mechanism(name, k=6, epsilon=1.0, **({"d": 6} if name == "dbitflip" else {}))
    fakes = poisoning.fake_reports(mechanism, "random item", 1, np.random.default_rng(0))
    if name in ("krr", "oue", "dbitflip"):
        # Exactly the floor for any such report: k-RR names one option, unary sets one bit.
        items = mechanism.unpack_report(fakes[0].tobytes())
        named = items["value"] if name == "krr" else items["buckets"][items["bits"].index(1)]
        other = (named + 1) % mechanism.k
        estimate = mechanism.estimate(mechanism.tally(fakes)).proportions
        assert estimate[other] == pytest.approx(integrity.support_floor(mechanism), abs=1e-12)
    else:
        estimate = mechanism.estimate(mechanism.tally(fakes)).proportions
        missing = np.flatnonzero(~np.isclose(estimate, estimate.max()))
        assert estimate[missing] == pytest.approx(integrity.support_floor(mechanism), abs=1e-12)


def test_weight_test_accepts_the_expected_histogram_and_rejects_a_pile_on_one_weight():
    law = report_weights.weight_distribution(make_mechanism("oue", k=8, epsilon=1.0))
    expected = np.round(law * 5000).astype(int)
    assert weight_tests.weight_test(law, expected) > 0.9
    piled = expected.copy()
    piled[2] += 500
    assert weight_tests.weight_test(law, piled) < 1e-6


def attacked(name: str, attack: str, fakes: int, seed: int, **params):
    mechanism = make_mechanism(name, k=8, epsilon=1.0, **params)
    rng = np.random.default_rng(seed)
    values = np.repeat(np.arange(8), np.round(np.array(poisoning.TRUTH) * 2000).astype(int))
    packed = mechanism.randomize(values, rng=rng)
    if fakes:
        packed = np.vstack([packed, poisoning.fake_reports(mechanism, attack, fakes, rng)])
    tally = mechanism.tally(packed)
    profile = report_weights.weight_profile(mechanism, packed)
    return mechanism, integrity.assess(mechanism, Tally(tally.n, tally.counts, profile))


@pytest.mark.parametrize(("name", "params"), [("oue", {}), ("sue", {}), ("dbitflip", {"d": 4})])
def test_an_obvious_maximal_gain_attack_is_found_its_share_estimated_and_the_target_recovered(name, params):
    # 2000 genuine reports, 500 fakes pushing option 3 (a 20 % share of fakes).
    _, result = attacked(name, "maximal gain", 500, seed=7, **params)
    assert result.significant and result.p_value < 1e-6
    low, high = result.fake_share_interval
    assert low <= 0.2 <= high
    assert result.favored == (poisoning.TARGET,) and result.recovery == "weights"
    assert np.all(np.abs(result.recovered - np.array(poisoning.TRUTH)) <= 1.96 * result.recovered_errors)
    truth = poisoning.TRUTH[poisoning.TARGET]
    assert abs(result.recovered[poisoning.TARGET] - truth) < abs(result.plain[poisoning.TARGET] - truth) / 3


def test_k_rr_with_an_unchosen_option_reveals_the_fakes_through_the_below_zero_test():
    mechanism = make_mechanism("krr", k=4, epsilon=1.0)
    genuine = mechanism.randomize(np.repeat([0, 1, 2], [600, 600, 800]), rng=3)  # nobody chose option 3
    fakes = np.full((400, 1), 0, dtype=np.uint8)
    result = integrity.assess(mechanism, mechanism.tally(np.vstack([genuine, fakes])))
    assert result.significant and result.p_values["below_zero"] < 1e-4
    assert result.favored == (0,) and result.recovery == "concentrated"
    low, high = result.fake_share_interval
    assert low <= 400 / 2400 <= high


def test_honest_reports_raise_no_alarm_and_leave_the_estimate_alone():
    mechanism, result = attacked("oue", "none", 0, seed=11)
    assert not result.significant
    assert result.favored == ()
    np.testing.assert_array_equal(result.recovered, result.plain)


def test_assess_refuses_an_empty_tally():
    mechanism = make_mechanism("krr", k=3, epsilon=1.0)
    with pytest.raises(ValueError, match="zero reports"):
        integrity.assess(mechanism, mechanism.empty_tally())


@pytest.mark.parametrize(("name", "params"), [("oue", {}), ("dbitflip", {"d": 4})])
def test_random_item_fakes_are_found_and_removed_without_inventing_a_favorite(name, params):
    # Fakes spread over every option: the weight rows they crowd are set aside, nothing is "favored".
    mechanism, result = attacked(name, "random item", 500, seed=5, **params)
    assert result.significant
    assert result.favored == ()
    # The recovered estimate uses the reports outside the fakes' weights only; allow 5 standard
    # errors of a plain estimate from that many reports (the weight-conditioned one is a bit noisier).
    law = report_weights.weight_distribution(mechanism)
    kept = 2000 * (1 - law[result.detail["fake_weights"]].sum())
    tolerance = 5 * mechanism.expected_standard_errors(int(kept), np.array(poisoning.TRUTH)).max()
    assert np.abs(result.recovered - np.array(poisoning.TRUTH)).max() < tolerance


def test_tallies_add_their_profiles():
    a = Tally(2, np.array([1, 1]), np.array([1, 1]))
    b = Tally(3, np.array([2, 1]), np.array([0, 3]))
    assert (a + b).profile.tolist() == [1, 4]
    assert (a + Tally(1, np.array([0, 1]))).profile is None


FALSE_ALARM_SETTINGS = [
    ("krr", {}),
    ("oue", {}),
    ("sue", {}),
    ("olh", {}),
    ("subset", {}),
    ("dbitflip", {"d": 3}),
    ("cms", {"hash_count": 16, "width": 8}),
    ("hadamard", {}),
]


def false_alarm_rate(mechanism, values: np.ndarray, repetitions: int) -> float:
    """The share of ``repetitions`` honest tallies of ``values`` (seed 2016) that raise an alarm."""
    rng = np.random.default_rng(2016)
    alarms = 0
    for _ in range(repetitions):
        packed = mechanism.randomize(values, rng=rng)
        tally = mechanism.tally(packed)
        profile = report_weights.weight_profile(mechanism, packed)
        alarms += integrity.assess(mechanism, Tally(tally.n, tally.counts, profile)).significant
    return alarms / repetitions


@pytest.mark.statistical
@pytest.mark.parametrize(("name", "params"), FALSE_ALARM_SETTINGS, ids=[s[0] for s in FALSE_ALARM_SETTINGS])
@pytest.mark.parametrize("shares", [(0.4, 0.3, 0.2, 0.1, 0.0, 0.0), (1 / 6,) * 6], ids=["edge", "uniform"])
def test_false_alarms_on_honest_data_stay_at_most_five_percent(name, params, shares):
    # R = 400 honest surveys of n = 1000; the rate may exceed 5 % by 3 binomial standard errors (3.3 points).
    mechanism = make_mechanism(name, k=6, epsilon=1.0, **params)
    values = np.repeat(np.arange(6), np.round(np.array(shares) * 1000).astype(int))
    assert false_alarm_rate(mechanism, values, repetitions=400) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 400)


@pytest.mark.statistical
@pytest.mark.parametrize("shares", [(0.7, 0.3), (0.5, 0.5)], ids=["skewed", "even"])
def test_false_alarms_at_two_options_stay_at_most_five_percent(shares):
    # OUE with k = 2: weights 0 and 2 are as likely as each other whatever the answer, but the honest
    # weight law is known exactly (nothing fitted), so the chi-square keeps its pools - 1 degrees of
    # freedom. R = 400 honest surveys of n = 1000; the rate may exceed 5 % by 3 binomial standard
    # errors (3.3 points). Measured at R = 2,000 (seed 2016): 2.9 % skewed, 2.35 % even.
    mechanism = make_mechanism("oue", k=2, epsilon=1.0)
    values = np.repeat(np.arange(2), np.round(np.array(shares) * 1000).astype(int))
    assert false_alarm_rate(mechanism, values, repetitions=400) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 400)


def test_the_weight_excess_test_is_exact_and_finds_one_crowded_weight():
    law = np.array([0.2, 0.5, 0.3])
    # P(Binomial(100, 0.5) >= 60) = 0.028444..., times 3 weights.
    assert weight_tests.weight_excess_test(law, np.array([15, 60, 25])) == pytest.approx(3 * 0.0284439668, rel=1e-6)
    assert weight_tests.weight_excess_test(law, np.array([20, 50, 30])) == 1.0
    assert weight_tests.weight_excess_test(np.array([0.5, 0.5, 0.0]), np.array([5, 5, 1])) == 0.0


def test_dbitflip_with_one_bucket_recovers_from_the_weight_zero_reports():
    # d = 1: maximal-gain fakes all have weight 1; the weight-0 reports alone give the estimate back.
    mechanism = make_mechanism("dbitflip", k=5, epsilon=1.0, d=1)
    rng = np.random.default_rng(4)
    truth = np.array(poisoning.AUTO_TRUTH)
    genuine = mechanism.randomize(np.repeat(np.arange(5), np.round(truth * 2000).astype(int)), rng=rng)
    fakes = poisoning.fake_reports(mechanism, "maximal gain", 500, rng, target=poisoning.AUTO_TARGET)
    packed = np.vstack([genuine, fakes])
    result = integrity.assess(mechanism, mechanism.tally(packed), report_weights.weight_profile(mechanism, packed))
    assert result.significant and result.recovery == "weights" and result.favored == (poisoning.AUTO_TARGET,)
    assert np.all(np.abs(result.recovered - truth) <= 3 * result.recovered_errors)
    assert result.plain[poisoning.AUTO_TARGET] - truth[poisoning.AUTO_TARGET] > 0.3


def test_capabilities_are_measured_for_every_mechanism_automatic_picks():
    from ldp.advisor import recommend

    picked = {recommend(k, e, 1000).best.mechanism for k in range(2, 40, 3) for e in (0.1, 0.5, 1.0, 2.0, 5.0)}
    assert picked <= set(integrity.CAPABILITIES) and "dbitflip" in integrity.CAPABILITIES  # memoized pick
    assert {name for name, _ in poisoning.AUTOMATIC.values()} | {n for n, _ in poisoning.REFERENCE.values()} == set(
        integrity.CAPABILITIES
    )
    assert not integrity.capability(make_mechanism("hadamard", k=5, epsilon=1.0)).recovers


@pytest.mark.parametrize(("name", "params"), [("sue", {}), ("dbitflip", {"d": 5}), ("dbitflip", {"d": 1})])
def test_the_bit_contrast_test_finds_fakes_that_pad_to_the_honest_weight(name, params):
    # 5 % maximal-gain fakes, padded to the honest mean weight (the weight test alone misses them often).
    mechanism = make_mechanism(name, k=5, epsilon=1.0, **params)
    rng = np.random.default_rng(12)
    values = np.repeat(np.arange(5), np.round(np.array(poisoning.AUTO_TRUTH) * 2000).astype(int))
    honest = mechanism.randomize(values, rng=rng)
    fakes = poisoning.fake_reports(mechanism, "maximal gain", 105, rng, target=poisoning.AUTO_TARGET)
    for packed, low in ((honest, False), (np.vstack([honest, fakes]), True)):
        profile = report_weights.weight_profile(mechanism, packed)
        p = weight_tests.bit_contrast_test(mechanism, profile, mechanism.tally(packed))
        assert (p < 1e-3) if low else (p > 0.05)


def test_reports_that_all_sit_on_the_fakes_weight_leave_nothing_to_recover_from():
    # Every report has all bits set: the crowded weight holds them all, so the weight-conditioned
    # estimate would divide by zero genuine reports; the assessment falls back instead of failing.
    mechanism = make_mechanism("oue", k=4, epsilon=1.0)
    packed = np.ones((40, 4), dtype=np.uint8)
    with np.errstate(all="raise"):
        result = integrity.assess(mechanism, mechanism.tally(packed), report_weights.weight_profile(mechanism, packed))
    assert result.significant
    assert result.recovery != "weights"
    assert np.all(np.isfinite(result.recovered))


def test_a_false_alarm_on_the_only_informative_weight_leaves_nothing_to_recover_from():
    # OUE with k = 2: reports of weight 0 and 2 are as likely whatever the answer, so when weight 1
    # is flagged the kept weights carry no contrast and the weight-conditioned estimate would divide
    # by alpha - gamma = 0. The profile is the one CI met with 600 honest browser respondents.
    mechanism = make_mechanism("oue", k=2, epsilon=1.0)
    sampled = 0b11  # OUE samples every bucket; the second byte holds the bits, bucket 0 lowest
    bits = [0b00] * 182 + [0b01] * 120 + [0b10] * 208 + [0b11] * 90
    packed = np.array([[sampled, b] for b in bits], dtype=np.uint8)
    profile = report_weights.weight_profile(mechanism, packed)
    assert profile.tolist() == [[182, 0, 0], [328, 120, 208], [90, 90, 90]]
    with np.errstate(all="raise"):
        result = integrity.assess(mechanism, mechanism.tally(packed), profile)
    assert result.recovery != "weights"
    assert np.all(np.isfinite(result.recovered))
