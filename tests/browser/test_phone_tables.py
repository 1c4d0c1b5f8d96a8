"""At 390 px the results of a rating (NPS), a short answer and a matrix fit the phone's width:
their tables wrap or scroll inside their own box, never widening the page."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from django.urls import reverse

from surveys import actions
from tests.base import (
    make_question,
    make_reports,
    make_survey,
    make_text_question,
    make_text_reports,
    make_user,
)
from tests.browser.conftest import log_in

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
SCALE = ["Strongly disagree with this", "Somewhat disagree", "Neither agree nor disagree", "Somewhat agree"]


def add_agreement_matrix(survey) -> None:
    """A matrix of three statements on :data:`SCALE`, whose first label is longer than 20 characters."""
    item = {"kind": "matrix", "options": SCALE, "epsilon": 4.0, "mechanism": "krr", "mechanism_params": {}}
    actions.do_add_matrix(survey, "Agreement", [{**item, "text": f"Statement number {i}"} for i in range(3)])


def agree(survey, rng) -> None:
    for row in survey.questions.filter(kind="matrix"):
        make_reports(row, list(rng.integers(0, 4, 400)))


@pytest.mark.parametrize("language", ["ko", "en"])
def test_results_tables_fit_a_phone(live_server, browser, db, language):
    owner = make_user("pia")
    survey = make_survey(owner, title="Phone check", epsilon_cap=None)
    nps = make_question(
        survey, text="How likely are you to recommend us?", kind="rating", scale="0-10",
        options=[str(i) for i in range(11)], epsilon=4.0,
    )  # fmt: skip
    text = make_text_question(survey, candidates=["coffee with oat milk", "green tea", "hot chocolate"])
    add_agreement_matrix(survey)
    actions.do_open_survey(survey)
    rng = np.random.default_rng(3)
    make_reports(nps, list(rng.integers(0, 11, 400)))
    make_text_reports(text, ["coffee with oat milk"] * 200 + ["green tea"] * 200)
    agree(survey, rng)

    context = browser.new_context(
        locale="ko-KR" if language == "ko" else "en-US", viewport={"width": 390, "height": 800}
    )
    page = context.new_page()
    log_in(page, live_server.url, "pia")
    pages = {"cards": survey.get_results_url(), "free-text": reverse("question_results", args=[survey.pk, text.pk])}
    for name, url in pages.items():
        page.goto(f"{live_server.url}{url}")
        page.wait_for_load_state("networkidle")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        if os.environ.get("MURMUR_SCREENSHOTS"):  # make screenshots: the NPS, matrix and free-text cards
            page.screenshot(path=SCREENSHOTS / f"results-{name}-{language}-phone.png", full_page=True)
        assert overflow <= 0, f"{url}: the page is {overflow} px wider than the phone"
    context.close()


@pytest.mark.parametrize("width", [390, 1280])
def test_the_matrix_charts_legend_shows_every_label_whole_at_both_widths(live_server, browser, db, width):
    """The stacked bars' legend names each option in full ("Strongly disagree with this", not cut at 20
    characters), wrapping within the card on a phone, with nothing wider than the page; axe finds no
    violation on the results page."""
    from tests.browser.test_walkthrough import axe_violations

    owner = make_user("pia")
    survey = make_survey(owner, title="Legend check", epsilon_cap=None)
    add_agreement_matrix(survey)
    actions.do_open_survey(survey)
    agree(survey, np.random.default_rng(5))
    context = browser.new_context(locale="en-US", viewport={"width": width, "height": 900}, bypass_csp=True)
    page = context.new_page()
    log_in(page, live_server.url, "pia")
    page.goto(f"{live_server.url}{survey.get_results_url()}")
    page.wait_for_load_state("networkidle")
    card = page.locator("[data-matrix-result]")
    legend = card.locator("[data-chart-legend] li")
    assert legend.all_inner_texts() == SCALE
    card_box = card.bounding_box()
    for i in range(legend.count()):
        box = legend.nth(i).bounding_box()
        assert legend.nth(i).is_visible() and box["x"] >= card_box["x"] - 0.5
        assert box["x"] + box["width"] <= card_box["x"] + card_box["width"] + 0.5, SCALE[i]
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    assert axe_violations(page) == []
    context.close()
