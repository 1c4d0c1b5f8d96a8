"""One survey in two languages, answered in real Chromium: Korean and English respondents (their
browser's Accept-Language) pool into one tally per question, whose estimates are exactly those of a
one-language survey holding the same reports; the bodies they post have the same shape and name no
language; every page a respondent sees passes axe-core in both languages.

Each respondent runs the real answer page and its JavaScript: a fresh load of the page (a new
one-time token), answers clicked, "Randomize and send", the receipt awaited. Respondents of one
language share one browser context (its locale sets Accept-Language) and one page, one after
another: several pages of one context answering at once were 3 to 4 times slower per respondent
here (Chromium's background pages), and several contexts no faster on two busy cores.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time

import numpy as np
import pytest
from django.db import transaction
from django.urls import reverse

from surveys import actions, languages
from surveys.models import Report, Submission, Survey
from surveys.responding.writes import add_to_tally, record_submissions
from surveys.results.estimates import SurveyState
from tests.base import make_number_question, make_question, make_survey, make_user
from tests.languages import make_bilingual

LOCALES = {"ko": "ko-KR", "en": "en-US"}
#: The axe sweeps' languages: make test checks Korean (no English left on it besides names), CI both.
BOTH_LANGUAGES = ["ko", pytest.param("en", marks=pytest.mark.slow)]
TITLES = {"ko": "주간 근무 설문", "en": "EN 주간 근무 설문"}


@pytest.fixture
def survey(db, settings):
    settings.RATE_LIMITS_ENABLED = False  # hundreds of submissions from one address
    survey = make_survey(
        make_user("민아"),
        title=TITLES["ko"],
        description="매주 묻습니다.",
        thank_you="고맙습니다.",
        allow_repeat_responses=True,
    )
    make_question(survey, text="이번 주 기분은?", options=["좋음", "보통", "나쁨"], mechanism="krr", epsilon=1.0)
    make_question(survey, text="야근했나요?", kind="yes_no", options=["예", "아니요"], mechanism="oue", epsilon=1.0)
    make_question(
        survey,
        text="팀을 추천하시겠어요?",
        kind="rating",
        scale="1-5",
        options=["1", "2", "3", "4", "5"],
        low_label="전혀",
        high_label="매우",
        epsilon=1.0,
    )
    make_number_question(survey, text="몇 시간 일했나요?", unit="시간", epsilon=1.0)
    make_bilingual(survey)
    actions.do_open_survey(survey)
    return survey


def answers_for(rng):
    """One respondent's true answers: option indices of the three choice questions, and hours."""
    return [
        int(rng.choice(3, p=[0.5, 0.3, 0.2])),
        int(rng.choice(2, p=[0.3, 0.7])),
        int(rng.choice(5, p=[0.1, 0.1, 0.2, 0.3, 0.3])),
        int(rng.integers(20, 41)),
    ]


#: One respondent's clicks and typing, in the page, in one round trip from the test: the page's own
#: JavaScript (respond.js) sees the same click, input and change events and randomizes and posts;
#: then the receipt, awaited in the page (the same wait as :func:`finish`, without two more round
#: trips a respondent): the page's heading and language, and the receipt's heading.
ANSWER = """async (answers) => {
  const button = document.querySelector("[data-submit]");
  while (button.disabled) await new Promise((resolve) => setTimeout(resolve, 5));  // until respond.js is ready
  const fieldsets = document.querySelectorAll("fieldset[data-question-id]");
  answers.slice(0, 3).forEach((answer, i) => fieldsets[i].querySelector(`[data-option-index='${answer}']`).click());
  const hours = fieldsets[3].querySelector("[data-number-input]");
  hours.value = String(answers[3]);
  hours.dispatchEvent(new Event("input", { bubbles: true }));
  hours.dispatchEvent(new Event("change", { bubbles: true }));
  button.click();
  const receipt = document.querySelector("[data-receipt]");
  const started = performance.now();
  while (receipt.hidden) {
    if (performance.now() - started > 30000) throw new Error("no receipt within 30 s");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return [
    document.querySelector("h1").innerText,
    document.documentElement.lang,
    document.querySelector("#receipt-heading").innerText,
  ];
}"""
RECEIPT_HEADINGS = {"ko": "보냈습니다. 감사합니다!", "en": "Sent. Thank you!"}


