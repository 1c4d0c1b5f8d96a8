"""A respondent answers and sends with the keyboard only: Tab, arrow keys, Enter."""

from __future__ import annotations

import pytest
from django.urls import reverse

from surveys import actions
from surveys.models import Report
from tests.base import make_open_survey, make_question, make_survey, make_user


@pytest.fixture
def survey(db):
    return make_open_survey(make_user("kim"), questions=2)


def focused(page) -> str:
    return page.evaluate(
        "(() => { const e = document.activeElement;"
        " return e.dataset.optionIndex !== undefined"
        " ? `${e.closest('[data-question-id]').dataset.questionId}:${e.dataset.optionIndex}` :"
        " (e.matches('[data-submit]') ? 'send' : e.tagName) })()"
    )


def test_a_respondent_answers_with_tab_arrows_and_enter(live_server, page, survey):
    first, second = survey.questions.all()
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    page.locator("h1").click()  # start from the page's text, as a reader does
    stops = []
    for _ in range(12):
        page.keyboard.press("Tab")
        stops.append(focused(page))
        if stops[-1] == "send":
            break
    # One Tab stop per question (a radio group), not one per option.
    radio_stops = [s for s in stops if ":" in s]
    assert radio_stops == [f"{first.pk}:0", f"{second.pk}:0"], stops

    page.keyboard.press("Shift+Tab")  # back into the second question... and further to the first
    while focused(page) != f"{first.pk}:0":
        page.keyboard.press("Shift+Tab")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert focused(page) == f"{first.pk}:2"
    while focused(page) != f"{second.pk}:0":
        page.keyboard.press("Tab")
    page.keyboard.press("ArrowDown")
    assert focused(page) == f"{second.pk}:1"
    while focused(page) != "send":
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-receipt]:not([hidden])")
    # Focus lands on the receipt, which says in words what was sent.
    assert page.evaluate("document.activeElement.matches('[data-receipt]')")
    summaries = page.locator("[data-summary]").all_inner_texts()
    assert len(summaries) == 2 and all(s.startswith("the option “") for s in summaries)
    assert Report.objects.filter(question__survey=survey).count() == 2


def test_the_receipt_names_options_and_the_chance_it_is_the_true_answer(live_server, page, db):
    survey = make_survey(make_user("lee"))
    make_question(survey, text="Colour?", options=["Red", "Green", "Blue"], epsilon=1.0, mechanism="krr")
    make_question(survey, text="Pets?", options=["Cat", "Dog", "Fish"], epsilon=1.0, mechanism="oue")
    actions.do_open_survey(survey)
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    for fieldset in page.locator("[data-question-id]").all():
        fieldset.locator("[data-option-index='0']").check()
    page.click("[data-submit]")
    page.wait_for_selector("[data-receipt]:not([hidden])")
    text = page.locator("[data-receipt]").inner_text()
    assert "Chance that this is your true answer: 57.6 %" in text  # e / (e + 2)
    assert "a yes/no mark for every option, marked for:" in text
    assert "Chance that someone who sees it guesses your answer" in text
