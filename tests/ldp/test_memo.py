"""Memoization (ldp.memo): deterministic permanent layers, their distribution, exact epsilons."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest

from ldp import make_mechanism, make_numeric_mechanism
from ldp.mechanisms.base import Tally
from ldp.mechanisms.bitflip import DBitFlip
from ldp.mechanisms.rappor import Rappor
from ldp.memo import (
    HmacStream,
    StreamExhausted,
    dbitflip_epsilon_after_rounds,
    dbitflip_round_epsilon,
    dbitflip_round_shares,
    flip_bits,
    memoized_alpha,
    memoized_cohort,
    memoized_dbitflip,
    memoized_one_bit,
    memoized_prr,
    one_bit_epsilon_after_rounds,
    one_bit_round_epsilon,
    one_bit_round_mean,
)
from ldp.privacy import worst_case_log_ratio

SECRET = bytes(range(32))
SEED_FIG3 = Rappor(bits=32, hash_count=2, cohorts=64, f=0.5, p=0.25, q=0.75)
FOUR_BIT_FLIP = make_mechanism("dbitflip", 5, 1.0, d=4)
ONE_BIT = make_numeric_mechanism("1bitmean", 0, 10, 1.0, grid=10)


def secrets(count: int) -> list[bytes]:
    """Distinct fixed 32-byte secrets, one per simulated respondent."""
    return [i.to_bytes(32, "big") for i in range(1, count + 1)]


def test_the_same_answer_gives_the_same_permanent_layer_and_another_a_new_one():
    first = memoized_prr(SECRET, "course-eval", "other", "좋은 강의", SEED_FIG3)
    again = memoized_prr(SECRET, "course-eval", "other", "좋은 강의", SEED_FIG3)
    changed = memoized_prr(SECRET, "course-eval", "other", "지루한 강의", SEED_FIG3)
    assert first[0] == again[0] == changed[0]  # the cohort is the respondent's
    assert np.array_equal(first[1], again[1])
    assert not np.array_equal(first[1], changed[1])
    assert memoized_dbitflip(SECRET, "s", "q", 3, FOUR_BIT_FLIP) == memoized_dbitflip(
        SECRET, "s", "q", 3, FOUR_BIT_FLIP
    )
    buckets, _ = memoized_dbitflip(SECRET, "s", "q", 1, FOUR_BIT_FLIP)
    assert buckets == memoized_dbitflip(SECRET, "s", "q", 3, FOUR_BIT_FLIP)[0]  # buckets ignore the answer


def test_another_secret_series_or_question_is_keyed_apart():
    base = memoized_prr(SECRET, "s", "q", "x", SEED_FIG3)[1]
    for secret, series, question in ((bytes(32), "s", "q"), (SECRET, "s2", "q"), (SECRET, "s", "q2")):
        assert not np.array_equal(memoized_prr(secret, series, question, "x", SEED_FIG3)[1], base)


def test_memoized_prr_bits_follow_f_over_many_respondents():
    # Over 3000 respondents (secrets) each bit of B' is 1 with probability 1 - f/2 where the
    # Bloom filter is set and f/2 elsewhere: within 4 standard errors per bit.
    n = 3000
    mechanism = Rappor(bits=16, hash_count=2, cohorts=1, f=0.5)
    bloom = mechanism.bloom_filter("x", 0)
    ones = sum(memoized_prr(secret, "s", "q", "x", mechanism)[1].astype(int) for secret in secrets(n))
    expected = np.where(bloom == 1, 0.75, 0.25)
    assert np.all(np.abs(ones / n - expected) <= 4 * np.sqrt(expected * (1 - expected) / n))


def test_memoized_cohorts_alphas_and_dbitflip_buckets_are_uniform_over_respondents():
    n = 4000
    cohorts = np.bincount([memoized_cohort(s, "s", "q", 4) for s in secrets(n)], minlength=4)
    assert np.all(np.abs(cohorts / n - 0.25) <= 4 * math.sqrt(0.25 * 0.75 / n))
    alphas = np.array([memoized_alpha(s, "s", "q") for s in secrets(n)])
    assert abs(alphas.mean() - 0.5) <= 4 * math.sqrt(1 / 12 / n)
    sampled = np.zeros(5)
    for secret in secrets(1000):
        sampled[memoized_dbitflip(secret, "s", "q", 0, FOUR_BIT_FLIP)[0]] += 1
    assert np.all(np.abs(sampled / 1000 - 0.8) <= 4 * math.sqrt(0.8 * 0.2 / 1000))


def test_memoized_one_bit_rounds_with_the_kept_alpha_and_keeps_a_bit_per_grid_point():
    alpha = memoized_alpha(SECRET, "s", "q")
    point, bit = memoized_one_bit(SECRET, "s", "q", 4.44, ONE_BIT)
    assert point == (5 if 0.44 + alpha >= 1 else 4)
    # A value that rounds to the same grid point reuses the same bit.
    same = 4.0 + (0.2 if point == 4 else 0.9999)
    assert memoized_one_bit(SECRET, "s", "q", same, ONE_BIT) == (point, bit)


def test_a_memo_stream_mirrors_the_javascript_samplers_and_runs_out_loudly():
    stream = HmacStream(SECRET, "x", "s", "q")
    for _ in range(128):
        stream.word()
    with pytest.raises(StreamExhausted):
        stream.word()
    with pytest.raises(ValueError, match="secret"):
        HmacStream(b"short", "x", "s", "q")


@pytest.mark.parametrize("gamma", [0.0, 0.1, 0.3])
@pytest.mark.parametrize("mechanism", [FOUR_BIT_FLIP, make_mechanism("dbitflip", 4, 2.0, d=1)], ids=["d4", "d1"])
def test_one_round_of_memoized_dbitflip_enumerated_attains_its_epsilon(mechanism, gamma):
    # The buckets are independent of the answer; for the bucket set {0..d-1} enumerate every bit
    # vector for every answer (answers outside the set give the all-"other" row).
    table = []
    for value in range(mechanism.k):
        kept = [
            mechanism.true_bit_probability if b == value else mechanism.other_bit_probability
            for b in range(mechanism.d)
        ]
        one = [(1 - gamma) * x + gamma * (1 - x) for x in kept]
        table.append(
            [
                math.prod(o if bit else 1 - o for o, bit in zip(one, bits, strict=True))
                for bits in itertools.product([0, 1], repeat=mechanism.d)
            ]
        )
    assert math.isclose(worst_case_log_ratio(table), dbitflip_round_epsilon(mechanism, gamma), rel_tol=1e-9)
    assert dbitflip_round_epsilon(mechanism, gamma) <= mechanism.worst_case_log_ratio() + 1e-12


@pytest.mark.parametrize("gamma", [0.0, 0.1, 0.3])
def test_one_round_of_memoized_one_bit_mean_enumerated_attains_its_epsilon(gamma):
    kept = (ONE_BIT.base + np.arange(ONE_BIT.grid + 1) * ONE_BIT.slope) / ONE_BIT.denominator
    one = (1 - gamma) * kept + gamma * (1 - kept)
    table = np.stack([1 - one, one], axis=1)
    assert math.isclose(worst_case_log_ratio(table), one_bit_round_epsilon(ONE_BIT, gamma), rel_tol=1e-9)


@pytest.mark.parametrize(
    ("after_rounds", "one_round", "permanent"),
    [
        (
            lambda r: dbitflip_epsilon_after_rounds(FOUR_BIT_FLIP, 0.2, r),
            dbitflip_round_epsilon(FOUR_BIT_FLIP, 0.2),
            FOUR_BIT_FLIP.worst_case_log_ratio(),
        ),
        (
            lambda r: one_bit_epsilon_after_rounds(ONE_BIT, 0.2, r),
            one_bit_round_epsilon(ONE_BIT, 0.2),
            ONE_BIT.worst_case_log_ratio(),
        ),
    ],
    ids=["4bitflip", "1bitmean"],
)
def test_rounds_of_one_answer_leak_towards_the_permanent_epsilon_never_past_it(after_rounds, one_round, permanent):
    leaks = [after_rounds(r) for r in range(1, 200)]
    assert math.isclose(leaks[0], one_round)
    assert all(a < b for a, b in itertools.pairwise(leaks[:10]))
    assert all(leak <= permanent * (1 + 1e-9) for leak in leaks)
    assert leaks[-1] == pytest.approx(permanent, rel=1e-3)
    assert 10 * one_round > leaks[9]  # sequential composition without memoization spends more


def test_two_memoized_one_bit_rounds_enumerated_attain_the_two_round_epsilon():
    gamma = 0.15
    rows = []
    for point in range(ONE_BIT.grid + 1):
        kept = (ONE_BIT.base + point * ONE_BIT.slope) / ONE_BIT.denominator
        row = []
        for first, second in itertools.product([0, 1], repeat=2):
            given = [
                (gamma if first else 1 - gamma) * (gamma if second else 1 - gamma),
                (1 - gamma if first else gamma) * (1 - gamma if second else gamma),
            ]
            row.append((1 - kept) * given[0] + kept * given[1])
        rows.append(row)
    assert math.isclose(worst_case_log_ratio(rows), one_bit_epsilon_after_rounds(ONE_BIT, gamma, 2), rel_tol=1e-9)


MEMO_DBITFLIPS = {
    "4bitflip": FOUR_BIT_FLIP,
    "1bitflip": make_mechanism("dbitflip", 5, 1.0, d=1),
    "3bitflip-k8": make_mechanism("dbitflip", 8, 2.0, d=3),
}


def memoized_bit_probabilities(served: DBitFlip, gamma: float) -> tuple[float, float]:
    """(p1, p0) of the memoized bits, as the app sets them (surveys/series/rounds.py):
    p = (p' - gamma) / (1 - 2 gamma)."""
    return tuple((p - gamma) / (1 - 2 * gamma) for p in (served.true_bit_probability, served.other_bit_probability))


def memoized_dbitflip_table(served: DBitFlip, gamma: float, layer: str) -> np.ndarray:
    """P(report | answer) of memoized dBitFlip over every bucket set and bit vector: the memoized
    bits themselves ("permanent"), one round's flipped bits, or two rounds' (the same memoized bits
    flipped afresh in each round: per bucket, a sum over the memoized bit)."""
    p1, p0 = memoized_bit_probabilities(served, gamma)
    flip = np.array([[1 - gamma, gamma], [gamma, 1 - gamma]])  # flip[b', b] = P(sent b | memoized b')
    per_bit = {
        "permanent": lambda one: np.array([1 - one, one]),
        "one round": lambda one: np.array([1 - one, one]) @ flip,
        "two rounds": lambda one: (1 - one) * np.kron(flip[0], flip[0]) + one * np.kron(flip[1], flip[1]),
    }[layer]
    subsets = list(itertools.combinations(range(served.k), served.d))  # buckets: uniform, whatever the answer
    return np.array(
        [
            np.concatenate([functools.reduce(np.kron, [per_bit(p1 if b == value else p0) for b in s]) for s in subsets])
            / len(subsets)
            for value in range(served.k)
        ]
    )


@pytest.mark.parametrize("gamma", [0.0, 0.1, 0.25])
@pytest.mark.parametrize("served", MEMO_DBITFLIPS.values(), ids=MEMO_DBITFLIPS)
def test_two_memoized_dbitflip_rounds_enumerated_attain_their_epsilons(served, gamma):
    # The bounds the app states: each round spends the served spec's epsilon; all rounds together
    # epsilon_inf, the memoized bits' dBitFlip epsilon 2 ln(p1 / (1 - p1)) (ln when d = 1;
    # surveys.series.rounds.permanent_epsilon). Two rounds of one answer spend exactly
    # dbitflip_epsilon_after_rounds(2): more than one round, less than epsilon_inf unless gamma = 0.
    p1, _ = memoized_bit_probabilities(served, gamma)
    epsilon_inf = (1 if served.d == 1 else 2) * math.log(p1 / (1 - p1))
    memoized = DBitFlip(k=served.k, epsilon=epsilon_inf, d=served.d)
    assert memoized.true_bit_probability == pytest.approx(p1, abs=1e-12)
    one = worst_case_log_ratio(memoized_dbitflip_table(served, gamma, "one round"))
    assert one == pytest.approx(served.epsilon, rel=1e-9)
    assert worst_case_log_ratio(memoized_dbitflip_table(served, gamma, "permanent")) == pytest.approx(
        epsilon_inf, rel=1e-9
    )
    two = worst_case_log_ratio(memoized_dbitflip_table(served, gamma, "two rounds"))
    assert two == pytest.approx(dbitflip_epsilon_after_rounds(memoized, gamma, 2), rel=1e-9)
    if gamma == 0:
        assert two == pytest.approx(epsilon_inf, rel=1e-9) and epsilon_inf == pytest.approx(one, rel=1e-9)
    else:
        assert one < two < min(2 * one, epsilon_inf)


def test_flips_and_gamma_are_checked():
    assert flip_bits([1, 0, 1], 0.0, rng=1).tolist() == [1, 0, 1]
    flipped = flip_bits(np.zeros(20_000, dtype=np.uint8), 0.25, rng=2)
    assert abs(flipped.mean() - 0.25) <= 4 * math.sqrt(0.25 * 0.75 / 20_000)
    for gamma in (-0.1, 0.5, True):
        with pytest.raises(ValueError, match="gamma"):
            flip_bits([1], gamma)
    with pytest.raises(ValueError, match="option index"):
        memoized_dbitflip(SECRET, "s", "q", 5, FOUR_BIT_FLIP)


def test_a_round_of_memoized_dbitflip_estimates_the_shares_without_bias():
    # 3000 respondents (secrets) answer 0, 1 or 2 in shares 1/2, 1/3, 1/6; each sends its memoized
    # bits flipped with gamma = 0.2. Tolerance: 4 times the per-bucket standard error bound
    # sqrt(k/d * m_true / n), m_true = (p1'(1 - p0')^2 + (1 - p1')p0'^2) / (p1' - p0')^2 >= m_false.
    gamma, n = 0.2, 3000
    answers = [0] * 1500 + [1] * 1000 + [2] * 500
    rng = np.random.default_rng(3)
    sampled, ones = np.zeros(5), np.zeros(5)
    for secret, answer in zip(secrets(n), answers, strict=True):
        buckets, bits = memoized_dbitflip(secret, "pulse", "q", answer, FOUR_BIT_FLIP)
        sampled[buckets] += 1
        ones[buckets] += flip_bits(bits, gamma, rng=rng)
    shares = dbitflip_round_shares(FOUR_BIT_FLIP, gamma, Tally(n, np.concatenate([sampled, ones])))
    p1 = (1 - gamma) * FOUR_BIT_FLIP.true_bit_probability + gamma * (1 - FOUR_BIT_FLIP.true_bit_probability)
    p0 = (1 - gamma) * FOUR_BIT_FLIP.other_bit_probability + gamma * (1 - FOUR_BIT_FLIP.other_bit_probability)
    m_true = (p1 * (1 - p0) ** 2 + (1 - p1) * p0**2) / (p1 - p0) ** 2
    assert np.all(np.abs(shares - [0.5, 1 / 3, 1 / 6, 0, 0]) <= 4 * math.sqrt(5 / 4 * m_true / n))


def test_a_round_of_memoized_one_bit_mean_estimates_the_mean_without_bias():
    gamma, n = 0.1, 3000
    values = np.linspace(0, 10, n)
    rng = np.random.default_rng(4)
    bits = np.array(
        [
            memoized_one_bit(secret, "pulse", "q", float(x), ONE_BIT)[1]
            for secret, x in zip(secrets(n), values, strict=True)
        ]
    )
    sent = flip_bits(bits, gamma, rng=rng)
    estimate = one_bit_round_mean(ONE_BIT, gamma, Tally(n, np.bincount(sent, minlength=2)))
    assert abs(estimate.mean - 5.0) <= 4 * estimate.expected_standard_error
    assert estimate.standard_error <= estimate.expected_standard_error
    assert estimate.expected_standard_error > ONE_BIT.expected_standard_error(n)  # the flip adds noise
    with pytest.raises(ValueError, match="zero reports"):
        one_bit_round_mean(ONE_BIT, gamma, Tally(0, np.zeros(2, dtype=int)))


def test_which_mechanisms_memoize_and_with_which_flip():
    from ldp.memo import DEFAULT_MEMO_GAMMA, MEMO_LAYERS, memo_flip, memo_layers, memoizes

    assert set(DEFAULT_MEMO_GAMMA) <= set(MEMO_LAYERS) == {"rappor", "dbitflip", "1bitmean"}
    assert memo_layers("krr") == "" and memo_flip("krr") is None and memo_flip("rappor") is None
    assert memo_flip("dbitflip") == 0.1 and memo_flip("dbitflip", 0.2) == 0.2
    assert not memoizes(make_mechanism("krr", k=3, epsilon=1.0).client_spec())
    # 1BitMean is memoized with the 1/4 flip below epsilon = ln 3, not above it.
    assert memoizes(make_numeric_mechanism("1bitmean", epsilon=1.0, lo=0, hi=1).client_spec())
    assert not memoizes(make_numeric_mechanism("1bitmean", epsilon=1.2, lo=0, hi=1).client_spec())


def test_the_permanent_epsilon_of_memoized_dbitflip_is_twice_its_bits():
    from ldp.memo import permanent_bit_probability, permanent_epsilon

    spec = make_mechanism("dbitflip", k=4, epsilon=1.0, d=2).client_spec()
    p1 = permanent_bit_probability(spec, 0.1)
    assert permanent_epsilon(spec, {"gamma": 0.1}) == pytest.approx(2 * math.log(p1 / (1 - p1)), rel=1e-15)
    with pytest.raises(ValueError, match="krr"):
        permanent_epsilon(make_mechanism("krr", k=3, epsilon=1.0).client_spec(), {})
