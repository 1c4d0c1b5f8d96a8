"""The one registry: every mechanism of every family builds, validates, tallies, estimates, states its epsilon."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from ldp import registry
from ldp.advisor import Candidate, Recommendation, recommend
from ldp.mechanisms import MECHANISMS, InvalidReport
from ldp.multiselect import SET_MECHANISMS, SetCandidate, SetRecommendation, recommend_multiselect
from ldp.numeric import NUMERIC_MECHANISMS
from ldp.numeric.advisor import MeanCandidate, MeanRecommendation, recommend_mean
from ldp.privacy import EPSILON_MAX, EPSILON_MIN
from ldp.text import normalize_text
from ldp.textreports import TEXT_MECHANISMS, recommend_text

#: What a question fixes beside epsilon, per family: its options (and at most how many may be
#: chosen), or its range; free text has neither.
SHAPE = {"shares": {"k": 5}, "multi": {"k": 5, "max_choices": 2}, "mean": {"lo": -5.0, "hi": 20.0}, "text": {}}
EPSILONS = [EPSILON_MIN, 0.5, math.log(3), 2.0, EPSILON_MAX]
WORDS = [normalize_text(t) for t in ("서울", "Busan", "대구")]


def shape(name):
    """The question's shape for ``name``: yes/no (k = 2) for the designs defined only there."""
    return {"k": 2} if name in registry.TWO_OPTIONS else SHAPE[registry.family_of(name)]


def build(name, epsilon=1.0):
    return registry.build(name, epsilon=epsilon, **shape(name))


def json_reports(mechanism, n, rng):
    """n reports as browsers send them, of true answers spread over the question's answers."""
    family = mechanism.family
    if family == "text":
        return mechanism.randomize_reports([WORDS[i % 3] for i in range(n)], rng=rng)
    if family == "shares":
        packed = mechanism.randomize(np.arange(n) % mechanism.k, rng=rng)
    elif family == "multi":
        sets = np.zeros((n, mechanism.k), dtype=bool)
        sets[np.arange(n), np.arange(n) % mechanism.k] = True
        sets[::2, 0] = True
        packed = mechanism.randomize(sets, rng=rng)
    else:
        packed = mechanism.randomize(np.linspace(mechanism.lo, mechanism.hi, n), rng=rng)
    return [mechanism.unpack_report(row.tobytes()) for row in packed]


def test_the_families_partition_the_names_and_agree_with_the_old_constants():
    assert registry.names() == tuple(name for family in registry.FAMILIES for name in registry.names(family))
    assert len(set(registry.names())) == len(registry.names())
    assert set(registry.names("shares")) == set(MECHANISMS)
    assert set(registry.names("mean")) == set(NUMERIC_MECHANISMS)
    assert registry.names("multi") == tuple(SET_MECHANISMS)
    assert registry.names("text") == tuple(TEXT_MECHANISMS)
    for family, old in (("shares", MECHANISMS), ("mean", NUMERIC_MECHANISMS), ("multi", SET_MECHANISMS)):
        assert {registry.family_of(name) for name in old} == {family}
    assert {registry.family_of(name) for name in TEXT_MECHANISMS} == {"text"}


@pytest.mark.parametrize("name", ["", "KRR", "set-unary", "padding", "pair", None])
def test_unknown_names_are_refused_with_the_name(name):
    with pytest.raises(ValueError, match=re.escape(repr(name))):
        registry.build(name, epsilon=1.0, k=3)
    with pytest.raises(ValueError, match="mechanism must be one of"):
        registry.family_of(name)


def test_a_multi_select_name_and_its_stored_knob_must_agree():
    assert registry.build("padding-olh", k=4, epsilon=1.0, max_choices=2, oracle="olh").params()["oracle"] == "olh"
    with pytest.raises(ValueError, match="oracle='krr' only"):
        registry.build("padding-krr", k=4, epsilon=1.0, max_choices=2, oracle="olh")


