"""Invitation links in real Chromium: the token travels in the fragment, never in a URL the server sees."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest
from django.urls import reverse

from surveys.models import Invitation, Submission
from surveys.responding import invitations
from tests.base import make_open_survey, make_user


@pytest.fixture
def survey(db):
    return make_open_survey(make_user("ines"), questions=2, invite_only=True)


def answer_and_send(page):
    page.locator("[data-question-id]").first.locator("[data-option-index='1']").check()
    page.click("[data-submit]")


def test_an_invitation_link_answers_once_and_its_token_is_never_in_a_url(live_server, page, survey):
    share = f"{live_server.url}{reverse('respond', args=[survey.slug])}"
    (link,) = invitations.create_links(survey, share, 1)
    token = urlsplit(link.url).fragment.removeprefix("invite=")
    requests = []
    page.on("request", lambda request: requests.append(request))

    page.goto(link.url)
    answer_and_send(page)
    page.wait_for_selector("[data-receipt]:not([hidden])")
    assert Submission.objects.filter(survey=survey).count() == 1
    assert Invitation.objects.get().used
    # The token went only in the submission's body; no URL the browser requested carries it.
    assert all(token not in request.url for request in requests)
    (post,) = [r for r in requests if r.method == "POST"]
    assert json.loads(post.post_data)["invite"] == token

    # The same link again, in a fresh page load (fresh page token, no cookie trick helps): refused.
    page.context.clear_cookies()
    page.goto("about:blank")
    page.goto(link.url)
    answer_and_send(page)
    error = page.locator("[data-error]")
    error.wait_for(state="visible")
    assert "already been used" in error.inner_text()
    assert Submission.objects.filter(survey=survey).count() == 1


def test_without_an_invitation_the_page_says_so_and_sends_nothing(live_server, page, survey):
    requests = []
    page.on("request", lambda request: requests.append(request))
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    assert "by invitation only" in page.locator("[data-error]").inner_text()
    assert page.locator("[data-submit]").is_disabled()
    assert not [r for r in requests if r.method == "POST"]
