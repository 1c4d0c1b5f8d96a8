"""Branching in real Chromium: every path sends the same shape of body, and no true answer leaves.

A survey of three questions where question 2 is shown only when question 1 is "Yes-Kestrel", and
question 3 offers "Prefer not to say" (shown last, its other options shuffled). Each path (yes and
answer all; yes and skip question 2, question 3 or both, where a skip of question 3 sends the report
of "Prefer not to say"; no, so question 2 is not shown, with and without a skip of question 3) is
answered in a fresh browser context, and the submit request's body is kept: the bodies must name
the same questions in the same order with the same fields, have the same length, and hold no option
label, nor may any request's URL, headers or body, any cookie or the page's storage; the server
tallies every one of them.
The builder's condition editor and path preview pass axe-core in both languages at 390 px.
"""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from surveys import actions
from tests.base import make_number_question, make_question, make_survey, make_user, stored_tally
from tests.browser.conftest import assert_only_the_ledger_is_stored, log_in, open_answer_page

LABELS = {
    1: ["Yes-Kestrel", "No-Plover"],
    2: ["Near-Avocet", "Middle-Bittern", "Far-Curlew"],
    3: ["Tern-11", "Wren-22", "Crane-33"],
}


@pytest.fixture
def survey(db):
    survey = make_survey(make_user("olga"), title="Birds", allow_repeat_responses=True)
    first = make_question(survey, text="Do you watch birds?", kind="yes_no", options=LABELS[1])
    second = make_question(survey, text="How far do you go?", options=LABELS[2], mechanism="oue")
    third = make_question(survey, text="Favourite?", options=[*LABELS[3], "Prefer not to say"], prefer_not_to_say=True)
    second.logic = {"show_if": {"question": first.pk, "in": [0]}, "shuffle_options": True, "keep_last": True}
    second.save(update_fields=["logic"])
    third.logic = {"shuffle_options": True}
    third.save(update_fields=["logic"])
    actions.do_open_survey(survey)
    return survey


# (answer to question 1, to question 2 or None to skip, to question 3 or None to skip); question 2 is
# shown only on "yes". Both paths, each with every pattern of skips (question 1 decides, so it is answered).
PATHS = [(0, 2, 1), (0, None, 0), (0, 1, None), (0, None, None), (1, None, 2), (1, None, None)]


def answer_along(browser, live_server, survey, path):
    """Answer along ``path``; return the POST bodies, the page's storage, and every channel that left
    the page after it loaded: each request's method, URL, headers and body, and the cookies."""
    context, page, errors, bodies = open_answer_page(browser, live_server, survey)
    sent = []
    page.on("request", lambda r: sent.append(f"{r.method} {r.url} {sorted(r.headers.items())} {r.post_data or ''}"))
    fieldsets = page.locator("fieldset[data-question-id]")
    first, second, third = path
    fieldsets.nth(0).locator(f"[data-option-index='{first}']").check()
    assert fieldsets.nth(1).is_visible() == (first == 0)
    if second is not None and first == 0:
        fieldsets.nth(1).locator(f"[data-option-index='{second}']").check()
    if third is not None:
        fieldsets.nth(2).locator(f"[data-option-index='{third}']").check()
    # The shuffled question keeps its last option last; "Prefer not to say" stays last too.
    last = fieldsets.nth(1).locator("label.option").last.locator("input").get_attribute("data-option-index")
    assert last == "2"
    offered = fieldsets.nth(2).locator("label.option").last
    assert offered.get_attribute("data-prefer-not") is not None
    assert offered.locator("input").get_attribute("data-option-index") == "3"
    page.click("[data-submit]")
    page.wait_for_selector("[data-receipt]:not([hidden])")
    storage = assert_only_the_ledger_is_stored(page)
    channels = [*sent, json.dumps(context.cookies())]
    context.close()
    assert not errors, errors
    assert [channel.split(" ")[0] for channel in sent] == ["POST"], sent  # nothing else left the page
    return bodies, storage, channels


def test_every_path_sends_a_body_of_the_same_shape_and_length(live_server, browser, survey):
    order = [q.pk for q in survey.questions.all()]
    shapes, lengths = set(), set()
    for path in PATHS:
        bodies, storage, channels = answer_along(browser, live_server, survey, path)
        assert len(bodies) == 1
        body = bodies[0]
        payload = json.loads(body)
        assert sorted(payload) == ["reports", "token"]
        assert all(sorted(r) == ["question", "report", "version"] for r in payload["reports"])
        shapes.add(
            json.dumps([sorted(payload), [(r["question"], sorted(r), sorted(r["report"])) for r in payload["reports"]]])
        )
        lengths.add(len(body.encode()))
        assert [r["question"] for r in payload["reports"]] == order
        # The ledger counts every question, also one not shown or skipped: each sent a report.
        assert sorted(entry["question"] for entry in json.loads(storage)) == sorted(map(str, order))
        for labels in LABELS.values():
            for label in labels:
                assert label not in body and label not in storage
                assert not any(label in channel for channel in channels)
    assert len(shapes) == 1, shapes
    assert len(lengths) == 1, lengths
    # Every report was tallied, the skip's "Prefer not to say" among them.
    third = survey.questions.all()[2]
    assert stored_tally(third.current_randomization()).n == len(PATHS)


