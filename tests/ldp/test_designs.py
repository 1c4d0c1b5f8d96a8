"""Randomized-response designs (ldp/designs/): exact epsilon, shared channels, reports, estimators."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import optimize

from ldp import registry
from ldp.designs import (
    DESIGNS,
    Crosswise,
    ForcedResponse,
    UnrelatedQuestion,
    Warner,
    design_epsilon,
    design_parameters,
    forced_response_epsilon,
)
from ldp.mechanisms import InvalidReport, KRandomizedResponse, Tally
from ldp.privacy import EPSILON_MAX, EPSILON_MIN

EPSILONS = [EPSILON_MIN, 0.1, 0.5, 1.0, math.log(3), 2.0, 5.0, EPSILON_MAX]
SHAPES = {"forced-response": (2, 3, 5, 12), "unrelated-question": (2, 3, 5, 12), "warner": (2,), "crosswise": (2,)}
CASES = [(name, k) for name, ks in SHAPES.items() for k in ks]


def exact_worst_ratio(design):
    """max over reports y of max_v M[v, y] / min_v M[v, y], enumerated on the exact fractions."""
    return max(max(column) / min(column) for column in zip(*design.exact_channel(), strict=True))


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize(("name", "k"), CASES)
def test_the_choice_at_epsilon_has_exactly_that_epsilon_never_more(name, k, epsilon):
    design = registry.build(name, k=k, epsilon=epsilon)
    closed = design.worst_case_log_ratio()
    assert closed <= epsilon and math.isclose(closed, epsilon, rel_tol=1e-12)
    assert math.isclose(math.log1p(exact_worst_ratio(design) - 1), closed, rel_tol=1e-14)
    assert math.isclose(design.enumerated_log_ratio(), closed, rel_tol=1e-14)
    assert design.privacy_guarantee() == (epsilon, 0.0)
    rows = design.exact_channel()
    assert all(sum(row) == 1 and min(row) > 0 for row in rows)


@pytest.mark.parametrize(
    ("design", "ratio"),
    [
        # Boruch's die: forced "yes" on 1, "no" on 6, truth otherwise: 1 + (4/6) / (1/6) = 5.
        (ForcedResponse(k=2, epsilon=math.log(5), forced=["1/6", "1/6"]), 5),
        (ForcedResponse(k=2, epsilon=math.log(4), forced=[0.2, 0.2]), 4),
        # Uneven forcing: the rarer forced option's column is the worst, 1 + (1/2) / (1/12) = 7.
        (ForcedResponse(k=3, epsilon=math.log(7), forced=["1/6", "1/12", "1/4"]), 7),
        # Greenberg et al.: p = 1/2, innocuous prevalence 1/2: 1 + (1/2) / ((1/2)(1/2)) = 3.
        (UnrelatedQuestion(k=2, epsilon=math.log(3), p="1/2", pi=["1/2", "1/2"]), 3),
        (UnrelatedQuestion(k=3, epsilon=math.log(13), p="2/3", pi=["1/2", "1/3", "1/6"]), 13),
        (Warner(k=2, epsilon=math.log(3), p=0.75), 3),
        (Warner(k=2, epsilon=math.log(3), p=0.25), 3),
        # Yu, Tian and Tang's birthday question, prevalence 1/4: (3/4) / (1/4) = 3.
        (Crosswise(k=2, epsilon=math.log(3), p="1/4"), 3),
    ],
)
def test_the_literatures_parameters_give_the_closed_form_epsilon_exactly(design, ratio):
    assert exact_worst_ratio(design) == ratio
    assert math.isclose(design.worst_case_log_ratio(), math.log(ratio), rel_tol=1e-15)


@pytest.mark.parametrize("k", [2, 3, 7])
@pytest.mark.parametrize("epsilon", [0.3, 1.0, 4.0])
def test_symmetric_forced_response_is_k_rr(k, epsilon):
    forced = ForcedResponse(k=k, epsilon=epsilon)
    assert_allclose(forced.channel, KRandomizedResponse(k=k, epsilon=epsilon).report_probabilities(), atol=1e-15)


def test_the_unrelated_question_is_forced_response_with_forced_shares_1_minus_p_times_pi():
    p, pi = Fraction(3, 5), [Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)]
    unrelated = UnrelatedQuestion(k=3, epsilon=math.log(1 + p / ((1 - p) * min(pi))), p=str(p), pi=[str(x) for x in pi])
    forced = [(1 - p) * x for x in pi]
    same = ForcedResponse(k=3, epsilon=forced_response_epsilon(forced), forced=[str(x) for x in forced])
    assert unrelated.exact_channel() == same.exact_channel()
    assert unrelated.worst_case_log_ratio() == pytest.approx(same.worst_case_log_ratio(), rel=1e-15)


def test_warner_and_crosswise_are_one_channel_and_binary_k_rr_at_the_default():
    warner, crosswise = (cls(k=2, epsilon=math.log(3), p="1/4") for cls in (Warner, Crosswise))
    assert warner.exact_channel() == crosswise.exact_channel()
    binary = KRandomizedResponse(k=2, epsilon=1.5).report_probabilities()
    for cls in (Warner, Crosswise):
        assert_allclose(cls(k=2, epsilon=1.5).channel, binary, atol=1e-15)


@pytest.mark.parametrize(("name", "k"), CASES)
def test_stored_parameters_rebuild_the_same_design_and_spec(name, k):
    design = registry.build(name, k=k, epsilon=1.0)
    params = design.params()
    assert all(isinstance(v, str) or all(isinstance(x, str) for x in v) for v in params.values())
    assert registry.build(name, k=k, epsilon=1.0, **params).client_spec() == design.client_spec()
    assert design_parameters(name, k=k, epsilon=1.0) == params


@pytest.mark.parametrize(
    ("name", "k", "params"),
    [
        ("forced-response", 3, {"forced": ["1/6", "1/12", "1/4"]}),
        ("unrelated-question", 3, {"p": "2/3", "pi": ["1/2", "1/3", "1/6"]}),
        ("unrelated-question", 4, {"p": 0.4}),
        ("warner", 2, {"p": 0.3}),
        ("crosswise", 2, {"p": "1/4"}),
    ],
)
def test_the_epsilon_of_the_literatures_parameters_builds_the_design(name, k, params):
    epsilon = design_epsilon(name, k, **params)
    design = registry.build(name, k=k, epsilon=epsilon, **params)
    assert design.worst_case_log_ratio() == epsilon
    assert math.isclose(design.enumerated_log_ratio(), epsilon, rel_tol=1e-14)
    with pytest.raises(ValueError, match="name must be one of"):
        design_epsilon("mirror", 2, p=0.3)


def test_client_specs_carry_integer_weights_in_lowest_terms():
    assert ForcedResponse(k=2, epsilon=math.log(5), forced=["1/6", "1/6"]).client_spec() == {
        "mechanism": "forced-response",
        "k": 2,
        "epsilon": math.log(5),
        "forced": [1, 1],
        "truth": 4,
    }
    spec = UnrelatedQuestion(k=3, epsilon=math.log(13), p="2/3", pi=["1/2", "1/3", "1/6"]).client_spec()
    assert (spec["sensitive"], spec["pi"]) == ([2, 1], [3, 2, 1])
    assert Crosswise(k=2, epsilon=math.log(3), p="1/4").client_spec()["p"] == [1, 3]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: ForcedResponse(k=3, epsilon=1.0, forced=["1/5", "1/5"]), "forced must be a list of 3"),
        (lambda: ForcedResponse(k=2, epsilon=1.0, forced=["1/2", "1/2"]), "forced must sum to less than 1"),
        (lambda: ForcedResponse(k=2, epsilon=1.0, forced=[0, "1/2"]), r"forced\[0\] must be a probability"),
        (lambda: ForcedResponse(k=2, epsilon=1.0, forced=["a", "1/2"]), r"forced\[0\] must be a probability"),
        (lambda: ForcedResponse(k=2, epsilon=1.0, forced=[True, "1/2"]), r"forced\[0\] must be a probability"),
        (lambda: ForcedResponse(k=2, epsilon=math.log(4), forced=["1/5", "1/5"]), None),
        (lambda: ForcedResponse(k=2, epsilon=2.0, forced=["1/3", f"1/{2**53 + 1}"]), "common denominator"),
        (lambda: UnrelatedQuestion(k=2, epsilon=1.0, pi=["1/2", "1/3"]), "pi must sum to exactly 1"),
        (lambda: UnrelatedQuestion(k=2, epsilon=1.0, p=1), "p must be a probability"),
        (lambda: Warner(k=3, epsilon=1.0), "k must be 2 for the warner design"),
        (lambda: Crosswise(k=2, epsilon=1.0, p="1/2"), "p must differ from 1/2"),
        (lambda: Warner(k=2, epsilon=1.0, p="3/4"), "epsilon must be the warner design's own"),
        (lambda: design_parameters("mirrored", k=2, epsilon=1.0), "name must be one of"),
    ],
)
def test_bad_parameters_are_refused_naming_the_argument(build, message):
    if message is None:
        build()
        return
    with pytest.raises(ValueError, match=message):
        build()


@pytest.mark.parametrize(
    ("report", "code"),
    [
        ([1], "not-an-object"),
        ({"value": 1, "extra": 0}, "wrong-fields"),
        ({"value": 2}, "out-of-range"),
        ({"value": -1}, "out-of-range"),
        ({"value": "1"}, "not-an-integer"),
        ({"value": True}, "not-an-integer"),
    ],
)
@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_reports_are_validated_with_a_code(name, report, code):
    design = registry.build(name, k=2, epsilon=1.0)
    with pytest.raises(InvalidReport) as raised:
        design.parse_report(report)
    assert raised.value.code == code
    assert design.parse_report({"value": 1}) == b"\x01" and design.unpack_report(b"\x01") == {"value": 1}


@pytest.mark.parametrize(
    ("name", "k"), [("forced-response", 3), ("unrelated-question", 3), ("warner", 2), ("crosswise", 2)]
)
def test_simulated_reports_follow_the_channel(name, k):
    design = registry.build(name, k=k, epsilon=1.0)
    n = 40_000
    for v in range(k):
        counts = design.tally(design.randomize(np.full(n, v), rng=v)).counts
        se = np.sqrt(design.channel[v] * (1 - design.channel[v]) / n)
        assert np.all(np.abs(counts / n - design.channel[v]) <= 5 * se)


# -- estimators ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("design", "estimate"),
    [
        # The literature's moment estimators of the share answering "yes" (option 0), lambda the
        # share of reports 0: Fox and Tracy (lambda - p_yes) / (1 - p_yes - p_no); Greenberg et al.
        # (lambda - (1 - p) pi) / p; Warner and crosswise (lambda + p - 1) / (2p - 1).
        (ForcedResponse(k=2, epsilon=math.log(6), forced=["1/5", "2/15"]), lambda lam: (lam - 1 / 5) / (2 / 3)),
        (UnrelatedQuestion(k=2, epsilon=math.log(3), p="1/2", pi=["1/2", "1/2"]), lambda lam: (lam - 0.25) / 0.5),
        (Warner(k=2, epsilon=math.log(3), p="3/4"), lambda lam: (lam + 0.75 - 1) / 0.5),
        (Crosswise(k=2, epsilon=math.log(3), p="1/4"), lambda lam: (lam + 0.25 - 1) / -0.5),
    ],
)
def test_the_moment_estimator_and_its_variance_are_the_literatures(design, estimate):
    result = design.analyze(Tally(400, np.array([230, 170])))
    lam = 230 / 400
    assert result.proportions[0] == pytest.approx(estimate(lam), abs=1e-12)
    slope = abs(estimate(1.0) - estimate(0.0))  # 1 / |det M|
    assert result.standard_errors[0] == pytest.approx(math.sqrt(lam * (1 - lam) / 400) * slope, rel=1e-12)
    assert result.mle == pytest.approx(result.proportions, abs=1e-12)  # inside [0, 1]: the same
    assert_allclose(result.mle_covariance, result.covariance, rtol=1e-9, atol=1e-15)
    low, high = result.confidence_interval()
    assert high[0] - low[0] == pytest.approx(2 * 1.959963984540054 * result.standard_errors[0])


def direct_maximum_likelihood(channel, counts):
    """argmax over the simplex of sum_y c_y ln (M^T pi)_y, by SLSQP on the softmax-free simplex, with the
    exact gradient -M (c / M^T pi) (finite differences stop about 1e-6 short of the optimum, and where
    depends on the BLAS's rounding)."""
    k = channel.shape[0]

    def negative(pi):
        return -np.sum(counts * np.log(np.maximum(channel.T @ pi, 1e-300)))

    def gradient(pi):
        return -channel @ (counts / np.maximum(channel.T @ pi, 1e-300))

    result = optimize.minimize(
        negative,
        np.full(k, 1 / k),
        jac=gradient,
        method="SLSQP",
        bounds=[(0, 1)] * k,
        constraints=[{"type": "eq", "fun": lambda pi: pi.sum() - 1}],
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    return result.x


@pytest.mark.parametrize(
    "counts", [np.array([50, 300, 650]), np.array([5, 20, 975]), np.array([400, 350, 250]), np.array([0, 0, 100])]
)
def test_the_mle_lies_on_the_simplex_and_agrees_with_a_direct_maximization(counts):
    design = ForcedResponse(k=3, epsilon=math.log(7), forced=["1/6", "1/12", "1/4"])
    result = design.analyze(Tally(int(counts.sum()), counts))
    assert np.all(result.mle >= 0) and result.mle.sum() == pytest.approx(1, abs=1e-12)
    assert_allclose(result.mle, direct_maximum_likelihood(design.channel, counts), atol=1e-6)
    low, high = result.mle_interval()
    assert np.all((low <= result.mle) & (result.mle <= high) & (low >= 0) & (high <= 1))


def test_expected_half_width_is_the_sampling_variance_at_n():
    design = Warner(k=2, epsilon=math.log(3), p="3/4")
    # At pi = 1/2, lambda = 1/2: Var = (1/4) / (n (2p - 1)^2) = 1 / n.
    assert design.expected_half_width(2500) == pytest.approx(1.959963984540054 * math.sqrt(1 / 2500))
    with pytest.raises(ValueError, match="n must be a positive number"):
        design.expected_half_width(0)


def test_sampled_tallies_follow_the_channel_and_refuse_bad_counts():
    design = ForcedResponse(k=3, epsilon=math.log(7), forced=["1/6", "1/12", "1/4"])
    tallies = design.sample_tallies([300, 200, 500], 2000, rng=3)
    expected = design.channel.T @ np.array([300, 200, 500])
    assert tallies.shape == (2000, 3) and np.all(tallies.sum(axis=1) == 1000)
    assert np.all(np.abs(tallies.mean(axis=0) - expected) <= 5 * np.sqrt(expected / 2000))
    with pytest.raises(ValueError, match="true_counts must be 3 non-negative integers"):
        design.sample_tallies([1, 2], 10)


def spec_channel(spec):
    """The channel the browser realizes from a spec's integer weights, as exact fractions."""
    k, options = spec["k"], range(spec["k"])
    if spec["mechanism"] == "forced-response":
        total = sum(spec["forced"]) + spec["truth"]
        return tuple(
            tuple(Fraction(spec["forced"][y] + (spec["truth"] if y == v else 0), total) for y in options)
            for v in options
        )
    if spec["mechanism"] == "unrelated-question":
        asked = Fraction(spec["sensitive"][0], sum(spec["sensitive"]))
        pi = [Fraction(w, sum(spec["pi"])) for w in spec["pi"]]
        return tuple(tuple((1 - asked) * pi[y] + (asked if y == v else 0) for y in options) for v in options)
    p = Fraction(spec["p"][0], sum(spec["p"]))
    assert k == 2
    return ((p, 1 - p), (1 - p, p))


@pytest.mark.parametrize(("name", "k"), CASES)
@pytest.mark.parametrize("epsilon", [EPSILON_MIN, 1.0, EPSILON_MAX])
def test_the_specs_weights_realize_exactly_the_channel_ldp_checks(name, k, epsilon):
    design = registry.build(name, k=k, epsilon=epsilon)
    spec = design.client_spec()
    assert spec_channel(spec) == design.exact_channel()
    weights = [w for field in ("forced", "sensitive", "pi", "p") for w in spec.get(field, [])]
    assert all(isinstance(w, int) and w >= 1 for w in weights)
    assert all(
        sum(spec[f]) + spec.get("truth", 0) * (f == "forced") <= 2**53
        for f in ("forced", "sensitive", "pi", "p")
        if f in spec
    )
