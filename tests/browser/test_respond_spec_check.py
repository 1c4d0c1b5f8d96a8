"""The answer page checks the specs it receives, in real Chromium: a spec giving more epsilon than
the page promises, or a malformed one, is refused, the respondent is told why, and nothing is
posted. The page is tampered with in flight (Playwright's route), as a misconfigured or
malicious server would send it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from django.urls import reverse

from surveys.models import Submission
from tests.base import make_open_survey, make_user

SPECS = re.compile(r'(<script id="murmur-specs" type="application/json">)(.*?)(</script>)', re.S)


def tamper(page, live_server, survey, change: Callable[[list[dict]], None]) -> None:
    """Serve the answer page with its specs passed through ``change`` (in place)."""

    def handle(route):
        response = route.fetch()
        html = response.text()
        match = SPECS.search(html)
        specs = json.loads(match.group(2))
        change(specs)
        html = html[: match.start(2)] + json.dumps(specs) + html[match.end(2) :]
        route.fulfill(response=response, body=html)

    page.route(f"{live_server.url}{reverse('respond', args=[survey.slug])}", handle)


def answer_everything_and_send(page, live_server, survey) -> list:
    """Answer every question and press send; the POST requests the page made."""
    posts = []
    page.on("request", lambda request: posts.append(request) if request.method == "POST" else None)
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    fieldsets = page.locator("[data-question-id]")
    for index in range(fieldsets.count()):
        fieldsets.nth(index).locator("[data-option-index='1']").check()
    # The page warns as soon as it loads; clear the warning so that seeing it again proves the
    # send button's handler ran and refused (it returns before any request can start).
    page.evaluate(
        "() => { const box = document.querySelector('[data-error]'); box.hidden = true; box.textContent = ''; }"
    )
    page.click("[data-submit]")
    return posts


@pytest.fixture
def survey(db):
    return make_open_survey(make_user("olga"), questions=2)


def weaker_keep_probability(specs):
    specs[1]["spec"]["keep_probability"] = 0.95  # k = 3: epsilon ln(0.95 / 0.025) = 3.6 > 1


def missing_keep_probability(specs):
    del specs[0]["spec"]["keep_probability"]


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            weaker_keep_probability,
            r"Question 2: the parameters this page received give ε = 3\.6\d*, more than the ε = 1 ",
        ),
        (missing_keep_probability, r"Question 1: the randomization parameters this page received are malformed\."),
    ],
    ids=["larger-epsilon", "malformed"],
)
def test_the_page_refuses_to_send_specs_that_break_its_promise(live_server, page, survey, change, says):
    tamper(page, live_server, survey, change)
    posts = answer_everything_and_send(page, live_server, survey)
    error = page.locator("[data-error]")
    error.wait_for(state="visible")
    assert error.inner_text().startswith("Nothing was sent")
    assert re.search(says, error.inner_text()), error.inner_text()
    assert posts == []
    assert not Submission.objects.exists()
    assert page.locator("[data-receipt]").is_hidden()


def test_the_refusal_is_in_korean_for_a_korean_browser(live_server, browser, survey):
    context = browser.new_context(locale="ko-KR")
    page = context.new_page()
    page.set_default_timeout(10_000)
    tamper(page, live_server, survey, weaker_keep_probability)
    posts = answer_everything_and_send(page, live_server, survey)
    error = page.locator("[data-error]")
    error.wait_for(state="visible")
    assert "아무것도 보내지 않았습니다" in error.inner_text()
    assert "2번 문항" in error.inner_text()
    assert posts == []
    context.close()


def test_the_same_tampering_machinery_leaves_an_honest_page_working(live_server, page, survey):
    tamper(page, live_server, survey, lambda specs: None)
    posts = answer_everything_and_send(page, live_server, survey)
    page.wait_for_selector("[data-receipt]:not([hidden])")
    assert len(posts) == 1 and posts[0].url.endswith(reverse("submit", args=[survey.slug]))
    assert Submission.objects.count() == 1