def test_a_number_range_decides_on_the_true_value_and_the_body_stays_the_same(live_server, browser, db):
    """A number question (0 to 100) decides whether a choice question is shown, from 18 to 30.5: the page
    shows it for 25 and hides it for 50, and the two bodies have the same shape and length and carry
    no label (the number's report is randomized: a float that may be any value)."""
    survey = make_survey(make_user("uma"), title="Ages", allow_repeat_responses=True)
    age = make_number_question(survey, text="Your age?", lo=0, hi=100, whole_numbers=True)
    school = make_question(survey, text="Which school?", options=["Day-Lark", "Evening-Owl"])
    school.logic = {"show_if": {"question": age.pk, "between": [18, 30.5]}}
    school.save(update_fields=["logic"])
    actions.do_open_survey(survey)
    shapes, lengths = set(), set()
    for value, shown in (("25", True), ("50", False)):
        context, page, errors, bodies = open_answer_page(browser, live_server, survey)
        fieldsets = page.locator("fieldset[data-question-id]")
        assert not fieldsets.nth(1).is_visible()
        fieldsets.nth(0).locator("[data-number-input]").fill(value)
        assert fieldsets.nth(1).is_visible() == shown
        if shown:
            fieldsets.nth(1).locator("[data-option-index='1']").check()
        page.click("[data-submit]")
        page.wait_for_selector("[data-receipt]:not([hidden])")
        context.close()
        assert not errors, errors
        [body] = bodies
        payload = json.loads(body)
        assert [r["question"] for r in payload["reports"]] == [age.pk, school.pk]
        shapes.add(json.dumps([sorted(payload), [(sorted(r), sorted(r["report"])) for r in payload["reports"]]]))
        lengths.add(len(body.encode()))
        assert "Lark" not in body and "Owl" not in body
    assert len(shapes) == 1, shapes
    assert len(lengths) == 1, lengths


def test_a_skip_sends_the_report_of_prefer_not_to_say(live_server, browser, db):
    """The skipped question offers "Prefer not to say" and is randomized by k-RR at ε = 10, which keeps
    the input with probability e^10 / (e^10 + 2) > 0.9999: in two fresh browsers its report, stored and
    tallied, names that option both times (a uniform fake would, with chance 1/9; the JavaScript is
    checked exactly in tests/js/branching.test.mjs)."""
    survey = make_survey(make_user("pia"), title="Skips", allow_repeat_responses=True)
    make_question(survey, text="Any?", options=["One-Heron", "Two-Ibis"])
    offered = make_question(
        survey,
        text="Sensitive?",
        kind="yes_no",
        options=["Yes-Snipe", "No-Stint", "Prefer not to say"],
        prefer_not_to_say=True,
        epsilon=10.0,
    )
    actions.do_open_survey(survey)
    for _ in range(2):
        context, page, errors, bodies = open_answer_page(browser, live_server, survey)
        page.locator("fieldset[data-question-id]").nth(0).locator("[data-option-index='0']").check()
        page.click("[data-submit]")
        page.wait_for_selector("[data-receipt]:not([hidden])")
        context.close()
        assert not errors, errors
        [report] = json.loads(bodies[0])["reports"][1:]
        assert report == {"question": offered.pk, "version": 1, "report": {"value": 2}}
    assert stored_tally(offered.current_randomization()).counts.tolist() == [0, 0, 2]


def test_a_branching_question_must_be_answered(live_server, page, survey):
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    page.locator("fieldset[data-question-id]").nth(2).locator("[data-option-index='0']").check()
    assert not page.locator("fieldset[data-question-id]").nth(1).is_visible()
    requests = []
    page.on("request", lambda r: r.method == "POST" and requests.append(r))
    page.click("[data-submit]")
    page.wait_for_selector("[data-error]:not([hidden])")
    assert "Do you watch birds?" in page.inner_text("[data-error]")
    assert requests == []


