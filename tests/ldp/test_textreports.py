"""Free-text mechanisms behind the flat tally interface (ldp.textreports)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp.mechanisms.rappor import Rappor
from ldp.text import normalize_text
from ldp.textreports import (
    TEXT_MECHANISMS,
    CandidateCounts,
    benjamini_hochberg,
    make_text_mechanism,
    rappor_for_epsilon,
)

WORDS = [normalize_text(t) for t in ("서울", "Busan", "대구 ", "Incheon")]


def reports_of(mechanism, texts, rng):
    return mechanism.randomize_reports(texts, rng=rng)


def small(name, epsilon=3.0):
    params = {"rappor": {"bits": 16, "cohorts": 8}}.get(name, {"hash_count": 8, "width": 16})
    return make_text_mechanism(name, epsilon=epsilon, **params)


@pytest.mark.parametrize("name", TEXT_MECHANISMS)
def test_the_flat_tally_holds_the_inner_statistics_and_adds_up(name):
    mechanism = small(name)
    texts = [WORDS[i % 3] for i in range(60)]
    packed = [mechanism.parse_report(r) for r in reports_of(mechanism, texts, rng=5)]
    whole = mechanism.tally(mechanism.unpack_many(b"".join(packed)))
    halves = [mechanism.tally(mechanism.unpack_many(b"".join(part))) for part in (packed[:25], packed[25:])]
    assert whole.n == 60 and whole.counts.shape == (mechanism.cell_count,)
    assert np.array_equal((halves[0] + halves[1]).counts, whole.counts)
    inner = mechanism.inner.tally(mechanism.unpack_many(b"".join(packed)))
    restored = mechanism.counts(whole)
    assert np.array_equal(restored.reports, inner.reports)
    inner_cells = inner.ones if isinstance(mechanism.inner, Rappor) else inner.totals
    restored_cells = restored.ones if isinstance(mechanism.inner, Rappor) else restored.totals
    assert np.array_equal(restored_cells, inner_cells)
    assert mechanism.empty_tally().counts.shape == whole.counts.shape


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 2.0, 4.0, 4.5, 8.0])
def test_rappor_chosen_from_epsilon_has_exactly_that_epsilon(epsilon):
    rappor = rappor_for_epsilon(epsilon)
    assert math.isclose(rappor.epsilon_one_report(), epsilon, rel_tol=1e-12)
    assert rappor.epsilon_infinity() > epsilon
    assert 0 < rappor.f <= 0.5 and 0 < rappor.p < rappor.q < 1
    # Stored parameters rebuild it, and must agree with the stated epsilon.
    rebuilt = make_text_mechanism("rappor", epsilon=epsilon, **rappor.params())
    assert rebuilt.params() == rappor.params()
    with pytest.raises(ValueError, match="does not match"):
        make_text_mechanism("rappor", epsilon=epsilon * 1.01, **rappor.params())


def test_the_seed_parameters_give_the_seed_epsilon():
    # Seed 004, Fig. 3: bits 32, h 2, cohorts 64, f 0.5, p 0.25, q 0.75: epsilon_1 = 2.0433.
    mechanism = make_text_mechanism("rappor", epsilon=4 * math.log(5 / 3))
    seed = {"bits": 32, "hash_count": 2, "cohorts": 64, "f": 0.5, "p": 0.25, "q": 0.75}
    assert mechanism.params() == pytest.approx(seed)
    assert round(mechanism.epsilon, 4) == 2.0433


def test_benjamini_hochberg_steps_up():
    # Sorted 0.001, 0.02, 0.035, 0.3 against 0.0125, 0.025, 0.0375, 0.05: the third passes, so three are rejected.
    assert benjamini_hochberg([0.3, 0.035, 0.001, 0.02], 0.05).tolist() == [False, True, True, True]
    assert not benjamini_hochberg([0.2, 0.4], 0.05).any()


@pytest.mark.parametrize("name", ["text-cms", "rappor"])
def test_queries_find_the_frequent_strings_and_not_the_absent_one(name):
    # 3000 / 1000 / 0 writers (simulated counts, seed 3); each estimate lies within 4 standard errors.
    mechanism = make_text_mechanism(name, epsilon=4.0)
    counts = mechanism.inner.simulate_counts(WORDS[:2], [3000, 1000], rng=3)
    result = mechanism.query(mechanism.from_counts(counts), [*WORDS[:2], "대구"])
    assert result.found.tolist() == [True, True, False]
    assert np.all(np.abs(result.counts - [3000, 1000, 0]) <= 4 * result.standard_errors)
    low, high = result.interval()
    assert np.all(low < result.counts) and np.all(result.counts < high)
    assert result.method == ("bonferroni" if name == "rappor" else "benjamini-hochberg")


def test_hadamard_sketch_queries_from_reports():
    mechanism = make_text_mechanism("text-hcms", epsilon=4.0, hash_count=16, width=32)
    texts = [WORDS[0]] * 1500 + [WORDS[1]] * 500
    packed = [mechanism.parse_report(r) for r in reports_of(mechanism, texts, rng=7)]
    result = mechanism.query(mechanism.tally(mechanism.unpack_many(b"".join(packed))), WORDS[:3])
    assert result.found.tolist() == [True, True, False]
    assert np.all(np.abs(result.counts - [1500, 500, 0]) <= 4 * result.standard_errors)


@pytest.mark.parametrize("name", ["text-cms", "rappor"])
def test_the_share_error_bound_covers_the_query_error_without_other_strings(name):
    mechanism = make_text_mechanism(name, epsilon=2.0)
    tally = mechanism.from_counts(mechanism.inner.simulate_counts([WORDS[0]], [2000], rng=1))
    result = mechanism.query(tally, [WORDS[0]])
    assert result.standard_errors[0] / 2000 <= mechanism.share_standard_error(2000) * 1.05


def test_bad_names_and_tallies_are_refused():
    with pytest.raises(ValueError, match="mechanism must be one of"):
        make_text_mechanism("krr", epsilon=1.0)
    mechanism = make_text_mechanism("text-cms", epsilon=1.0)
    with pytest.raises(ValueError, match="counts"):
        mechanism.counts(small("rappor").empty_tally())


def test_rappor_counts_at_survey_scale_are_unbiased_with_honest_standard_errors():
    # 40 simulated surveys (seeds 0..39) of 1,550 reports in 64 cohorts (about 24 each), epsilon_1 = 4.
    # Each candidate's z = (count - truth) / standard error must average 0 within 4 / sqrt(40) = 0.63
    # and have a standard deviation within [0.6, 1.5]. Before the decoding pooled its weights, absent
    # candidates averaged z = -2.6 and -3.0 here.
    mechanism = make_text_mechanism("rappor", epsilon=4.0)
    names, truth = [*WORDS, "제주"], np.array([900, 500, 150, 0, 0])
    z = []
    for seed in range(40):
        counts = mechanism.inner.simulate_counts(names[:3], truth[:3], rng=seed)
        result = mechanism.query(mechanism.from_counts(counts), names)
        z.append((result.counts - truth) / result.standard_errors)
    z = np.array(z)
    assert np.all(np.abs(z.mean(axis=0)) < 4 / np.sqrt(40)), z.mean(axis=0)
    assert np.all((z.std(axis=0) > 0.6) & (z.std(axis=0) < 1.5)), z.std(axis=0)


def test_consistent_counts_clip_to_zero_and_n_and_intervals_intersect_it():
    counts = CandidateCounts(
        ("coffee", "tea", "water"),
        np.array([-4.0, 5.0, 14.0]),
        np.array([9.0, 1.0, 3.0]),
        np.array([0.7, 0.01, 0.001]),
        np.array([False, True, True]),
        10,
        0.05,
        "benjamini-hochberg",
    )
    assert counts.consistent_counts.tolist() == [0.0, 5.0, 10.0]
    low, high = counts.interval(0.95)
    clipped_low, clipped_high = counts.consistent_interval(0.95)
    np.testing.assert_allclose(clipped_low, [0.0, low[1], 14 - 1.959963984540054 * 3])
    np.testing.assert_allclose(clipped_high, [10.0, high[1], 10.0])
    assert counts.counts.tolist() == [-4.0, 5.0, 14.0]  # the unbiased counts are kept


@pytest.mark.parametrize("name", TEXT_MECHANISMS)
@pytest.mark.parametrize("n", [2, 10, 20])
def test_consistent_counts_of_few_reports_stay_in_zero_to_n(name, n):
    mechanism = small(name, epsilon=1.0)
    texts = [WORDS[0]] * n
    packed = [mechanism.parse_report(r) for r in reports_of(mechanism, texts, rng=n)]
    query = mechanism.query(mechanism.tally(mechanism.unpack_many(b"".join(packed))), WORDS)
    low, high = query.consistent_interval(0.95)
    for values in (query.consistent_counts, low, high):
        assert np.all((values >= 0) & (values <= n))
    assert np.all(low <= query.consistent_counts) and np.all(query.consistent_counts <= high)
