"""Multi-select questions in real Chromium: checked by keyboard, the maximum kept in the browser (in
English and Korean), the set randomized with crypto randomness, and no true answer in any request,
URL, cookie, storage or server log."""

from __future__ import annotations

import json
import logging
import re

import pytest
from django.urls import reverse

from ldp.multiselect import SET_MECHANISMS
from surveys import actions
from surveys.models import Report, Submission
from tests.base import make_multi_question, make_survey, make_user
from tests.browser.conftest import assert_only_the_ledger_is_stored
from tests.browser.test_respond_privacy import INSTRUMENT
from tests.browser.test_respond_spec_check import tamper

# Distinctive labels, so that any leak of a chosen option's text is unmistakable.
OPTIONS = {
    "set-sue": ["Quartz-71", "Basalt-28", "Gneiss-93", "Schist-46", "Marble-15"],
    "set-oue": ["Cobalt-62", "Nickel-37", "Bismuth-84", "Gallium-19"],
    "padding-krr": ["Saffron-53", "Sumac-26", "Cumin-78", "Anise-41", "Mace-95", "Clove-32"],
    "padding-olh": ["Lynx-67", "Stoat-24", "Marten-89", "Sable-13", "Fisher-56"],
}
CHOSEN = {"set-sue": [0, 2], "set-oue": [1, 2, 3], "padding-krr": [5], "padding-olh": [1, 4]}
LIMITS = {"set-sue": 2, "set-oue": 4, "padding-krr": 3, "padding-olh": 2}
FIELDS = {"set-sue": {"bits"}, "set-oue": {"bits"}, "padding-krr": {"value"}, "padding-olh": {"hash", "value"}}


@pytest.fixture
def survey(db):
    survey = make_survey(make_user("olga"), title="Rocks and spices")
    for mechanism in SET_MECHANISMS:
        make_multi_question(
            survey, mechanism, LIMITS[mechanism], epsilon=1.0, text=f"Which ({mechanism})?", options=OPTIONS[mechanism]
        )
    actions.do_open_survey(survey)
    return survey


def test_a_multi_select_answer_leaves_the_browser_only_randomized(live_server, page, survey, caplog):
    caplog.set_level(logging.DEBUG)
    requests = []
    page.on("request", lambda request: requests.append(request))
    page.add_init_script(INSTRUMENT)
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    fieldsets = page.locator("[data-question-id]")

    # The keyboard alone: Tab to each box, Space to check it. A third box over the maximum of 2 is
    # unchecked again and a message says why; nothing is sent meanwhile.
    first = fieldsets.nth(0)
    first.locator("[data-option-index='0']").focus()
    page.keyboard.press("Space")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Space")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Space")
    checked = "(f) => [...f.querySelectorAll('input:checked')].map((b) => +b.dataset.optionIndex)"
    assert first.evaluate(checked) == CHOSEN["set-sue"]
    limit = first.locator("[data-choices-limit]")
    assert limit.is_visible() and limit.text_content() == "1. Which (set-sue)?: choose at most 2 options."
    for index, mechanism in enumerate(SET_MECHANISMS[1:], start=1):
        for option in CHOSEN[mechanism]:
            fieldsets.nth(index).locator(f"[data-option-index='{option}']").check()
    assert page.evaluate("[...document.querySelectorAll('input[type=checkbox]')].every((i) => !i.name)")
    assert page.evaluate("new FormData(document.querySelector('[data-respond-form]')).entries().next().done")
    assert [r for r in requests if r.method == "POST"] == []

    draws_before = page.evaluate("window.__secureDraws")
    page.click("[data-submit]")
    page.wait_for_selector("[data-receipt]:not([hidden])")
    assert page.evaluate("window.__secureDraws") > draws_before
    assert page.evaluate("document.querySelectorAll('input[type=checkbox]:checked').length") == 0

    labels = [label for options in OPTIONS.values() for label in options]
    storage = assert_only_the_ledger_is_stored(page)
    assert all(label not in storage for label in labels)
    cookies = page.context.cookies()
    assert {c["name"] for c in cookies} == {"csrftoken", f"murmur-responded-{survey.pk}"}
    assert all(label not in c["value"] for c in cookies for label in labels)
    posts = [r for r in requests if r.method == "POST"]
    assert len(posts) == 1
    for request in requests:
        sent = " ".join([request.url, request.post_data or "", json.dumps(request.headers)])
        assert all(label not in sent for label in labels), request.url
    assert all(label not in r.getMessage() for r in caplog.records for label in labels)

    # Only the mechanisms' report fields travel: no chosen indices, no labels, no set.
    body = json.loads(posts[0].post_data)
    assert set(body) == {"token", "reports"}
    assert [set(item["report"]) for item in body["reports"]] == [FIELDS[m] for m in SET_MECHANISMS]
    stored = {r.question_id: r for r in Report.objects.filter(submission=Submission.objects.get())}
    for item in body["reports"]:
        report = stored[item["question"]]
        assert report.randomization.build_mechanism().parse_report(item["report"]) == bytes(report.packed)
    receipt = page.text_content("[data-receipt]")
    assert "a yes/no mark for every option, marked for" in receipt


