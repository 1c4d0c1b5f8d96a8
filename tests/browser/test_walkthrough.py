"""Organizer -> respondent -> results, in Korean and in English, on a desktop and on a phone.

Every page on the way is checked by axe-core (npm's package, injected into the page) and must have
no violation at all; Korean pages must carry no English words beyond proper nouns, mechanism
acronyms and ε.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from django.urls import reverse

from tests.base import PASSWORD, make_user

AXE = Path(__file__).parent / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = {"desktop": 1280, "phone": 390}
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"

#: Latin-script words a Korean page may show: names, acronyms and notation, never sentences.
ALLOWED_LATIN = {
    "Murmur", "Apple", "Microsoft", "Google", "RAPPOR", "dBitFlip", "BitMean", "Duchi", "Piecewise",
    "Hybrid", "Laplace", "Gaussian", "GDP", "Hadamard", "NPS", "CSV", "JSON", "SHA", "OUE", "SUE", "OLH", "CMS",
    "HCMS", "RR", "QR", "Asia", "Seoul", "UTC", "GMT", "AM", "PM", "ID", "URL", "EMS", "k-RR", "Norm-Sub",
    "BitFlip", "Count", "Mean", "Sketch",
    "Boruch", "Greenberg", "Warner",  # randomized-response designs keep their authors' names
    "English",  # the language switcher names each language in itself
    "SPSS", "Stata", "sav", "dta", "xlsx",  # statistics packages and their file extensions (.sav, .dta)
}  # fmt: skip

TEXT = {
    "ko": {
        "title": "구내식당 만족도",
        "questions": [
            ("점심 메뉴 중 가장 좋은 것은?", ["비빔밥", "김치찌개", "돈가스"]),
            ("다음 주에도 이용하실 건가요?", None),
        ],
    },
    "en": {
        "title": "Canteen pulse",
        "questions": [
            ("Best lunch on the menu?", ["Bibimbap", "Kimchi stew", "Tonkatsu"]),
            ("Will you eat here next week?", None),
        ],
    },
}


def axe_violations(page) -> list[str]:
    page.wait_for_load_state("load")
    page.evaluate(AXE.read_text())
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in result["violations"]
    ]


def english_words(page) -> list[str]:
    text = re.sub(
        r"(?<![0-9a-f])[0-9a-f]{32,}(?![0-9a-f])", " ", page.evaluate("document.body.innerText")
    )  # digests are not words
    text = re.sub(r"\w*[À-ž]\w*", " ", text)  # names with diacritics (Šidák) are not English
    words = set(re.findall(r"[A-Za-z][A-Za-z'-]*[A-Za-z]", text))
    return sorted(
        w for w in words if w not in ALLOWED_LATIN and not w.isupper() and not re.fullmatch(r"[a-z]?[A-Z]+s?", w)
    )


class Checker:
    """Checks each page reached and, when asked, keeps its screenshot."""

    def __init__(self, page, language: str, width: str, screenshots: bool) -> None:
        self.page, self.language, self.width, self.screenshots = page, language, width, screenshots
        self.problems: list[str] = []

    def check(self, name: str) -> None:
        self.page.wait_for_load_state("networkidle")
        for violation in axe_violations(self.page):
            self.problems.append(f"{name}: axe {violation}")
        if self.language == "ko":
            words = english_words(self.page)
            if words:
                self.problems.append(f"{name}: English on a Korean page: {words}")
        overflow = self.page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        if overflow > 0:
            self.problems.append(f"{name}: the page is {overflow} px wider than the window")
        if self.screenshots:
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=SCREENSHOTS / f"{name}-{self.language}-{self.width}.png", full_page=True)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("language", ["ko", "en"])
def test_organizer_respondent_results_walkthrough(live_server, browser, db, language, width):
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: npm ci --prefix tests/browser (make install-dev does it)")
    words = TEXT[language]
    make_user("민지")
    base = live_server.url
    screenshots = bool(os.environ.get("MURMUR_SCREENSHOTS"))  # make screenshots
    context = browser.new_context(
        locale="ko-KR" if language == "ko" else "en-US",
        timezone_id="Asia/Seoul",
        viewport={"width": WIDTHS[width], "height": 900},
        bypass_csp=True,  # lets the test inject axe-core; the app's own CSP is tested elsewhere
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    checker = Checker(page, language, width, screenshots)

    page.goto(f"{base}/")
    checker.check("home")
    page.goto(f"{base}{reverse('login')}")
    checker.check("login")
    page.fill("[name=username]", "민지")
    page.fill("[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{base}/")
    page.goto(f"{base}{reverse('survey_list')}")
    checker.check("survey-list")

    page.goto(f"{base}{reverse('survey_create')}")
    checker.check("survey-create")
    page.fill("[name=title]", words["title"])
    page.fill("[name=expected_respondents]", "200")
    page.click("main form[action$='/surveys/new/'] button[type=submit]")
    page.wait_for_url(re.compile(r".*/surveys/\d+/$"))
    for text, options in words["questions"]:
        form = page.locator("#add-question form")
        form.locator("[name=text]").fill(text)
        if options:
            form.locator("[name=options_text]").fill("\n".join(options))
        else:
            form.locator("[name=kind]").select_option("yes_no")
        count = page.locator("#questions > li[data-question]").count()
        # Wait for the save's own answer (up to 30 s: the first question computes the advisor's
        # tables on a busy CI machine), so a slow server and a lost click fail apart; then its swap.
        adding = lambda response: response.request.method == "POST" and response.url.endswith("/questions/new/")  # noqa: E731
        with page.expect_response(adding, timeout=30_000) as saved:
            form.locator("button[value=save]").click()
        assert saved.value.status == 200, saved.value.status
        page.wait_for_function(f"document.querySelectorAll('#questions > li[data-question]').length === {count + 1}")
        # htmx swaps the out-of-band list before the form itself: typing into the old form lost a
        # question's text once in CI (then the save was refused and the count never grew).
        page.wait_for_function("document.querySelector('#add-question form [name=text]').value === ''")
    checker.check("builder")
    page.click("#lifecycle form[action$='/open/'] button")
    page.wait_for_selector("#share-link")
    checker.check("builder-open")
    share = page.input_value("#share-link")
    results_url = page.get_attribute("a.button[href$='/results/']", "href")

    respondent = browser.new_context(
        locale=context_locale(language), viewport={"width": WIDTHS[width], "height": 900}, bypass_csp=True
    )
    answer = respondent.new_page()
    respondent_checker = Checker(answer, language, width, screenshots)
    answer.goto(share)
    respondent_checker.check("answer")
    answer.locator("[data-question-id]").first.locator("[data-option-index='1']").check()
    answer.click("[data-submit]")
    answer.wait_for_selector("[data-receipt]:not([hidden])")
    respondent_checker.check("receipt")
    answer.goto(f"{base}{reverse('ledger')}")
    answer.wait_for_selector("[data-ledger]:not([hidden])")
    respondent_checker.check("ledger")
    respondent.close()

    page.goto(f"{base}{results_url}")
    checker.check("results")
    context.close()
    problems = checker.problems + respondent_checker.problems
    assert not problems, "\n".join(problems)


def context_locale(language: str) -> str:
    return "ko-KR" if language == "ko" else "en-US"


def test_the_builder_shows_only_the_chosen_mechanisms_knobs(live_server, page, db):
    from tests.base import make_survey

    owner = make_user("knob")
    survey = make_survey(owner)
    page.goto(f"{live_server.url}{reverse('login')}")
    page.fill("[name=username]", "knob")
    page.fill("[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}{survey.get_absolute_url()}")
    form = page.locator("#add-question form")
    visible = lambda name: form.locator(f"[name={name}]").is_visible()  # noqa: E731
    assert not any(visible(n) for n in ("d", "hash_count", "width"))
    form.locator("[data-advanced] summary").click()  # the mechanism is Automatic unless asked
    form.locator("[name=mechanism]").select_option("dbitflip")
    assert visible("d") and not visible("hash_count")
    form.locator("[name=mechanism]").select_option("cms")
    assert visible("hash_count") and visible("width") and not visible("d")


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("language", ["ko", "en"])
def test_every_other_page_passes_axe(live_server, browser, db, language, width):
    """The pages the walkthrough does not pass through: accounts, preview, invitations, the public
    and per-question results, the public cross-tab, the transparency page and the error page."""
    import numpy as np

    from surveys import actions
    from tests.base import (
        make_joint_reports,
        make_multi_question,
        make_question,
        make_reports,
        make_set_reports,
        make_survey,
    )

    owner = make_user("수진")
    survey = make_survey(owner, title="주간 점검" if language == "ko" else "Weekly check", public_results=True)
    question = make_question(survey, text="기분은?" if language == "ko" else "Mood?", options=["😀", "🙂", "😐"])
    korean = language == "ko"
    multi = make_multi_question(
        survey,
        "padding-krr",
        text="이번 주에 한 것은? (모두)" if korean else "What did you do this week? (all)",
        options=["산책", "독서", "운동"] if korean else ["Walks", "Books", "Sport"],
    )
    sleep = make_question(
        survey,
        text="잠은?" if korean else "Sleep?",
        options=["푹", "보통", "설침"] if korean else ["Well", "So-so", "Badly"],
        epsilon=4.0,
    )
    actions.do_open_survey(survey)
    make_reports(question, [0] * 200 + [1] * 120 + [2] * 80, seed=5)
    make_set_reports(multi, [[1, 1, 0]] * 150 + [[0, 0, 1]] * 150 + [[0, 0, 0]] * 100, seed=6)
    make_joint_reports([question, sleep], np.column_stack([np.arange(400) % 3, np.arange(400) // 134]), seed=7)
    crosstab = reverse("public_crosstab", args=[survey.slug]) + f"?first={question.pk}&second={sleep.pk}&bands=joint"
    base = live_server.url
    context = browser.new_context(
        locale=context_locale(language),
        timezone_id="Asia/Seoul",
        viewport={"width": WIDTHS[width], "height": 900},
        bypass_csp=True,
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    checker = Checker(page, language, width, screenshots=False)
    for name, url in [
        ("signup", reverse("signup")),
        ("password-reset", reverse("password_reset")),
        ("not-found", "/no-such-page/"),
        ("public-results", reverse("public_results", args=[survey.slug])),
        ("public-crosstab", crosstab),
        ("transparency", reverse("transparency", args=[survey.slug])),
    ]:
        page.goto(f"{base}{url}")
        checker.check(name)
    page.goto(f"{base}{reverse('login')}")
    page.fill("[name=username]", "수진")
    page.fill("[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{base}/")
    for name, url in [
        ("question-results", reverse("question_results", args=[survey.pk, question.pk])),
        ("multi-select-results", reverse("question_results", args=[survey.pk, multi.pk])),
        ("invitations", reverse("invitations", args=[survey.pk])),
        ("preview", reverse("survey_preview", args=[survey.pk])),
        ("password-change", reverse("password_change")),
    ]:
        page.goto(f"{base}{url}")
        checker.check(name)
    context.close()
    assert not checker.problems, "\n".join(checker.problems)
