"""Question sampling in real Chromium: each respondent sees m of the pool, every body has the same shape.

A survey of one question always asked and a pool of three, each respondent asked one of the three
(surveys.sampling). The page is answered several times, each in a fresh browser context: exactly
one pooled question shows each time, and the submit bodies name the same questions in the same
order with the same fields and the same length, hold no option label, and say nothing of the draw
(no field beyond the usual ones); the ledger records the pool once. The builder's sampling panel
and the budget panel's comparison pass axe-core in both languages at 390 px.
"""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from surveys import actions
from surveys.sampling import QuestionSample
from tests.base import make_question, make_survey, make_user
from tests.browser.conftest import assert_only_the_ledger_is_stored, log_in, open_answer_page

LABELS = {
    1: ["Yes-Kestrel", "No-Plover"],
    2: ["Heron-1", "Egret-2", "Stork-3"],
    3: ["Finch-4", "Robin-5", "Thrush-6"],
    4: ["Owl-7", "Hawk-8", "Kite-9"],
}
ANSWERS = 5


@pytest.fixture
def survey(db):
    survey = make_survey(make_user("olga"), title="Sampled birds", allow_repeat_responses=True, epsilon_cap=3.0)
    make_question(survey, text="Do you watch birds?", kind="yes_no", options=LABELS[1], planned_epsilon=True)
    for number in (2, 3, 4):
        make_question(survey, text=f"Pooled question {number}?", options=LABELS[number], planned_epsilon=True)
    pooled = [q.pk for q in survey.questions.all()][1:]
    QuestionSample.objects.create(survey=survey, questions=pooled, size=1)
    actions.replan_budget(survey)
    actions.do_open_survey(survey)
    return survey


def answer_once(browser, live_server, survey):
    context, page, errors, bodies = open_answer_page(browser, live_server, survey)
    fieldsets = page.locator("fieldset[data-question-id]")
    visible = [i for i in range(fieldsets.count()) if fieldsets.nth(i).is_visible()]
    for i in visible:
        fieldsets.nth(i).locator("[data-option-index='1']").check()
    page.click("[data-submit]")
    page.wait_for_selector("[data-receipt]:not([hidden])")
    storage = assert_only_the_ledger_is_stored(page)
    context.close()
    assert not errors, errors
    return visible, bodies, storage


def test_each_respondent_sees_m_of_the_pool_and_every_body_has_the_same_shape(live_server, browser, survey):
    order = [q.pk for q in survey.questions.all()]
    shapes, lengths = set(), set()
    for _ in range(ANSWERS):
        visible, bodies, storage = answer_once(browser, live_server, survey)
        assert visible[0] == 0 and len(visible) == 2  # the question always asked, and one of the pool
        assert len(bodies) == 1
        body = bodies[0]
        payload = json.loads(body)
        assert sorted(payload) == ["reports", "token"]
        assert [r["question"] for r in payload["reports"]] == order
        shapes.add(json.dumps([(r["question"], sorted(r), sorted(r["report"])) for r in payload["reports"]]))
        lengths.add(len(body.encode()))
        for labels in LABELS.values():
            for label in labels:
                assert label not in body and label not in storage
        # The ledger: the question always asked, and the pool once at m epsilon' (not which was drawn).
        ledger = json.loads(storage)
        assert sorted(entry["question"] for entry in ledger) == [
            str(order[0]),
            "sampled:" + ",".join(map(str, order[1:])),
        ]
        # epsilon' = 3 / (1 + 1) = 1.5 each: the ledger adds up to the stated total, 3, not 1.5 + 3 x 1.5.
        assert sorted(entry["epsilon"] for entry in ledger) == pytest.approx([1.5, 1.5])
    assert len(shapes) == 1, shapes
    assert len(lengths) == 1, lengths


@pytest.mark.parametrize("language", ["en", "ko"])
def test_the_sampling_panel_and_its_budget_comparison_pass_axe_at_390_px(live_server, browser, language):
    from tests.browser.test_walkthrough import AXE, axe_violations, context_locale, english_words

    survey = make_survey(make_user("olga"), title="Sampled draft", epsilon_cap=2.0)
    for number in (2, 3, 4):
        make_question(survey, text=f"Pooled question {number}?", options=LABELS[number], planned_epsilon=True)
    context = browser.new_context(
        locale=context_locale(language), viewport={"width": 390, "height": 900}, bypass_csp=True
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    base = live_server.url
    log_in(page, base, "olga")
    page.goto(f"{base}{reverse('survey_detail', args=[survey.pk])}")
    panel = page.locator("#sampling")
    panel.locator("summary").click()
    for box in panel.locator("input[type=checkbox]").all():
        box.check()
    page.fill("#id_sampling_size", "1")
    panel.locator("button[type=submit]").click()
    page.wait_for_selector("[data-sampling-state]")
    assert page.locator("[data-sampled-half-width]").count() == 3
    assert AXE.exists()
    assert axe_violations(page) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    if language == "ko":
        text = page.inner_text("#sampling") + page.inner_text("[data-plan]")
        assert "일부 문항만" in text and "표본 추출 없이" in text
        leftovers = [w for w in english_words(page) if w in {"Sampling", "sampling", "pool", "Without", "asked"}]
        assert leftovers == []
    context.close()