def respond(page, url, answers, language):
    """Load a fresh answer page (a new one-time token), answer, press send and await the receipt."""
    page.goto(url, wait_until="domcontentloaded")  # module scripts have run by then
    assert page.evaluate(ANSWER, answers) == [TITLES[language], language, RECEIPT_HEADINGS[language]]


def finish(page, language):
    page.wait_for_selector("[data-receipt]:not([hidden])", timeout=30_000)
    heading = page.locator("#receipt-heading").inner_text()
    assert heading == RECEIPT_HEADINGS[language], heading


def answer_in(browser, live_server, survey, language, respondents, seed, bodies):
    """``respondents`` browser respondents reading ``language``, one after another in one context."""
    context = browser.new_context(locale=LOCALES[language])
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(
        "request",
        lambda request: (
            request.method == "POST"
            and "/submit/" in request.url
            and bodies.append((language, request.url, request.post_data))
        ),
    )
    url = f"{live_server.url}{reverse('respond', args=[survey.slug])}"
    rng = np.random.default_rng(seed)
    for _ in range(respondents):
        respond(page, url, answers_for(rng), language)
    context.close()
    assert errors == []


def body_shape(body: str):
    """A body with its token and report values replaced by their types: the shape the server sees."""
    parsed = json.loads(body)
    reports = [(r["question"], r["version"], sorted(r), type(r["report"]).__name__) for r in parsed["reports"]]
    return json.dumps([sorted(parsed), reports])


def copy_into_one_language(survey: Survey) -> Survey:
    """A one-language survey with the same questions and randomizations, holding the same reports."""
    with transaction.atomic():
        copy = actions.copy_survey(survey, same_series=False, title="One language")
        languages.do_remove_language(copy, "en")  # a copy keeps the languages: this one has only Korean
    assert not languages.statuses(copy)
    actions.do_open_survey(copy)
    originals, copies = list(survey.questions.all()), list(copy.questions.all())
    submissions = list(Submission.objects.filter(survey=survey).order_by("id"))
    with transaction.atomic():
        mapped = dict(zip(submissions, record_submissions(copy, [None] * len(submissions)), strict=True))
        for original, question in zip(originals, copies, strict=True):
            randomization = actions.sync_randomization(question)
            assert randomization.key() == original.current_randomization().key()
            reports = Report.objects.filter(question=original).select_related("submission")
            packed = [bytes(r.packed) for r in reports]
            Report.objects.bulk_create(
                Report(
                    survey=copy,
                    submission=mapped[r.submission],
                    question=question,
                    randomization=randomization,
                    packed=p,
                )
                for r, p in zip(reports, packed, strict=True)
            )
            add_to_tally(randomization, packed)
    return copy


def same(a, b) -> bool:
    """Exactly equal, through dataclasses, arrays, sequences and floats (nan equal to nan)."""
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(
            same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
        )  # fmt: skip
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


#: What a question's result is, beside which question, randomization and mechanism object it is of.
NOT_COMPARED = {"question", "randomization", "mechanism"}


def assert_pooled_like_one_language(survey: Survey, respondents: int) -> None:
    copy = copy_into_one_language(survey)
    ours, theirs = SurveyState.read(survey), SurveyState.read(copy)
    for question, twin in zip(ours.questions, theirs.questions, strict=True):
        assert question.randomizations.count() == 1  # one randomization, one tally for both languages
        [result], [expected] = ours.results(question), theirs.results(twin)
        assert result.n == expected.n == respondents
        for f in dataclasses.fields(result):
            if f.name not in NOT_COMPARED:
                assert same(getattr(result, f.name), getattr(expected, f.name)), (question.text, f.name)


def run(browser, live_server, survey, per_language):
    bodies: list[tuple[str, str, str]] = []
    started = time.monotonic()
    for seed, language in enumerate(("ko", "en")):
        answer_in(browser, live_server, survey, language, per_language, seed, bodies)
    elapsed = time.monotonic() - started
    assert Submission.objects.filter(survey=survey).count() == 2 * per_language
    # The same body in both languages: same shape, same padded sizes, no language named anywhere in it.
    shapes = {language: {body_shape(body) for lang, _, body in bodies if lang == language} for language in LOCALES}
    assert len(shapes["ko"]) == 1 and shapes["ko"] == shapes["en"]
    sizes = {language: {len(body) for lang, _, body in bodies if lang == language} for language in LOCALES}
    assert sizes["ko"] == sizes["en"]
    for language, url, body in bodies:
        assert url.endswith(f"?lang={language}")  # the receipt's language: the URL only, never the body
        assert "lang" not in body and f'"{language}"' not in body
    assert_pooled_like_one_language(survey, 2 * per_language)
    return elapsed


