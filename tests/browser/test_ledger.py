"""The respondent's privacy ledger (issue 17, item 5): kept by the browser only, never sent."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from tests.base import make_open_survey, make_user


@pytest.fixture
def surveys(db):
    owner = make_user("park")
    return [make_open_survey(owner, questions=2, title=title) for title in ("Canteen", "Commute")]


def answer_all(page, live_server, survey):
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    for fieldset in page.locator("[data-question-id]").all():
        fieldset.locator("[data-option-index='0']").check()
    page.click("[data-submit]")
    page.wait_for_selector("[data-receipt]:not([hidden])")


def test_the_ledger_lists_each_survey_and_adds_up_its_epsilon_without_telling_the_server(live_server, page, surveys):
    requests = []
    page.on("request", lambda request: requests.append(request))
    answer_all(page, live_server, surveys[0])
    answer_all(page, live_server, surveys[1])
    page.click("[data-ledger-note] a")
    page.wait_for_selector("[data-ledger]:not([hidden])")
    rows = page.locator("[data-ledger-rows] tr")
    assert rows.count() == 2
    assert rows.nth(0).inner_text().startswith("Canteen") and rows.nth(0).inner_text().endswith("ε = 2")
    assert page.inner_text("[data-ledger-total]") == "ε = 4"  # 2 surveys x 2 questions x ε = 1
    assert page.inner_text("[data-ledger-memoized]") == "ε = 4"  # one-off surveys: nothing memoized
    # Nothing of the ledger ever reached the server: no request carries its key or its contents.
    ledger = page.evaluate("localStorage.getItem('murmur-epsilon-ledger-v1')")
    assert len(json.loads(ledger)) == 4
    for request in requests:
        sent = " ".join([request.url, request.post_data or "", json.dumps(request.headers)])
        assert "murmur-epsilon-ledger" not in sent and '"epsilon": 1' not in sent.replace(" ", "")
    page.click("[data-ledger-forget]")
    assert page.is_visible("[data-ledger-empty]")
    assert page.evaluate("localStorage.length") == 0


def test_a_preview_is_not_recorded(live_server, page, surveys):
    owner = surveys[0].owner
    page.goto(f"{live_server.url}{reverse('login')}")
    page.fill("[name=username]", owner.username)
    from tests.base import PASSWORD

    page.fill("[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}{reverse('survey_preview', args=[surveys[0].pk])}")
    page.locator("[data-question-id]").first.locator("[data-option-index='0']").check()
    page.click("[data-submit]")
    page.wait_for_selector("[data-receipt]:not([hidden])")
    assert page.evaluate("localStorage.length") == 0
