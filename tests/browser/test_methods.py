"""A forced-response survey with two questions asked directly, in real Chromium: the respondent's
browser sends the directly asked answers as given and only a randomized report for the sensitive
one; with 200 respondents the organizer's analysis page shows the regression table and the
weighted estimate. Every page is checked by axe-core."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.urls import reverse

from surveys.models import Submission
from tests.base import PASSWORD, make_boruch_survey, make_joint_reports, make_survey, make_user
from tests.browser.conftest import assert_only_the_ledger_is_stored
from tests.browser.test_respond_privacy import INSTRUMENT
from tests.browser.test_walkthrough import AXE, axe_violations

SENSITIVE = ["Took-it-77", "Never-did-31"]  # distinctive labels: any leak of the answer's text shows
DEPARTMENTS = ["Sales", "Engineering", "Support"]
AGES = ["Under 40", "40 and over"]


@pytest.fixture
def survey(db):
    survey = make_survey(make_user("hana"), title="Workplace conduct")
    groups = {"Department?": DEPARTMENTS, "Age band?": AGES}
    make_boruch_survey(survey, SENSITIVE, groups, "Did you ever take office supplies home?")
    # 199 respondents seeded as their browsers would randomize; the 200th answers in Chromium below.
    rng = np.random.default_rng(11)
    department = rng.choice(3, size=199, p=[0.5, 0.3, 0.2])
    age = rng.integers(0, 2, size=199)
    p_yes = 1 / (1 + np.exp(-(-0.8 + 0.9 * (department == 1) + 0.5 * age)))
    outcome = (rng.random(199) >= p_yes).astype(int)
    make_joint_reports(list(survey.questions.all()), np.column_stack([outcome, department, age]))
    return survey


def check_axe(page, name: str) -> None:
    problems = axe_violations(page)
    assert not problems, f"{name}: {problems}"


def test_direct_answers_are_sent_as_given_and_the_analysis_shows_regression_and_weighting(live_server, browser, survey):
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: npm ci --prefix tests/browser")
    context = browser.new_context(bypass_csp=True)  # lets the test inject axe-core
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    requests = []
    page.on("request", lambda request: requests.append(request))
    page.add_init_script(INSTRUMENT)

    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    assert "Forced response: your browser rolls a die for you" in page.text_content("main")
    assert page.locator("[data-direct]").count() == 2
    plain = context.new_page()  # axe-core calls Math.random, which the instrumented page refuses
    plain.goto(page.url)
    check_axe(plain, "answer page")
    plain.close()
    fieldsets = page.locator("[data-question-id]")
    fieldsets.nth(0).locator("[data-option-index='0']").check()  # the sensitive true answer
    fieldsets.nth(1).locator("[data-option-index='2']").check()  # Support
    fieldsets.nth(2).locator("[data-option-index='1']").check()  # 40 and over
    page.click("[data-submit]")
    page.wait_for_selector("[data-receipt]:not([hidden])")
    assert page.evaluate("window.__secureDraws") > 0
    assert not errors, errors

    posts = [r for r in requests if r.method == "POST"]
    assert len(posts) == 1
    body = json.loads(posts[0].post_data)
    assert set(body) == {"token", "reports"}
    outcome, department, age = survey.questions.all()
    sent = {item["question"]: item["report"] for item in body["reports"]}
    assert sent[department.pk] == {"value": 2} and sent[age.pk] == {"value": 1}  # as given, and said so
    assert set(sent[outcome.pk]) == {"value"}  # a forced-response report, drawn by crypto.getRandomValues
    # No channel carries the sensitive answer's label: requests, cookies, storage.
    for request in requests:
        text = " ".join([request.url, request.post_data or "", request.headers.get("cookie", "")])
        assert all(label not in text for label in SENSITIVE)
    assert all(label not in c["value"] for c in context.cookies() for label in SENSITIVE)
    ledger = json.loads(assert_only_the_ledger_is_stored(page))
    assert [entry["question"] for entry in ledger] == [str(outcome.pk)]  # direct answers spend no ε
    assert Submission.objects.count() == 200

    # The organizer's analysis: regression table and weighted estimate.
    organizer = browser.new_context(bypass_csp=True).new_page()
    organizer.set_default_timeout(15_000)
    organizer.goto(f"{live_server.url}{reverse('login')}")
    organizer.fill("[name=username]", "hana")
    organizer.fill("[name=password]", PASSWORD)
    organizer.click("main button[type=submit]")
    organizer.goto(f"{live_server.url}{reverse('survey_results', args=[survey.pk])}")
    with organizer.expect_navigation():  # axe must not run on a page that is being replaced
        organizer.click("[data-analysis-link] a")
    check_axe(organizer, "analysis form")
    organizer.select_option("[name=outcome]", str(outcome.pk))
    organizer.check(f"[name=covariates][value='{department.pk}']")
    organizer.check(f"[name=covariates][value='{age.pk}']")
    organizer.click("[data-analysis-form] details summary")
    for i, share in enumerate([50, 30, 20]):
        organizer.fill(f"[name=margin_{department.pk}_{i}]", str(share))
    organizer.click("[data-analysis-form] button[type=submit]")
    organizer.wait_for_selector("[data-coefficients]")
    assert organizer.locator("[data-coefficients] tbody tr").count() == 4  # intercept, 2 departments, age
    assert organizer.locator("[data-predicted] tbody tr").count() >= 1
    assert organizer.locator("[data-regression-chart] svg").count() == 1
    assert organizer.locator("[data-weighted] [data-weighted-share]").count() == 2
    assert "Post-stratified" in organizer.text_content("[data-weighting]")
    assert organizer.text_content("[data-regression] [data-n]") == "200"
    check_axe(organizer, "analysis results")

    organizer.goto(f"{live_server.url}{reverse('survey_power', args=[survey.pk])}")
    organizer.click("[data-power-form] button[type=submit]")
    organizer.wait_for_selector("[data-power-result]")
    check_axe(organizer, "sample size")