def test_five_korean_and_five_english_respondents_pool_into_one_tally(live_server, browser, survey, capsys):
    elapsed = run(browser, live_server, survey, per_language=5)
    with capsys.disabled():
        print(f"\n10 browser respondents in {elapsed:.1f} s")


@pytest.mark.slow  # 600 browser respondents: CI's PostgreSQL pass (make test-all)
def test_three_hundred_korean_and_three_hundred_english_respondents(live_server, browser, survey, capsys):
    elapsed = run(browser, live_server, survey, per_language=300)
    with capsys.disabled():
        print(f"\n600 browser respondents in {elapsed:.0f} s")


@pytest.mark.parametrize("language", BOTH_LANGUAGES)
def test_every_respondent_page_passes_axe_in_both_languages(live_server, browser, survey, language):
    from tests.browser.test_walkthrough import AXE, axe_violations, english_words

    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: npm ci --prefix tests/browser (make install-dev does it)")
    context = browser.new_context(locale=LOCALES[language], bypass_csp=True)  # bypass: lets axe-core in
    page = context.new_page()
    page.set_default_timeout(15_000)
    base = live_server.url
    checked = {}
    page.goto(f"{base}{reverse('respond', args=[survey.slug])}")
    checked["answer page"] = axe_violations(page)
    # the switcher: keyboard-reachable links, the current one marked, each in its own language
    links = page.locator("a[data-survey-language]")
    assert links.count() == 2
    assert page.locator("a[data-survey-language][aria-current=page]").get_attribute("lang") == language
    fieldsets = page.locator("fieldset[data-question-id]")
    for index in range(3):
        fieldsets.nth(index).locator("[data-option-index='0']").check()
    fieldsets.nth(3).locator("[data-number-input]").fill("30")
    page.click("[data-submit]")
    finish(page, language)
    checked["receipt"] = axe_violations(page)
    assert page.locator("[data-thank-you]").inner_text() == ("EN 고맙습니다." if language == "en" else "고맙습니다.")
    receipt = page.locator("[data-receipt-rows]").inner_text()
    assert (TITLES["en"] not in receipt) and (("EN 이번 주 기분은?" in receipt) is (language == "en"))
    if language == "ko":
        assert english_words(page) == []
    page.goto(base + page.locator("[data-transparency-link]").get_attribute("href"))
    assert ("EN 이번 주 기분은?" in page.content()) is (language == "en")
    checked["transparency"] = axe_violations(page)
    # the other language through the switcher, by keyboard, keeping an invitation's #fragment
    page.goto(f"{base}{reverse('respond', args=[survey.slug])}#invite=a-token")
    other = "en" if language == "ko" else "ko"
    page.locator(f"a[data-survey-language][lang={other}]").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"**?lang={other}#invite=a-token")
    assert page.locator("h1").inner_text() == TITLES[other]
    assert page.evaluate("document.documentElement.lang") == other
    checked["switched"] = axe_violations(page)
    context.close()
    assert {name: problems for name, problems in checked.items() if problems} == {}


@pytest.mark.parametrize("language", BOTH_LANGUAGES)
def test_the_builders_language_pages_pass_axe(live_server, browser, survey, language):
    from tests.base import PASSWORD
    from tests.browser.test_walkthrough import AXE, axe_violations, english_words

    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: npm ci --prefix tests/browser (make install-dev does it)")
    languages.do_add_language(survey, "ja", "ko")  # one language still to translate
    context = browser.new_context(locale=LOCALES[language], bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    base = live_server.url
    page.goto(f"{base}{reverse('login')}")
    page.fill("[name=username]", "민아")
    page.fill("[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{base}/")
    checked = {}
    for name, url in [
        ("languages", reverse("survey_languages", args=[survey.pk])),
        ("translations", reverse("survey_translations", args=[survey.pk, "ja"])),
        ("builder", survey.get_absolute_url()),
    ]:
        page.goto(f"{base}{url}")
        checked[name] = axe_violations(page)
        if language == "ko" and name != "translations":  # the translation page shows the survey's own text
            # every language's own name is offered in the language pickers ("Afrikaans"): not our English
            page.evaluate("document.querySelectorAll('select').forEach((select) => select.remove())")
            assert english_words(page) == [], name
    assert page.locator("[data-translation-summary]").count() == 0
    context.close()
    assert {name: problems for name, problems in checked.items() if problems} == {}
