"""A two-phase question in real Chromium: after its re-tune the page randomizes with the new version,
and the receipt says which version the respondent got and how it was chosen."""

from __future__ import annotations

import json

from django.urls import reverse

from surveys import actions
from surveys.models import Report
from surveys.responding import retune
from tests.base import make_question, make_reports, make_survey, make_user


def test_after_the_re_tune_the_page_sends_the_new_version_and_the_receipt_says_so(live_server, page, db):
    survey = make_survey(make_user("olga"), expected_respondents=2000)
    question = make_question(
        survey, text="Which?", options=[f"Option {i}" for i in range(10)], epsilon=1.0, adaptive_percent=15
    )
    actions.do_open_survey(survey)
    make_reports(question, [0] * 300, seed=101)  # everyone on one option: re-tuning moves k-RR to subset selection
    assert retune.retune_question(question.pk)["mechanism"] == "subset"
    posts = []
    page.on("request", lambda request: request.method == "POST" and posts.append(request))
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    page.locator("[data-question-id] [data-option-index='3']").check()
    page.click("[data-submit]")
    page.wait_for_selector("[data-receipt]:not([hidden])")
    [item] = json.loads(posts[0].post_data)["reports"]
    assert item["version"] == 2 and set(item["report"]) == {"subset"}
    assert Report.objects.filter(randomization__version=2).count() == 1
    design = page.text_content("[data-receipt] [data-design]")
    assert "version 2" in design and "after 300 earlier respondents" in design
