"""Branching leaks nothing beyond the total epsilon (ldp.branching), exactly and statistically.

The exact tests enumerate every true-answer vector, every skip and so every path of a small
branching survey (three questions, one condition, k <= 3) and check that the distribution of the
whole submission body (one report per question; the fill's report where a question was not shown
or skipped) changes by at most e^(sum of epsilons) between any two respondents. The JavaScript
mirror is checked the same way in tests/js/branching.test.mjs.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from ldp import registry
from ldp.branching import (
    Condition,
    among_asked,
    body_distribution,
    fill_weights,
    parse_condition,
    paths,
    respondent_inputs,
    shown_questions,
    worst_body_log_ratio,
)
from ldp.crosstab import pair_tally, posthoc_estimate
from ldp.families import FILLS
from ldp.mechanisms import make_mechanism
from ldp.multiselect.base import all_sets

BRANCHING_JS = Path(__file__).resolve().parents[2] / "static" / "ldp" / "branching.js"

MECHANISMS = [
    make_mechanism("krr", k=2, epsilon=0.5),
    make_mechanism("oue", k=3, epsilon=2.0),
    make_mechanism("krr", k=3, epsilon=1.0),
]
TOTAL = 3.5
ORDER = [11, 12, 13]


def _setup(mechanisms=MECHANISMS):
    tables = [m.report_probabilities() for m in mechanisms]
    fills = [fill_weights("shares", m.k) for m in mechanisms]
    return tables, fills


@pytest.mark.parametrize(
    "conditions",
    [
        {12: Condition(11, "in", (1,))},
        {13: Condition(12, "in", (0, 2))},
        {13: Condition(11, "in", (0,))},
        {13: Condition(12, "between", low=2.0, high=3.0)},
    ],
)
def test_every_path_and_answer_vector_stays_within_the_total_epsilon(conditions):
    tables, fills = _setup()
    values = [[1.0, 2.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
    worst = worst_body_log_ratio(ORDER, conditions, tables, fills, values)
    assert worst <= TOTAL * (1 + 1e-12)
    assert len(paths(ORDER, conditions)) == 2


def test_without_conditions_the_bound_is_reached_exactly():
    tables, fills = _setup()
    assert math.isclose(worst_body_log_ratio(ORDER, {}, tables, fills), TOTAL, rel_tol=1e-12)


def test_a_naive_skip_leaks_the_branching_answer():
    """What Murmur does not do: sending nothing for a question not shown makes the body's length
    depend on question 11's answer, an infinite likelihood ratio."""
    conditions = {12: Condition(11, "in", (1,))}
    tables, fills = _setup()
    yes = respondent_inputs(ORDER, conditions, [1, 0, 0], fills, [[0, 1], [0, 1, 2], [0, 1, 2]])
    no = respondent_inputs(ORDER, conditions, [0, 0, 0], fills, [[0, 1], [0, 1, 2], [0, 1, 2]])
    shown_yes = shown_questions(ORDER, conditions, {11: {"index": 1}, 12: {"index": 0}, 13: {"index": 0}})
    shown_no = shown_questions(ORDER, conditions, {11: {"index": 0}, 12: {"index": 0}, 13: {"index": 0}})
    assert len(shown_yes) != len(shown_no)  # a naive wire: different lengths, ratio infinite
    # Murmur's wire: the same length and a ratio within the budget.
    a, b = body_distribution(tables, yes), body_distribution(tables, no)
    assert a.shape == b.shape
    assert np.max(np.abs(np.log(a / b))) <= TOTAL


def test_a_multi_select_fill_is_the_empty_set_and_stays_within_epsilon():
    set_mechanism = registry.build("set-oue", epsilon=1.0, k=3)
    table = set_mechanism.report_probabilities()
    assert not all_sets(3, 3)[0].any()  # input 0 is the empty set
    fills = [fill_weights("shares", 2), fill_weights("multi", table.shape[0])]
    tables = [MECHANISMS[0].report_probabilities(), table]
    k = [2, table.shape[0]]
    conditions = {2: Condition(1, "in", (0,))}
    # Enumerate every respondent of the two questions (inputs indexed by set row).
    worst = 0.0
    bodies = []
    for a in [0, 1, None]:
        for s in [*range(k[1]), None]:
            inputs = respondent_inputs([1, 2], conditions, [a, s], fills, [[0, 1], list(range(k[1]))])
            bodies.append(body_distribution(tables, inputs))
    logs = np.log(np.array(bodies))
    worst = float(np.max(logs.max(axis=0) - logs.min(axis=0)))
    assert worst <= 0.5 + set_mechanism.worst_case_log_ratio() + 1e-12


@pytest.mark.parametrize(
    "conditions",
    [{}, {12: Condition(11, "in", (1,))}, {13: Condition(11, "in", (0,))}, {13: Condition(12, "in", (0, 2))}],
)
def test_a_skip_sending_prefer_not_to_say_stays_within_the_total_epsilon(conditions):
    """Questions 11 and 13 offer "Prefer not to say" (their last option): shown and skipped, they send
    its report, a fixed input independent of every answer, so the same bound holds on every path."""
    tables, fills = _setup()
    skips = [1, None, 2]
    worst = worst_body_log_ratio(ORDER, conditions, tables, fills, skips=skips)
    assert worst <= TOTAL * (1 + 1e-12)
    # A skip of a shown question sends its option; a question not shown still sends its fill.
    values = [[0, 1], [0, 1, 2], [0, 1, 2]]
    inputs = respondent_inputs(ORDER, {13: Condition(11, "in", (0,))}, [None, None, None], fills, values, skips)
    assert inputs[0].tolist() == [0.0, 1.0]
    assert np.allclose(inputs[1], 1 / 3) and np.allclose(inputs[2], 1 / 3)


