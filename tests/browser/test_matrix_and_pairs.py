"""A matrix, a declared pair and a multi-select question in real Chromium: only randomized reports
leave the browser, and the dashboard shows the pair's cross-tab and, on request (htmx), a post-hoc one
of two matrix items.
"""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
from django.urls import reverse

from ldp.crosstab import encode_pair
from surveys import actions
from surveys.models import Matrix, Report, Submission
from tests.base import (
    PASSWORD,
    make_joint_reports,
    make_multi_question,
    make_question,
    make_reports,
    make_survey,
    make_user,
)
from tests.browser.conftest import assert_only_the_ledger_is_stored

# Distinctive labels, so that any leak of an answer's text is unmistakable.
SCALE = ["Marten-31", "Numbat-77", "Oribi-52"]
ITEMS = ["Pangolin-18 item", "Quetzal-64 item", "Rorqual-29 item"]
FIRST = ["Saiga-45", "Takin-83", "Uakari-16"]
SECOND = ["Vicuna-58", "Wombat-90"]
PLAIN = ["Xenops-37", "Yapok-72"]
MULTI = ["Zorilla-11", "Agouti-46", "Binturong-93", "Civet-25"]
LABELS = SCALE + FIRST + SECOND + PLAIN + MULTI
MULTI_CHOSEN = [1, 3]
MATRIX_CHOSEN = [2, 0, 1]
PAIR_CHOSEN = (1, 0)

INSTRUMENT = """
Math.random = () => { throw new Error("Math.random was called"); };
"""


@pytest.fixture
def survey(db):
    survey = make_survey(make_user("olga"), title="Grid and pair", epsilon_cap=20.0)
    item = {"kind": "matrix", "options": SCALE, "epsilon": 1.0, "mechanism": "krr", "mechanism_params": {}}
    actions.do_add_matrix(survey, "How do these sound?", [{**item, "text": text} for text in ITEMS])
    first = make_question(survey, text="Which animal?", options=FIRST, epsilon=1.0)
    second = make_question(survey, text="Which burrow?", options=SECOND, epsilon=1.0)
    make_question(survey, text="Which bird?", options=PLAIN, epsilon=1.0)
    make_multi_question(survey, text="Which of these?", options=MULTI, mechanism="padding-krr", max_choices=2)
    pair = {"text": "Animal × burrow", "epsilon": 3.0, "mechanism": "krr", "mechanism_params": {}}
    actions.do_declare_pair(first, second, pair)
    actions.do_open_survey(survey)
    return survey