@pytest.mark.parametrize("language", ["en", "ko"])
def test_the_condition_editor_and_path_preview_pass_axe_at_390_px(live_server, browser, survey, language):
    from tests.browser.test_walkthrough import AXE, axe_violations, context_locale, english_words

    context = browser.new_context(
        locale=context_locale(language), viewport={"width": 390, "height": 900}, bypass_csp=True
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    base = live_server.url
    log_in(page, base, "olga")
    page.goto(f"{base}{reverse('survey_detail', args=[survey.pk])}")
    assert page.locator("[data-path]").count() == 2
    assert AXE.exists()
    assert axe_violations(page) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    if language == "ko":
        preview = page.inner_text("#display-logic")
        assert "경로" in preview and "분기와 무작위 순서" in preview
        leftovers = [w for w in english_words(page) if w in {"Branching", "paths", "Asked", "Always", "Save"}]
        assert leftovers == []
    # Change the condition from the form: show question 2 on "No-Plover" instead.
    form = page.locator(f"#logic-{survey.questions.all()[1].pk}")
    form.locator("input[type=checkbox][value$=':0']").uncheck()
    form.locator("input[type=checkbox][value$=':1']").check()
    form.locator("button[type=submit]").click()
    page.wait_for_load_state()
    second = survey.questions.all()[1]
    second.refresh_from_db()
    assert second.logic["show_if"]["in"] == [1]
    context.close()


def test_the_respondents_own_limit_is_said_before_sending(live_server, page, survey):
    """A limit set on the ledger page (kept in this browser) and a survey that would pass it: the page
    says so before anything is sent, sends nothing unless told to, and the limit never leaves (in no
    request's URL or body, from setting it to sending the survey)."""
    requests: list[str] = []
    page.on("request", lambda r: requests.append(f"{r.method} {r.url} {r.post_data or ''}"))
    page.goto(f"{live_server.url}{reverse('ledger')}")
    page.fill("[data-cap-input]", "2.5")
    page.click("[data-cap-form] button[type=submit]")
    assert "2.5" in page.inner_text("[data-cap-state]")
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    warning = page.locator("[data-cap-warning]")
    assert warning.is_visible() and "3.00" in warning.inner_text()  # three questions of ε = 1, all counted
    bodies: list[str] = []
    page.on("request", lambda r: r.method == "POST" and bodies.append(r.post_data or ""))
    fieldsets = page.locator("fieldset[data-question-id]")
    fieldsets.nth(0).locator("[data-option-index='1']").check()
    page.click("[data-submit]")
    page.wait_for_selector("[data-error]:not([hidden])")
    assert bodies == []
    page.check("[data-cap-override]")
    page.click("[data-submit]")
    page.wait_for_selector("[data-receipt]:not([hidden])")
    assert len(bodies) == 1 and "2.5" not in bodies[0] and "cap" not in bodies[0]
    assert [r.split(" ", 2)[2] for r in requests if r.startswith("POST")] == bodies
    assert not any("2.5" in r or "cap" in r.split(" ", 2)[1] for r in requests), requests


def test_a_block_of_questions_is_shown_in_a_random_order_numbered_in_reading_order(live_server, page, db):
    """Twelve loads show the block in more than one order, numbered in reading order; answering a load
    shown out of the survey's order sends the reports in the survey's order all the same."""
    survey = make_survey(make_user("rhea"), title="Order")
    made = [make_question(survey, text=f"Q-{letter}", options=["a", "b"]) for letter in "ABCD"]
    for question in made[1:]:
        question.logic = {"block": "x"}
        question.save(update_fields=["logic"])
    actions.do_open_survey(survey)
    seen = set()
    for _ in range(12):
        page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
        legends = page.locator("fieldset[data-question-id] > legend").all_inner_texts()
        assert [legend.split(".")[0] for legend in legends] == ["1", "2", "3", "4"]
        assert legends[0] == "1. Q-A"
        seen.add(tuple(legend.split(" ")[1] for legend in legends))
    assert len(seen) > 1
    in_order = [q.pk for q in made]

    def shown():
        return [int(f.get_attribute("data-question-id")) for f in page.locator("fieldset[data-question-id]").all()]

    for _ in range(12):  # a load shown out of the survey's order (each is, with chance 5/6)
        if shown() != in_order:
            break
        page.reload()
    assert sorted(shown()) == sorted(in_order) and shown() != in_order
    bodies: list[str] = []
    page.on("request", lambda r: r.method == "POST" and bodies.append(r.post_data or ""))
    for fieldset in page.locator("fieldset[data-question-id]").all():
        fieldset.locator("[data-option-index='0']").check()
    page.click("[data-submit]")
    page.wait_for_selector("[data-receipt]:not([hidden])")
    [body] = bodies
    assert [r["question"] for r in json.loads(body)["reports"]] == in_order
