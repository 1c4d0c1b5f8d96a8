"""Short answers in real Chromium: Korean text is normalized and hashed in the browser, only sketch
and Bloom-filter reports leave it, and the organizer counts candidate answers on the results page."""

from __future__ import annotations

import json
import logging
import unicodedata

import pytest
from django.urls import reverse

from ldp.text import normalize_text
from surveys import actions
from surveys.models import Report, Submission
from tests.base import PASSWORD, make_question, make_survey, make_text_question, make_text_reports, make_user
from tests.browser.conftest import assert_only_the_ledger_is_stored

# Distinctive answers, so that any leak is unmistakable; the first is typed as conjoining jamo (NFD),
# as macOS keyboards send Hangul, with full-width and doubled spaces.
NEIGHBOURHOOD = "해운대 바다마을"
TYPED = "  " + unicodedata.normalize("NFD", NEIGHBOURHOOD) + "\u3000 7318 "
CAFE = "Zebraspätzle Café"
SECRETS = [NEIGHBOURHOOD, unicodedata.normalize("NFD", NEIGHBOURHOOD), "7318", "Zebra", "zebra", "spätzle"]


@pytest.fixture
def survey(db):
    survey = make_survey(make_user("mina"), title="Neighbourhoods")
    make_text_question(survey, "text-cms", text="Where do you live?", epsilon=2.0)
    make_text_question(survey, "text-hcms", text="Favourite café?", epsilon=2.0)
    make_text_question(survey, "rappor", text="Favourite food?", epsilon=2.0)
    make_question(survey, text="Tea or coffee?", kind="yes_no", options=["Tea", "Coffee"])
    actions.do_open_survey(survey)
    return survey


def test_short_answers_leave_the_browser_only_as_randomized_hashes(live_server, page, survey, caplog):
    caplog.set_level(logging.DEBUG)
    requests = []
    page.on("request", lambda request: requests.append(request))
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    where, cafe, food, drink = (page.locator("[data-question-id]").nth(i) for i in range(4))
    where.locator("[data-text-input]").fill(TYPED)
    cafe.locator("[data-text-input]").fill(CAFE)
    food.locator("[data-text-input]").fill("김치찌개 Zebra")
    drink.locator("[data-option-index='1']").check()
    assert page.evaluate("new FormData(document.querySelector('[data-respond-form]')).entries().next().done")
    page.click("[data-submit]")
    page.wait_for_selector("[data-receipt]:not([hidden])")
    assert page.locator("[data-text-input]").count() == 0  # the form, and the typed text, are gone

    storage = assert_only_the_ledger_is_stored(page)
    cookies = page.context.cookies()
    assert {c["name"] for c in cookies} == {"csrftoken", f"murmur-responded-{survey.pk}"}
    posts = [r for r in requests if r.method == "POST"]
    assert len(posts) == 1
    for request in requests:
        sent = " ".join([request.url, request.post_data or "", json.dumps(request.headers, ensure_ascii=False)])
        assert all(secret not in sent for secret in SECRETS)
    assert all(secret not in storage for secret in SECRETS)
    assert all(secret not in c["value"] for c in cookies for secret in SECRETS)
    assert all(secret not in r.getMessage() for r in caplog.records for secret in SECRETS)

    body = json.loads(posts[0].post_data)
    assert [set(item["report"]) for item in body["reports"]] == [
        {"row", "bits"},
        {"row", "index", "bit"},
        {"cohort", "bits"},
        {"value"},
    ]
    assert len(body["reports"][0]["report"]["bits"]) == 128 and len(body["reports"][2]["report"]["bits"]) == 32
    stored = {r.question_id: r for r in Report.objects.filter(submission=Submission.objects.get())}
    for item in body["reports"]:
        report = stored[item["question"]]
        assert report.randomization.build_mechanism().parse_report(item["report"]) == bytes(report.packed)


def test_the_browser_normalizes_as_python_does(live_server, page, survey):
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    typed = [TYPED, "  STRASSE  straße ", "\u1100\u1161\u11a8 Ｓｅｏｕｌ", CAFE]
    script = (
        "async (texts) => { const { normalizeText } = await import('/static/ldp/text.js');"
        " return texts.map((text) => normalizeText(text)); }"
    )
    assert page.evaluate(script, typed) == [normalize_text(t) for t in typed]


def test_the_organizer_counts_korean_candidates_on_the_results_page(live_server, browser, survey):
    question = survey.questions.get(text="Where do you live?")
    texts = ["해운대"] * 700 + ["서면"] * 400 + [f"동네 {i}" for i in range(200)]
    make_text_reports(question, [normalize_text(t) for t in texts], seed=4)
    organizer = browser.new_context().new_page()
    organizer.goto(f"{live_server.url}{reverse('login')}")
    organizer.fill("[name=username]", "mina")
    organizer.fill("[name=password]", PASSWORD)
    organizer.click("main button[type=submit]")
    organizer.goto(f"{live_server.url}{reverse('question_results', args=[survey.pk, question.pk])}")
    assert organizer.locator("[data-no-candidates]").count() == 1
    organizer.fill("[data-candidates-form] textarea", "해운대\n  서면 \n광안리")
    organizer.click("[data-candidates-form] button[type=submit]")
    organizer.wait_for_selector("[data-candidates]")
    found = organizer.text_content("[data-found]")
    assert "“해운대”" in found and "“서면”" in found and "광안리" not in found
    assert organizer.locator("[data-candidates] tbody tr").count() == 3
    assert organizer.input_value("[data-candidates-form] textarea").splitlines() == ["해운대", "서면", "광안리"]
