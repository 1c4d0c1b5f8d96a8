"""The respondent's privacy ledger: kept by the browser only, never sent."""

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


#: A ledger as respond.js records it: a one-off survey, and three rounds of a series with a memoized yes/no
#: question (dBitFlip, epsilon_inf 2 over V = 2 values) and one randomized afresh every round.
SERIES_LEDGER = [
    {"survey": "canteen", "title": "Canteen", "series": None, "round": None, "question": "7", "epsilon": 1.5,
     "memo": None, "day": "2026-11-02"},
    *(
        entry
        for round_number, day in ((1, "2026-11-02"), (2, "2026-11-09"), (3, "2026-11-16"))
        for entry in (
            {"survey": "pulse", "title": "Weekly pulse", "series": "pulse", "round": round_number, "question": "11",
             "epsilon": 1.5, "memo": {"epsilon_infinity": 2.0, "values": 2, "digest": None}, "day": day},
            {"survey": "pulse", "title": "Weekly pulse", "series": "pulse", "round": round_number,
             "question": f"{20 + round_number}", "epsilon": 0.5, "memo": None, "day": day},
        )
    ),
]  # fmt: skip


@pytest.mark.parametrize("language", ["en", "ko"])
def test_the_ledger_shows_each_rounds_epsilon_and_the_series_totals_accessibly(live_server, browser, db, language):
    from tests.browser.test_walkthrough import AXE, axe_violations, english_words

    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: npm ci --prefix tests/browser (make install-dev does it)")
    # bypass_csp lets the test inject axe-core; the app's own CSP is tested elsewhere.
    context = browser.new_context(locale="ko-KR" if language == "ko" else "en-US", bypass_csp=True)
    page = context.new_page()
    page.add_init_script(f"localStorage.setItem('murmur-epsilon-ledger-v1', {json.dumps(json.dumps(SERIES_LEDGER))})")
    page.goto(f"{live_server.url}{reverse('ledger')}")
    page.wait_for_selector("[data-ledger]:not([hidden])")
    rows = page.locator("[data-ledger-rows] tr")
    cells = [row.locator("th, td").all_inner_texts() for row in rows.all()]
    all_rounds = "전체 3개 회차" if language == "ko" else "all 3 rounds"
    assert cells == [
        ["Canteen", "—", "2026-11-02", "ε = 1.5", "ε = 1.5"],
        ["Weekly pulse", "1", "2026-11-02", "ε = 2", ""],
        ["Weekly pulse", "2", "2026-11-09", "ε = 2", ""],
        ["Weekly pulse", "3", "2026-11-16", "ε = 2", ""],
        # Added up: 3 x (1.5 + 0.5). Memoized: the yes/no question min(4.5, min(3, 2) x 2) = 4, the other 1.5.
        ["Weekly pulse", all_rounds, "", "ε = 6", "ε = 5.5"],
    ]
    assert rows.nth(4).get_attribute("data-series-total") == "pulse"
    assert page.inner_text("[data-ledger-total]") == "ε = 7.5"
    assert page.inner_text("[data-ledger-memoized]") == "ε = 7"
    assert axe_violations(page) == []
    if language == "ko":
        assert english_words(page) == ["Canteen", "Weekly", "pulse"]  # the surveys' own titles only
    context.close()