def test_conditions_parse_strictly():
    assert parse_condition({"question": 3, "in": [2, 0, 2]}) == Condition(3, "in", (0, 2))
    assert parse_condition({"question": 3, "between": [1, 4.5]}) == Condition(3, "between", low=1.0, high=4.5)
    for bad in [
        {"question": 3},
        {"question": True, "in": [1]},
        {"question": 3, "in": []},
        {"question": 3, "in": [-1]},
        {"question": 3, "between": [5, 1]},
        {"question": 3, "between": [1, float("nan")]},
        {"question": 3, "equals": 1},
        [3, 1],
    ]:
        with pytest.raises(ValueError):
            parse_condition(bad)


def test_paths_list_each_way_through_once():
    conditions = {2: Condition(1, "in", (0,)), 3: Condition(2, "between", low=1, high=2)}
    assert [p.shown for p in paths([1, 2, 3, 4], conditions)] == [(1, 4), (1, 2, 4), (1, 2, 3, 4)]


def test_the_javascript_mirror_has_the_same_fills():
    source = BRANCHING_JS.read_text()
    found = re.search(r"FILLS = Object\.freeze\((\{.*?\})\)", source)
    assert found is not None
    pairs = dict(re.findall(r"(\w+): \"([\w-]+)\"", found.group(1)))
    assert pairs == FILLS


def _branching_population(n, rng):
    """Question B (k = 3): 50 % a, 30 % b, 20 % c; question Q (k = 3) asked when B in {b, c}."""
    first = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    asked = first >= 1
    truth = np.where(first == 1, rng.choice(3, size=n, p=[0.6, 0.3, 0.1]), rng.choice(3, size=n, p=[0.2, 0.2, 0.6]))
    fake = rng.integers(0, 3, size=n)
    return first, np.where(asked, truth, fake)


# Among those asked (B = b or c): Q's shares (0.3 * [.6, .3, .1] + 0.2 * [.2, .2, .6]) / 0.5.
AMONG = np.array([0.44, 0.26, 0.30])


def test_shares_among_those_asked_are_unbiased():
    rng = np.random.default_rng(5)
    b, q = make_mechanism("krr", k=3, epsilon=2.0), make_mechanism("oue", k=3, epsilon=2.0)
    first, second = _branching_population(200_000, rng)
    est = among_asked(
        posthoc_estimate(b, q, pair_tally(b, q, b.randomize(first, rng=rng), q.randomize(second, rng=rng))), [1, 2]
    )
    assert np.all(np.abs(est.shares - AMONG) <= 4 * est.standard_errors)
    assert abs(est.asked - 0.5) <= 4 * est.asked_standard_error


@pytest.mark.slow
def test_bands_among_those_asked_cover_95_percent_at_n_2000():
    """The bands are for the respondents who answered (a fixed population, like every Murmur band):
    each repetition's target is its own respondents' shares among those asked. The estimates are
    unbiased at this n too: their mean error is within 4 standard errors of the mean of zero."""
    rng = np.random.default_rng(11)
    b, q = make_mechanism("krr", k=3, epsilon=2.0), make_mechanism("krr", k=3, epsilon=2.0)
    repetitions, covered, asked_covered, errors = 2000, np.zeros(3), 0, []
    for _ in range(repetitions):
        first, second = _branching_population(2000, rng)
        tally = pair_tally(b, q, b.randomize(first, rng=rng), q.randomize(second, rng=rng))
        est = among_asked(posthoc_estimate(b, q, tally), [1, 2])
        asked = first >= 1
        target = np.bincount(second[asked], minlength=3) / asked.sum()
        covered += (est.bands.low <= target) & (target <= est.bands.high)
        asked_covered += est.asked_band[0] <= asked.mean() <= est.asked_band[1]
        errors.append([*(est.shares - target), est.asked - asked.mean()])
    errors = np.array(errors)
    assert np.all(np.abs(errors.mean(axis=0)) <= 4 * errors.std(axis=0, ddof=1) / math.sqrt(repetitions))
    assert np.all((covered / repetitions >= 0.94) & (covered / repetitions <= 0.96)), covered / repetitions
    assert 0.94 <= asked_covered / repetitions <= 0.96


def test_among_those_asked_a_skip_is_counted_as_prefer_not_to_say():
    """Q (Apple, Pear, Prefer not to say) is asked when B = 1 (half the respondents). Of those asked,
    40 % choose Apple, 30 % Pear, 10 % "Prefer not to say" and 20 % skip, sending its report; those not
    asked send a uniform fake. Among those asked, its share is the 30 % who chose it or skipped."""
    rng = np.random.default_rng(17)
    n = 200_000
    b, q = make_mechanism("krr", k=2, epsilon=2.0), make_mechanism("oue", k=3, epsilon=2.0)
    first = rng.integers(0, 2, size=n)
    answered = rng.choice(4, size=n, p=[0.4, 0.3, 0.1, 0.2])  # 3: skipped
    sent = np.where(first == 1, np.minimum(answered, 2), rng.integers(0, 3, size=n))
    tally = pair_tally(b, q, b.randomize(first, rng=rng), q.randomize(sent, rng=rng))
    est = among_asked(posthoc_estimate(b, q, tally), [1])
    assert np.all(np.abs(est.shares - [0.4, 0.3, 0.3]) <= 4 * est.standard_errors), est.shares
    assert abs(est.asked - 0.5) <= 4 * est.asked_standard_error