def test_the_maximum_is_explained_in_korean(live_server, browser, survey):
    context = browser.new_context(locale="ko-KR")
    page = context.new_page()
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    first = page.locator("[data-question-id]").first
    assert "해당하는 것을 모두 고르세요(최대 2개)." in first.text_content()
    first.locator("[data-option-index='0']").check()
    first.locator("[data-option-index='1']").check()
    first.locator("[data-option-index='2']").click()  # over the maximum: unchecked again
    assert first.locator("[data-option-index='2']").is_checked() is False
    assert (
        first.locator("[data-choices-limit]").text_content() == "1. Which (set-sue)?: 선택지를 최대 2개까지 고르세요."
    )
    context.close()


def test_the_same_set_gives_varying_reports(live_server, page, survey):
    # set-sue at epsilon 1 with l = 2 flips each of 5 bits with probability 1 / (1 + e^(1/4)) = 0.44:
    # 12 identical bit vectors from the same set would have probability below 1e-30.
    survey.allow_repeat_responses = True
    survey.save(update_fields=["allow_repeat_responses"])
    question = survey.questions.first()
    for _ in range(12):
        page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
        for option in CHOSEN["set-sue"]:
            page.locator("[data-question-id]").first.locator(f"[data-option-index='{option}']").check()
        page.click("[data-submit]")
        page.wait_for_selector("[data-receipt]:not([hidden])")
    assert len({bytes(r.packed) for r in Report.objects.filter(question=question)}) > 1


def test_none_checked_is_sent_randomized_like_any_other_answer(live_server, page, survey):
    # Sending nothing for a question with no box checked would tell the server exactly that none
    # applies; the empty set is randomized and sent like any set.
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    page.locator("[data-question-id]").nth(1).locator("[data-option-index='0']").check()
    page.click("[data-submit]")
    page.wait_for_selector("[data-receipt]:not([hidden])")
    stored = Report.objects.filter(submission=Submission.objects.get())
    assert sorted(r.question_id for r in stored) == sorted(q.pk for q in survey.questions.all())


@pytest.mark.parametrize(
    ("question", "change", "says"),
    [
        # set-sue at epsilon 1, l = 2 of k = 5: p = 0.9, q = 0.1 would give 2 ln 9 + 2 ln 9 = 8.8.
        (0, {"true_bit_probability": 0.9, "other_bit_probability": 0.1}, r"Question 1: .* give ε = 8\.78\d*, more"),
        # padding-krr: an oracle over fewer items than k + l no longer hides the blanks.
        (
            2,
            {"oracle": {"mechanism": "krr", "k": 5, "epsilon": 1.0, "keep_probability": 0.5}},
            r"Question 3: .*malformed",
        ),
    ],
    ids=["weakened-bits", "malformed-oracle"],
)
def test_a_tampered_multi_select_spec_is_refused_and_nothing_is_sent(live_server, page, survey, question, change, says):
    tamper(page, live_server, survey, lambda specs: specs[question]["spec"].update(change))
    posts = []
    page.on("request", lambda request: posts.append(request) if request.method == "POST" else None)
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    page.locator("[data-question-id]").nth(question).locator("[data-option-index='0']").check()
    page.click("[data-submit]")
    error = page.locator("[data-error]")
    error.wait_for(state="visible")
    assert error.inner_text().startswith("Nothing was sent") and re.search(says, error.inner_text()), error.inner_text()
    assert posts == [] and not Submission.objects.exists()
