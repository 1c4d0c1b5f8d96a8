"""Korean in a real browser: the page, respond.js's own messages, and the header's language switcher."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
from django.urls import reverse

from tests.base import make_open_survey, make_user


@pytest.fixture
def survey(db):
    return make_open_survey(make_user("alice"), questions=2)


def test_a_korean_browser_gets_korean_from_the_page_and_from_respond_js(live_server, browser, survey):
    context = browser.new_context(locale="ko-KR")
    page = context.new_page()
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    assert page.get_attribute("html", "lang") == "ko"
    assert "내 답변이 보호되는 방식" in page.text_content("main")
    page.click("[data-submit]")  # nothing answered: respond.js refuses, in Korean (djangojs catalog)
    assert page.text_content("[data-error]") == "보내기 전에 한 문항 이상 답해 주세요."
    live = urlparse(live_server.url).netloc
    assert {urlparse(url).netloc for url in requests} == {live}  # the catalog too comes from our origin
    context.close()


def test_the_language_switcher_works_without_javascript_and_the_choice_stays(live_server, browser, db):
    context = browser.new_context(locale="en-US", java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{live_server.url}{reverse('login')}")
    assert page.get_attribute("html", "lang") == "en"
    page.click("button[name=language][value=ko]")
    assert page.url == f"{live_server.url}{reverse('login')}"
    assert page.get_attribute("html", "lang") == "ko"
    assert "로그인" in page.text_content("h1")
    page.goto(f"{live_server.url}{reverse('home')}")
    assert "모두의 답은 들리지만" in page.text_content("h1")
    assert page.get_attribute("button[name=language][value=ko]", "aria-current") == "true"
    page.click("button[name=language][value=en]")
    assert page.get_attribute("html", "lang") == "en"
    context.close()
