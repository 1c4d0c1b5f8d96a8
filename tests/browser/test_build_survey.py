"""An organizer signs up and builds a survey with the htmx editor, in real Chromium."""

from __future__ import annotations

import re

from django.core import mail
from playwright.sync_api import expect

from ldp.advisor import recommend
from surveys.models import Survey
from tests.base import PASSWORD


def half_width(page) -> float:
    text = page.text_content("#add-question [data-half-width]")
    return float(re.search(r"[0-9.]+", text).group())


def add_question(page, text, options=None, kind=None, epsilon=None, mechanism=None):
    form = page.locator("#add-question form")
    form.locator("[name=text]").fill(text)
    if kind:
        form.locator("[name=kind]").select_option(kind)
    if options:
        form.locator("[name=options_text]").fill("\n".join(options))
    if epsilon:
        form.locator("[name=budget]").select_option("fixed")  # the ε field shows once the ε is fixed
        form.locator("[name=epsilon]").fill(epsilon)
    if mechanism:
        if not form.locator("[name=mechanism]").is_visible():
            form.locator("[data-advanced] summary").click()  # the mechanism is Automatic unless asked
        form.locator("[name=mechanism]").select_option(mechanism)
    count = page.locator("#questions > li[data-question]").count()
    form.locator("button[value=save]").click()
    # Locator assertions, not wait_for_function: the page's CSP forbids the eval that one needs.
    expect(page.locator("#questions > li[data-question]")).to_have_count(count + 1)


def test_organizer_builds_and_opens_a_three_question_survey(live_server, page):
    page.goto(f"{live_server.url}/accounts/signup/")
    page.fill("[name=username]", "olivia")
    page.fill("[name=email]", "olivia@example.org")
    page.fill("[name=password1]", PASSWORD)
    page.fill("[name=password2]", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url("**/surveys/")
    # The address is confirmed from the mailed link before a survey can open.
    link = re.search(r"https?://\S+/accounts/confirm/\S+", mail.outbox[-1].body).group(0)
    page.goto(link)
    page.wait_for_url("**/surveys/")
    assert "Your email address is confirmed" in page.text_content("main")

    page.click("text=New survey")
    page.fill("[name=title]", "Office survey")
    page.fill("[name=expected_respondents]", "1000")
    page.click("main button[type=submit]")
    page.wait_for_url(re.compile(r".*/surveys/\d+/$"))
    page.evaluate("window.stillTheSamePage = true")

    add_question(page, "Favourite fruit?", options=["Apple", "Banana", "Cherry", "Durian", "Elderberry"])
    add_question(page, "Do you cycle to work?", kind="yes_no")

    # The live preview: fill in a question, read its expected error, lower epsilon, watch it grow.
    form = page.locator("#add-question form")
    form.locator("[name=text]").fill("Preferred meeting day?")
    form.locator("[name=options_text]").fill("Mon\nTue\nWed\nThu\nFri")
    previews = {}
    form.locator("[name=budget]").select_option("fixed")
    for epsilon in ("2", "0.5"):
        form.locator("[name=epsilon]").fill(epsilon)
        # The builder's default mechanism is the advisor's pick for these options and epsilon.
        expected = f"± {100 * recommend(5, float(epsilon), 1000).best.half_width:.1f}"
        expect(page.locator("#add-question [data-half-width]")).to_have_text(expected)
        previews[epsilon] = half_width(page)
    assert previews["0.5"] > 2 * previews["2"]
    add_question(page, "Preferred meeting day?", options=["Mon", "Tue", "Wed", "Thu", "Fri"], mechanism="dbitflip")

    assert page.evaluate("window.stillTheSamePage") is True  # no full reload so far
    # The meeting day's ε is fixed at 0.5; fruit and cycling share the rest of the default total of 5.
    expect(page.locator("[data-total-epsilon]")).to_have_text("5")
    page.click("button:has-text('Open survey')")
    page.wait_for_selector("[data-share-link]")

    survey = Survey.objects.get(title="Office survey")
    assert survey.status == "open"
    assert [q.text for q in survey.questions.all()] == [
        "Favourite fruit?",
        "Do you cycle to work?",
        "Preferred meeting day?",
    ]
    fruit = survey.questions.get(text="Favourite fruit?")
    assert fruit.mechanism_chosen_automatically
    assert fruit.epsilon == 2.25
    assert fruit.mechanism == recommend(5, 2.25, 1000).best.mechanism
    share_link = page.input_value("[data-share-link]")
    assert share_link == f"{live_server.url}/s/{survey.slug}/"
    page.goto(share_link)
    assert "Office survey" in page.text_content("h1")
