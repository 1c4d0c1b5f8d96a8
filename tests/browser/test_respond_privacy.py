"""The privacy promise, checked in real Chromium: only randomized reports leave the browser."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from surveys import actions
from surveys.models import Report, Submission
from tests.base import make_question, make_survey, make_user
from tests.browser.conftest import assert_only_the_ledger_is_stored

# Distinctive labels, so that any leak of an option's text is unmistakable.
QUESTIONS = [
    ("krr", {}, ["Aardvark-91", "Bison-27", "Caracal-64", "Dingo-18", "Eland-53"]),
    ("cms", {"hash_count": 32, "width": 32, "hash_seed": 0}, ["Falcon-33", "Gecko-71", "Heron-49", "Ibis-12"]),
    ("dbitflip", {"d": 4}, ["Jackal-85", "Koala-26", "Lemur-97", "Marmot-40", "Newt-62"]),
    ("dbitflip", {"d": 5}, ["Ocelot-19", "Puffin-58", "Quokka-73", "Raven-36", "Stoat-81"]),
    ("sue", {}, ["Tapir-14", "Urial-55", "Vole-83"]),
    ("oue", {}, ["Walrus-29", "Xerus-66", "Yak-47", "Zebu-92"]),
    ("olh", {"range_size": 3}, ["Alpaca-38", "Bonobo-75", "Coati-21", "Dugong-99", "Egret-44"]),
    ("subset", {"subset_size": 2}, ["Ferret-57", "Gibbon-13", "Hyrax-86", "Impala-32", "Jerboa-68"]),
    ("hadamard", {}, ["Kudu-24", "Llama-79", "Mink-35", "Narwhal-51", "Okapi-17"]),
    ("hcms", {"hash_count": 32, "width": 32, "hash_seed": 0}, ["Pika-88", "Quail-42", "Rhea-63"]),
]
CHOSEN = [3, 2, 4, 1, 0, 3, 2, 4, 1, 2]  # the respondent's true answers, by option index

# Runs before the page's own scripts: Math.random must never be called; count the secure draws.
INSTRUMENT = """
window.__secureDraws = 0;
const realGetRandomValues = crypto.getRandomValues.bind(crypto);
crypto.getRandomValues = (array) => { window.__secureDraws += 1; return realGetRandomValues(array); };
Math.random = () => { throw new Error("Math.random was called"); };
"""


@pytest.fixture
def survey(db):
    survey = make_survey(make_user("olga"), title="Zoo survey")
    for index, (mechanism, params, options) in enumerate(QUESTIONS):
        make_question(
            survey,
            text=f"Question {index + 1}",
            options=options,
            epsilon=1.0,
            mechanism=mechanism,
            mechanism_params=params,
        )
    actions.do_open_survey(survey)
    return survey


def test_only_randomized_reports_leave_the_browser(live_server, page, survey):
    requests = []
    page.on("request", lambda request: requests.append(request))
    page.add_init_script(INSTRUMENT)
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")

    fieldsets = page.locator("[data-question-id]")
    assert fieldsets.count() == len(QUESTIONS)
    for index, chosen in enumerate(CHOSEN):
        fieldsets.nth(index).locator(f"[data-option-index='{chosen}']").check()
    # The inputs holding answers are not form controls anyone could serialize.
    assert page.evaluate("[...document.querySelectorAll('input[type=radio]')].every((i) => !i.name)")
    assert page.evaluate("new FormData(document.querySelector('[data-respond-form]')).entries().next().done")

    draws_before = page.evaluate("window.__secureDraws")
    page.click("[data-submit]")
    page.wait_for_selector("[data-receipt]:not([hidden])")
    assert page.evaluate("window.__secureDraws") > draws_before

    # Nothing of the answers is left in the page, storage or readable cookies.
    assert page.evaluate("document.querySelectorAll('input[type=radio]:checked').length") == 0
    storage = assert_only_the_ledger_is_stored(page)
    assert all(label not in storage for _, _, options in QUESTIONS for label in options)
    cookies = page.context.cookies()
    assert {c["name"] for c in cookies} == {"csrftoken", f"murmur-responded-{survey.pk}"}

    labels = [label for _, _, options in QUESTIONS for label in options]
    posts = [r for r in requests if r.method == "POST"]
    assert len(posts) == 1
    for request in requests:
        sent = " ".join([request.url, request.post_data or "", request.headers.get("cookie", "")])
        for label in labels:
            assert label not in sent, f"{label} leaked in {request.url}"
    for cookie in cookies:
        assert all(label not in cookie["value"] for label in labels)

    body = json.loads(posts[0].post_data)
    assert set(body) == {"token", "reports"}
    assert [set(item) for item in body["reports"]] == [{"question", "version", "report"}] * len(QUESTIONS)
    report_fields = [set(item["report"]) for item in body["reports"]]
    assert report_fields == [
        {"value"},
        {"hash_index", "bits"},
        {"buckets", "bits"},
        {"buckets", "bits"},
        {"buckets", "bits"},
        {"buckets", "bits"},
        {"hash", "value"},
        {"subset"},
        {"index"},
        {"hash_index", "coefficient", "bit"},
    ]

    # What was sent is what was stored, and every stored report validates against its randomization.
    submission = Submission.objects.get()
    stored = {r.question_id: r for r in Report.objects.filter(submission=submission)}
    for item in body["reports"]:
        report = stored[item["question"]]
        mechanism = report.randomization.build_mechanism()
        assert report.randomization.version == item["version"]
        assert mechanism.parse_report(item["report"]) == bytes(report.packed)
    receipt_text = page.text_content("[data-receipt]")
    assert json.dumps(body["reports"][0]["report"], separators=(",", ":")) in receipt_text


def test_the_randomized_report_is_not_the_answer_itself(live_server, page, survey):
    # k-RR keeps the true answer with probability p = e / (e + 4) = 0.40 at epsilon = 1, k = 5:
    # over 20 submissions of the same answer, the reported values must vary (all 20 equal to the
    # answer has probability 0.40^20 ~ 1e-8 if the randomizer works; certainty if it does not).
    survey.allow_repeat_responses = True
    survey.save()
    krr_question = survey.questions.first()
    url = f"{live_server.url}{reverse('respond', args=[survey.slug])}"
    for _ in range(20):
        page.goto(url)
        page.locator("[data-question-id]").first.locator("[data-option-index='3']").check()
        page.click("[data-submit]")
        page.wait_for_selector("[data-receipt]:not([hidden])")
    values = [bytes(r.packed)[0] for r in Report.objects.filter(question=krr_question)]
    assert len(values) == 20
    assert len(set(values)) > 1


def test_without_javascript_nothing_is_sent(live_server, browser, survey):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    posts = []
    page.on("request", lambda request: request.method == "POST" and posts.append(request))
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    assert "Answering needs JavaScript" in page.text_content("noscript") or page.is_visible(
        "text=Answering needs JavaScript"
    )
    assert page.locator("[data-submit]").is_disabled()
    page.locator("[data-question-id]").first.locator("[data-option-index='1']").check()
    page.locator("[data-question-id]").first.locator("[data-option-index='1']").press("Enter")
    page.wait_for_timeout(300)
    assert posts == []
    assert page.url.endswith(reverse("respond", args=[survey.slug]))
    assert not Submission.objects.exists()
    context.close()


def test_the_answer_page_works_by_keyboard_on_a_phone(live_server, browser, survey):
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    first = page.locator("[data-question-id]").first.locator("input[type=radio]")
    first.nth(0).focus()
    page.keyboard.press("Space")
    page.keyboard.press("ArrowDown")
    assert [first.nth(i).is_checked() for i in range(5)] == [False, True, False, False, False]
    page.locator("[data-question-id]").first.locator("[data-clear]").click()
    assert not any(first.nth(i).is_checked() for i in range(5))
    page.click("[data-submit]")
    assert "Answer at least one question" in page.text_content("[data-error]")
    context.close()
