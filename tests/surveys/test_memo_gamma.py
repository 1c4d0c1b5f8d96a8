"""The memoized layer's flip (gamma) is stored with each randomization of a recurring survey, sent in
its memo block, and never reread from a code constant: changing the default later changes new
randomizations only."""

from __future__ import annotations

import importlib
import json
import math

import pytest
from django.apps import apps

from surveys import actions
from surveys.models import DEFAULT_MEMO_GAMMA, Randomization
from surveys.series import rounds
from tests.base import make_number_question, make_question, make_reports, make_survey


def specs_of(html):
    return json.loads(html.split('id="murmur-specs" type="application/json">')[1].split("</script>")[0])


def promise_of(html):
    return json.loads(html.split('id="murmur-promise" type="application/json">')[1].split("</script>")[0])


@pytest.fixture
def recurring(organizer):
    survey = make_survey(organizer)
    make_question(survey, options=list("abcd"), mechanism="dbitflip", epsilon=1.0, mechanism_params={"d": 2})
    make_number_question(survey, lo=0, hi=10, mechanism="1bitmean", epsilon=0.5)
    make_question(survey, options=list("ab"), mechanism="krr", epsilon=1.0)
    actions.do_open_survey(survey)
    rounds.do_make_recurring(survey, "manual")
    survey.refresh_from_db()
    return survey


def gammas(survey):
    return {r.mechanism: r.memo_gamma for r in Randomization.objects.filter(question__survey=survey)}


def test_a_recurring_surveys_randomizations_store_their_flip_and_a_one_off_surveys_none(organizer, recurring):
    assert gammas(recurring) == {"dbitflip": 0.1, "1bitmean": 0.25, "krr": None}
    assert gammas(rounds.do_open_next_round(recurring)) == {"dbitflip": 0.1, "1bitmean": 0.25, "krr": None}
    one_off = make_survey(organizer)
    make_question(one_off, options=list("abcd"), mechanism="dbitflip", epsilon=1.0, mechanism_params={"d": 2})
    actions.do_open_survey(one_off)
    assert gammas(one_off) == {"dbitflip": None}


def assert_page_flips_with(client, survey, gamma):
    """The answer page sends the dBitFlip question (epsilon 1, d = 2) with this gamma and promises its
    epsilon_inf = 2 ln(p1 / (1 - p1)), p1 = (p1' - gamma) / (1 - 2 gamma), p1' = e^0.5 / (1 + e^0.5)."""
    html = client.get(survey.get_share_url()).content.decode()
    choice = next(e for e in specs_of(html) if e["spec"]["mechanism"] == "dbitflip")
    assert choice["memo"]["gamma"] == gamma
    p1 = (math.exp(0.5) / (1 + math.exp(0.5)) - gamma) / (1 - 2 * gamma)
    bound = promise_of(html)["questions"][str(choice["question"])]["epsilon_infinity"]
    assert bound == pytest.approx(2 * math.log(p1 / (1 - p1)), rel=1e-12)


def test_the_stored_flip_is_sent_and_bounds_the_page_even_after_the_default_changes(client, recurring, monkeypatch):
    make_reports(recurring.questions.get(mechanism="dbitflip"), [0, 1, 2, 3], seed=1)
    monkeypatch.setitem(DEFAULT_MEMO_GAMMA, "dbitflip", 0.2)
    rounds.do_make_recurring(recurring, "weekly")  # a schedule change rewrites nothing stored
    assert_page_flips_with(client, recurring, 0.1)
    # The next round is a new randomization: it stores, sends and bounds the new default.
    later = rounds.do_open_next_round(recurring)
    assert gammas(later)["dbitflip"] == 0.2 and gammas(recurring)["dbitflip"] == 0.1
    assert_page_flips_with(client, later, 0.2)


def test_a_1bitmean_randomization_stored_with_another_flip_is_not_memoized(recurring):
    question = recurring.questions.get(mechanism="1bitmean")
    randomization = question.current_randomization()
    spec = randomization.build_mechanism().client_spec()
    assert rounds.memo_block(recurring, question, spec, randomization.memo_gamma)["gamma"] == 0.25
    assert rounds.memo_block(recurring, question, spec, 0.1) is None


def test_the_migration_stores_the_flip_each_existing_round_was_made_with(recurring):
    Randomization.objects.update(memo_gamma=None)
    migration = importlib.import_module("surveys.migrations.0014_randomization_memo_gamma")
    migration.store_gammas(apps, None)
    assert gammas(recurring) == {"dbitflip": 0.1, "1bitmean": 0.25, "krr": None}