def test_a_matrix_and_a_declared_pair_send_only_randomized_reports(live_server, page, survey, caplog):
    caplog.set_level(logging.DEBUG)
    requests = []
    page.on("request", lambda request: requests.append(request))
    page.add_init_script(INSTRUMENT)
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")

    grid = page.locator("[data-matrix-grid]")
    rows = grid.locator("tr[data-question-id]")
    assert rows.count() == 3 and grid.locator("th[scope=row]").count() == 3
    # The grid by keyboard: one Tab stop per row, arrows move within the row only.
    rows.nth(0).locator("input[type=radio]").nth(0).focus()
    page.keyboard.press("Space")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert [rows.nth(0).locator("input").nth(i).is_checked() for i in range(3)] == [False, False, True]
    assert not any(rows.nth(1).locator("input").nth(i).is_checked() for i in range(3))
    for index, chosen in enumerate(MATRIX_CHOSEN[1:], start=1):
        rows.nth(index).locator(f"[data-option-index='{chosen}']").check()
    first = page.locator("[data-pair-role=first]")
    second = page.locator("[data-pair-role=second]")
    first.locator(f"[data-option-index='{PAIR_CHOSEN[0]}']").check()

    # Half a pair is refused before anything is randomized or sent.
    page.click("[data-submit]")
    assert "leave both empty" in page.text_content("[data-error]")
    assert not [r for r in requests if r.method == "POST"]

    second.locator(f"[data-option-index='{PAIR_CHOSEN[1]}']").check()
    multi = page.locator("[data-question-id]", has=page.locator("input[type=checkbox]"))
    for option in MULTI_CHOSEN:
        multi.locator(f"[data-option-index='{option}']").check()
    page.click("[data-submit]")
    page.wait_for_selector("[data-receipt]:not([hidden])")

    assert page.evaluate("document.querySelectorAll('input:checked').length") == 0
    storage = assert_only_the_ledger_is_stored(page)
    assert all(label not in storage for label in LABELS)
    cookies = page.context.cookies()
    assert {c["name"] for c in cookies} == {"csrftoken", f"murmur-responded-{survey.pk}"}
    posts = [r for r in requests if r.method == "POST"]
    assert len(posts) == 1
    for request in requests:
        sent = " ".join([request.url, request.post_data or "", request.headers.get("cookie", "")])
        assert not [label for label in LABELS if label in sent], request.url
    assert not [label for label in LABELS if label in caplog.text]

    body = json.loads(posts[0].post_data)
    pair = survey.questions.get(kind="pair")
    items = list(Matrix.objects.get().items.order_by("position"))
    multi_question = survey.questions.get(kind="multi_select")
    sent = {item["question"]: item for item in body["reports"]}
    # The pair's two questions: only the pair; the unanswered bird: a stand-in's report (docs/branching.md).
    bird = survey.questions.get(text="Which bird?")
    assert set(sent) == {*(i.pk for i in items), pair.pk, multi_question.pk, bird.pk}
    assert set(sent[pair.pk]["report"]) == {"value"} and 0 <= sent[pair.pk]["report"]["value"] < 6
    stored = {r.question_id: r for r in Report.objects.filter(submission=Submission.objects.get())}
    for question_id, item in sent.items():
        mechanism = stored[question_id].randomization.build_mechanism()
        assert mechanism.parse_report(item["report"]) == bytes(stored[question_id].packed)
    # The ledger counts what was spent: three items and the skipped bird at 1, the multi-select's 2 and
    # the pair's 3, not its questions' own.
    ledger = json.loads(storage)
    assert sorted(entry["epsilon"] for entry in ledger) == [1.0, 1.0, 1.0, 1.0, 2.0, 3.0]


