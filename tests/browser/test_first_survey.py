"""A first-time organizer builds a ten-question survey with every default and opens it, in real Chromium.

Nothing is changed from what the builder offers: the survey's total ε (5) is split over the questions
as they are added (:mod:`surveys.budget`), so the tenth question fits as the first did.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from surveys.models import Survey
from tests.base import PASSWORD, make_user


def test_a_new_organizer_builds_ten_questions_with_defaults_and_opens_the_survey(live_server, page, db):
    make_user("nora")
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("[name=username]", "nora")
    page.fill("[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/surveys/new/")
    page.fill("[name=title]", "First survey")
    page.click("main form[action$='/surveys/new/'] button[type=submit]")
    page.wait_for_url(re.compile(r".*/surveys/\d+/$"))

    for i in range(10):
        form = page.locator("#add-question form")
        form.locator("[name=text]").fill(f"Question {i + 1}?")
        if i % 2:
            form.locator("[name=kind]").select_option("yes_no")
        else:
            form.locator("[name=options_text]").fill("Often\nSometimes\nNever")
        count = page.locator("#questions > li[data-question]").count()
        # Changing the form sends the cost preview (at once on a change, 300 ms after typing): let it
        # fire and return first. A save clicked while a preview was in flight was twice lost under load
        # (no request within 10 s), which this test is not about.
        page.wait_for_timeout(350)
        expect(page.locator(".htmx-request")).to_have_count(0)  # a locator: no eval under the CSP
        # The save's own response, so that a refused save fails here with the server's words.
        with page.expect_response(lambda r: r.request.method == "POST" and "/questions/new/" in r.url) as saved:
            form.locator("button[value=save]").click()
        assert saved.value.ok, saved.value.status
        assert "errorlist" not in saved.value.text(), saved.value.text()
        expect(page.locator("#questions > li[data-question]")).to_have_count(count + 1)
        # htmx swaps the out-of-band list before the form itself: wait for the fresh, empty form.
        expect(page.locator("#add-question form [name=text]")).to_have_value("")
        expect(page.locator("#add-question .errorlist")).to_have_count(0)
        # Every question so far shares the total: the plan's table has a row for each.
        expect(page.locator("[data-plan] tbody tr")).to_have_count(count + 1)
        # htmx has finished swapping and settling (and bound the fresh form) before the next fill.
        expect(page.locator(".htmx-request, .htmx-swapping, .htmx-settling")).to_have_count(0)

    expect(page.locator("[data-total-epsilon]")).to_have_text("5")
    # The panel re-plans live as the total changes, before anything is saved.
    page.fill("[name=plan-epsilon_cap]", "2")
    expect(page.locator("[data-total-epsilon]")).to_have_text("2")
    expect(page.locator("[data-plan] tbody tr").first.locator("td").first).to_contain_text("0.2")
    page.fill("[name=plan-epsilon_cap]", "5")
    expect(page.locator("[data-total-epsilon]")).to_have_text("5")
    page.click("#lifecycle form[action$='/open/'] button")
    page.wait_for_selector("#share-link")
    survey = Survey.objects.get(title="First survey")
    assert survey.status == "open"
    assert [q.epsilon for q in survey.questions.all()] == [0.5] * 10
    assert page.locator(".errorlist, .messages .error").count() == 0


@pytest.mark.parametrize("language", ["ko", "en"])
def test_the_first_question_shows_on_the_first_phone_screen(live_server, browser, db, language):
    from tests.base import make_open_survey

    survey = make_open_survey(
        make_user(f"owner-{language}"), questions=3, title="점심 설문" if language == "ko" else "Lunch"
    )
    context = browser.new_context(
        locale="ko-KR" if language == "ko" else "en-US", viewport={"width": 390, "height": 844}
    )
    page = context.new_page()
    page.goto(f"{live_server.url}{survey.get_share_url()}")
    first = page.locator("[data-question-id] legend").first
    box = first.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 844, box
    # The details are a click away, not gone.
    page.locator("[data-privacy-details] summary").click()
    assert page.locator("[data-spec-digest]").is_visible()
    context.close()


def test_a_matrix_added_with_defaults_takes_its_share_of_the_plan(live_server, page, db):
    from tests.base import make_question, make_survey

    owner = make_user("mara")
    survey = make_survey(owner, title="Grid", epsilon_cap=5.0)
    make_question(survey, text="Alone?", planned_epsilon=True)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("[name=username]", "mara")
    page.fill("[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}{survey.get_absolute_url()}")
    page.locator("#add-matrix > summary").click()
    form = page.locator("#add-matrix form")
    assert not form.locator("[name=epsilon]").is_visible()  # planned: no ε to type
    assert not form.locator("[name=mechanism]").is_visible()  # Automatic, under "Advanced"
    form.locator("[name=title]").fill("How do these sound?")
    form.locator("[name=items_text]").fill("Mornings\nEvenings\nWeekends\nHolidays")
    form.locator("[name=options_text]").fill("Bad\nFine\nGood")
    form.locator("button[type=submit]").click()
    expect(page.locator("[data-matrix]")).to_have_count(1)
    assert sorted(q.epsilon for q in survey.questions.all()) == [1.0] * 5