def test_unknown_families_and_missing_options_are_refused():
    with pytest.raises(ValueError, match="'pair'"):
        registry.names("pair")
    for name in ("krr", "set-oue"):
        with pytest.raises(ValueError, match=f"{name} needs k"):
            registry.build(name, epsilon=1.0)


@pytest.mark.parametrize("name", registry.names())
def test_every_mechanism_builds_from_epsilon_and_satisfies_the_protocol(name):
    mechanism = build(name)
    assert isinstance(mechanism, registry.LDPMechanism)
    assert mechanism.name == name
    assert mechanism.family == registry.family_of(name)
    assert mechanism.client_spec()["mechanism"] == name
    # Its stored parameters rebuild it, whatever k the caller holds for families without options.
    rebuilt = registry.build(name, epsilon=1.0, k=shape(name).get("k", 0), **rebuild_params(mechanism))
    assert rebuilt.client_spec() == mechanism.client_spec()


def rebuild_params(mechanism):
    params = mechanism.params()
    if mechanism.family == "mean":
        params = {"lo": mechanism.lo, "hi": mechanism.hi, **params}
    return params


@pytest.mark.parametrize("name", registry.names())
def test_a_randomized_report_round_trips_through_validate_tally_and_estimate(name):
    mechanism = build(name, epsilon=2.0)
    reports = json_reports(mechanism, 40, rng=7)
    packed = [mechanism.parse_report(report) for report in reports]
    assert all(len(p) == mechanism.report_width for p in packed)
    assert [mechanism.unpack_report(p) for p in packed] == reports
    whole = mechanism.tally(mechanism.unpack_many(b"".join(packed)))
    halves = mechanism.tally(mechanism.unpack_many(b"".join(packed[:15]))) + mechanism.tally(
        mechanism.unpack_many(b"".join(packed[15:]))
    )
    assert whole.n == 40 and np.array_equal(halves.counts, whole.counts)
    assert (mechanism.empty_tally() + whole).n == 40
    estimate = mechanism.estimate(whole, WORDS) if mechanism.family == "text" else mechanism.estimate(whole)
    assert isinstance(estimate, registry.Estimate)
    assert estimate.n == 40
    low, high = estimate.confidence_interval()
    assert np.all(np.asarray(low) <= np.asarray(high))
    with pytest.raises(InvalidReport):
        mechanism.parse_report({"not": "a report"})


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("name", registry.names())
def test_every_mechanism_states_exactly_the_epsilon_it_was_built_with(name, epsilon):
    mechanism = build(name, epsilon)
    stated, delta = mechanism.privacy_guarantee()
    assert math.isclose(stated, epsilon, rel_tol=1e-12) and mechanism.epsilon == stated
    worst = mechanism.worst_case_log_ratio()
    if name == "gaussian":  # (epsilon, delta) only: its table's delta at epsilon meets the target
        assert worst == math.inf and 0 < mechanism.delta_at(epsilon) <= delta
    elif mechanism.family == "mean":  # integer weights: as tests/ldp/test_numeric_privacy.py, never above
        assert delta == 0 and epsilon - 1e-9 <= worst <= epsilon + 1e-15
    else:
        assert delta == 0 and math.isclose(worst, epsilon, rel_tol=1e-12)


def test_every_advisor_returns_the_one_result_type():
    results = [
        recommend(5, 1.0, 1000),
        recommend_mean(0, 10, 1.0, 1000),
        recommend_multiselect(5, 2, 1.0, 1000),
        recommend_text(1.0, 1000),
    ]
    for result, family in zip(results, ("shares", "mean", "multi", "text"), strict=True):
        assert type(result) is registry.Recommendation
        assert result.best == result.ranking[0]
        assert all(type(c) is registry.Candidate and registry.family_of(c.mechanism) == family for c in result.ranking)
    assert (Candidate, Recommendation) == (registry.Candidate, registry.Recommendation)
    assert {MeanCandidate, SetCandidate} == {Candidate} and {MeanRecommendation, SetRecommendation} == {Recommendation}
    assert results[1].regime == "one-bit" and results[0].estimator == "auto"
