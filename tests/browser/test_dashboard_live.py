"""An organizer watches the dashboard while responses arrive in another page."""

from __future__ import annotations

import re

from django.urls import reverse
from playwright.sync_api import expect

from surveys import actions
from tests.base import PASSWORD, make_question, make_reports, make_survey, make_user


def test_the_dashboard_updates_without_a_reload(live_server, browser, settings):
    settings.RESULTS_POLL_SECONDS = 1
    owner = make_user("ruth")
    survey = make_survey(owner, title="Live survey", allow_repeat_responses=True)
    question = make_question(survey, text="Tea or coffee?", kind="yes_no", options=["Tea", "Coffee"], epsilon=3.0)
    actions.do_open_survey(survey)
    make_reports(question, [0] * 30 + [1] * 20)

    organizer = browser.new_context().new_page()
    organizer.goto(f"{live_server.url}{reverse('login')}")
    organizer.fill("[name=username]", "ruth")
    organizer.fill("[name=password]", PASSWORD)
    organizer.click("main button[type=submit]")
    organizer.goto(f"{live_server.url}{reverse('survey_results', args=[survey.pk])}")
    assert organizer.locator(f"#result-{question.pk} svg").count() == 1
    assert organizer.locator(f"#result-{question.pk} table.estimates tbody tr").count() == 2
    assert organizer.text_content("[data-responses]") == "50"
    organizer.evaluate("window.stillTheSamePage = true")

    respondent = browser.new_context().new_page()
    share = f"{live_server.url}{reverse('respond', args=[survey.slug])}"
    for _ in range(3):
        respondent.goto(share)
        respondent.locator("[data-option-index='1']").check()
        respondent.click("[data-submit]")
        respondent.wait_for_selector("[data-receipt]:not([hidden])")

    # A locator assertion, not wait_for_function: the page's CSP forbids the eval that one needs.
    expect(organizer.locator("[data-responses]")).to_have_text("53", timeout=10_000)
    assert organizer.evaluate("window.stillTheSamePage") is True
    assert organizer.text_content(f"#result-{question.pk} [data-n]") == "53"
    after = organizer.text_content(f"#result-{question.pk} [data-estimate]")
    assert re.fullmatch(r"[0-9.]+ %", after)
