"""Number and rating questions in real Chromium: values outside the range are refused before
anything is randomized, and no true value reaches a request, cookie, storage or log."""

from __future__ import annotations

import json
import logging

import pytest
from django.urls import reverse

from surveys import actions
from surveys.models import Report, Submission
from tests.base import make_number_question, make_question, make_survey, make_user
from tests.browser.conftest import assert_only_the_ledger_is_stored

# Distinctive true values, so that any leak of them is unmistakable in a request or a log line.
DISTANCE = "7318.625"
HOURS = "4729"
SALARY = "58613"


@pytest.fixture
def survey(db):
    survey = make_survey(make_user("olga"), title="Numbers survey")
    make_number_question(survey, text="Distance?", lo=0, hi=10000, mechanism="piecewise", whole_numbers=False)
    make_number_question(survey, text="Hours?", lo=0, hi=8760, mechanism="laplace", unit="hours")
    make_number_question(survey, text="Age?", lo=18, hi=99, mechanism="1bitmean")
    make_question(
        survey, text="Rate (shares)", kind="rating", options=[str(v) for v in range(11)], scale="0-10", epsilon=2.0
    )
    points = [str(v) for v in range(1, 8)]
    make_number_question(
        survey, text="Rate (mean)", lo=1, hi=7, mechanism="hybrid", kind="rating", scale="1-7", options=points
    )
    bins = ["0–25000", "25000–50000", "50000–75000", "75000–100000"]
    make_question(
        survey, text="Salary?", kind="numeric", options=bins, range_low=0, range_high=100000, bins=4, epsilon=1.0
    )
    actions.do_open_survey(survey)
    return survey


def test_numbers_and_ratings_leave_the_browser_only_randomized(live_server, page, survey, caplog):
    caplog.set_level(logging.DEBUG)
    requests = []
    page.on("request", lambda request: requests.append(request))
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    fieldsets = page.locator("[data-question-id]")
    distance, hours, age, nps, rate, salary = (fieldsets.nth(i) for i in range(6))

    # Outside the range, or not whole where whole numbers are asked: refused, nothing sent.
    distance.locator("[data-number-input]").fill(DISTANCE)
    for wrong in ("9000", "-1", "12.5"):
        hours.locator("[data-number-input]").fill(wrong)
        page.click("[data-submit]")
        assert "Hours?" in page.text_content("[data-error]")
        assert "whole number from 0 – 8,760" in page.text_content("[data-error]")
    assert [r for r in requests if r.method == "POST"] == []

    hours.locator("[data-number-input]").fill(HOURS)
    age.locator("[data-number-input]").fill("64")
    nps.locator("[data-value='9']").check()
    rate.locator("[data-value='6']").check()
    salary.locator("[data-number-input]").fill(SALARY)
    assert page.evaluate("new FormData(document.querySelector('[data-respond-form]')).entries().next().done")
    page.click("[data-submit]")
    page.wait_for_selector("[data-receipt]:not([hidden])")

    storage = assert_only_the_ledger_is_stored(page)
    assert all(value not in storage for value in (DISTANCE, HOURS, SALARY))
    cookies = page.context.cookies()
    assert {c["name"] for c in cookies} == {"csrftoken", f"murmur-responded-{survey.pk}"}
    posts = [r for r in requests if r.method == "POST"]
    assert len(posts) == 1
    for request in requests:
        sent = " ".join([request.url, request.post_data or "", json.dumps(request.headers)])
        assert all(value not in sent for value in (DISTANCE, HOURS, SALARY))
    assert all(value not in c["value"] for c in cookies for value in (DISTANCE, HOURS, SALARY))
    assert all(value not in r.getMessage() for r in caplog.records for value in (DISTANCE, HOURS, SALARY))

    body = json.loads(posts[0].post_data)
    fields = [set(item["report"]) for item in body["reports"]]
    assert fields == [{"index"}, {"index"}, {"index"}, {"value"}, {"index"}, {"value"}]  # the histogram: k-RR
    assert body["reports"][2]["report"]["index"] in (0, 1)  # 1BitMean sends one bit
    stored = {r.question_id: r for r in Report.objects.filter(submission=Submission.objects.get())}
    for item in body["reports"]:
        report = stored[item["question"]]
        assert report.randomization.build_mechanism().parse_report(item["report"]) == bytes(report.packed)


def test_the_number_reports_vary_around_the_answer(live_server, page, survey):
    # Laplace at epsilon 1 on a grid of 100: the report equals the answer's grid point with
    # probability (1 - q) / (1 + q), q = e^(-1/100), about 0.005; 12 equal reports would be ~1e-27.
    survey.allow_repeat_responses = True
    survey.save()
    hours = survey.questions.get(text="Hours?")
    for _ in range(12):
        page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
        page.locator("[data-question-id]").nth(1).locator("[data-number-input]").fill(HOURS)
        page.click("[data-submit]")
        page.wait_for_selector("[data-receipt]:not([hidden])")
    indices = {bytes(r.packed)[0] for r in Report.objects.filter(question=hours)}
    assert len(indices) > 1