def test_the_dashboard_shows_the_declared_pairs_cross_tab_and_a_post_hoc_one(live_server, browser, survey):
    pair = survey.questions.get(kind="pair")
    items = list(Matrix.objects.get().items.order_by("position"))
    rng = np.random.default_rng(8)
    cells = rng.choice(6, size=600, p=[0.3, 0.05, 0.05, 0.3, 0.1, 0.2])
    make_reports(pair, list(encode_pair(cells // 2, cells % 2, 2)), seed=1)
    answers = np.column_stack([rng.choice(3, size=1500, p=[0.6, 0.3, 0.1]) for _ in items])
    answers[:, 1] = np.where(rng.random(1500) < 0.7, answers[:, 0], answers[:, 1])  # related items
    make_joint_reports(items, answers, seed=2)

    organizer = browser.new_context().new_page()
    organizer.goto(f"{live_server.url}{reverse('login')}")
    organizer.fill("[name=username]", "olga")
    organizer.fill("[name=password]", PASSWORD)
    organizer.click("main button[type=submit]")
    organizer.goto(f"{live_server.url}{reverse('survey_results', args=[survey.pk])}")
    card = organizer.locator(f"#result-{pair.pk}")
    assert card.locator("svg").count() == 1 and card.locator("[data-joint] tbody tr").count() == 3
    assert card.locator("[data-marginal]").count() == 2
    matrix = organizer.locator("[data-matrix-result]")
    assert matrix.locator(".chart svg").count() == 1 and matrix.locator("[data-matrix-item]").count() == 3
    assert matrix.locator("[data-chart-legend] li").all_inner_texts() == items[0].options

    organizer.evaluate("window.stillTheSamePage = true")
    organizer.select_option("#crosstab-first", str(items[0].pk))
    organizer.select_option("#crosstab-second", str(items[1].pk))
    organizer.click("[data-crosstab-form] button[type=submit]")
    organizer.wait_for_selector("#crosstab-body [data-joint]")
    assert organizer.evaluate("window.stillTheSamePage") is True  # htmx swapped the fragment in
    # Conditional shares both ways: given each of the first item's 3 answers, then of the second's.
    assert organizer.locator("#crosstab-body [data-conditional='0'] li").count() == 3
    assert organizer.locator("#crosstab-body [data-conditional='1'] li").count() == 3
    assert organizer.locator("#crosstab-body svg").count() == 1


@pytest.mark.parametrize("width", ["desktop", "phone"])
@pytest.mark.parametrize("language", ["ko", "en"])
def test_the_new_pages_pass_axe_in_both_languages_at_both_widths(live_server, browser, survey, language, width):
    """The builder's matrix and pair cards, the answer page's grid, the dashboard's matrix and pair
    cards and a post-hoc cross-tab: axe-core, no English on Korean pages, no page wider than the window."""
    from tests.browser.test_walkthrough import AXE, WIDTHS, Checker, context_locale

    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: npm ci --prefix tests/browser (make install-dev does it)")
    if language == "ko":
        korean_words(survey)
    pair = survey.questions.get(kind="pair")
    items = list(Matrix.objects.get().items.order_by("position"))
    make_reports(pair, [0, 1, 2, 3, 4, 5] * 100, seed=1)
    make_joint_reports(items, np.tile(np.arange(3), (3, 300)).T, seed=2)
    context = browser.new_context(
        locale=context_locale(language),
        timezone_id="Asia/Seoul",
        viewport={"width": WIDTHS[width], "height": 900},
        bypass_csp=True,  # lets the test inject axe-core; the app's own CSP is tested elsewhere
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    checker = Checker(page, language, width, screenshots=False)
    base = live_server.url
    page.goto(f"{base}{reverse('respond', args=[survey.slug])}")
    checker.check("answer-grid-and-pair")
    page.goto(f"{base}{reverse('login')}")
    page.fill("[name=username]", survey.owner.username)
    page.fill("[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{base}/")
    crosstab = reverse("survey_crosstab", args=[survey.pk]) + f"?first={items[0].pk}&second={items[1].pk}"
    for name, url in [
        ("builder", reverse("survey_detail", args=[survey.pk])),
        ("dashboard", reverse("survey_results", args=[survey.pk])),
        ("crosstab", crosstab),
    ]:
        page.goto(f"{base}{url}")
        checker.check(name)
    context.close()
    assert not checker.problems, "\n".join(checker.problems)


def korean_words(survey) -> None:
    """The survey's words (and its owner's name) in Korean, so that a Korean page holds no English."""
    owner = survey.owner
    owner.username = "올가"
    owner.save(update_fields=["username"])
    survey.title = "표와 문항 쌍"
    survey.save(update_fields=["title"])
    matrix = Matrix.objects.get()
    matrix.title = "이 말들은 어떤가요?"
    matrix.save(update_fields=["title"])
    letters = "가나다라마바사"
    questions = list(survey.questions.all())
    for number, question in enumerate(questions, start=1):
        if question.kind != "pair":
            question.text = f"{number}번 문항"
            question.options = [f"{letters[i]} 선택지" for i in range(question.k)]
            question.save(update_fields=["text", "options"])
    for pair in (q for q in questions if q.kind == "pair"):
        pair.refresh_from_db()
        pair.text = "동물과 굴"
        pair.options = actions.pair_options(pair.pair_first, pair.pair_second)
        pair.save(update_fields=["text", "options"])
