"""One survey in several languages: translations in the builder, the refusal to open with a string
missing, the respondent's language (Accept-Language, the switcher), and one randomization and one
tally whatever the language, with the language never sent in the body nor stored."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from surveys import actions, languages
from surveys.models import (
    HourlyResponses,
    Matrix,
    Question,
    Report,
    Submission,
    SurveyLanguage,
    TallyDelta,
    Translation,
)
from surveys.responding.submissions import new_token
from tests.base import make_question, make_survey, stored_tally
from tests.languages import english, make_bilingual


def korean_survey(owner, **fields):
    survey = make_survey(
        owner, title="팀 분위기", description="솔직하게 답해 주세요.", thank_you="고맙습니다.", **fields
    )
    make_question(survey, text="기분이 어떤가요?", options=["좋음", "보통", "나쁨"])
    make_question(
        survey,
        text="추천하시겠어요?",
        kind="rating",
        scale="1-5",
        options=["1", "2", "3", "4", "5"],
        low_label="전혀",
        high_label="매우",
    )
    return survey


def matrix_item(text, options):
    return {
        "kind": "matrix",
        "text": text,
        "options": options,
        "epsilon": 0.5,
        "mechanism": "krr",
        "mechanism_params": {},
    }


@pytest.fixture
def bilingual(organizer):
    survey = korean_survey(organizer)
    make_bilingual(survey)
    actions.do_open_survey(survey)
    return survey


def page(client, survey, **headers):
    return client.get(reverse("respond", args=[survey.slug]), **headers)


def specs_of(response) -> str:
    return re.search(r'<script id="murmur-specs" type="application/json">(.*?)</script>', response.text, re.S)[1]


# -- the strings -----------------------------------------------------------------------------------


def test_every_string_a_respondent_reads_is_keyed_stably(organizer):
    survey = korean_survey(organizer)
    matrix = actions.do_add_matrix(
        survey, "동료 평가", [matrix_item("소통", ["예", "아니요"]), matrix_item("협업", ["예", "아니요"])]
    )
    first, rating = list(survey.questions.filter(matrix=None))
    keys = [s.key for s in languages.source_strings(survey)]
    items = list(matrix.items.all())
    assert keys == [
        "survey:title",
        "survey:description",
        "survey:thank_you",
        f"q:{first.pk}:text",
        *(f"q:{first.pk}:option:{i}" for i in range(3)),
        f"q:{rating.pk}:text",
        f"q:{rating.pk}:low_label",
        f"q:{rating.pk}:high_label",
        # the scale's points are numbers: nothing to translate
        f"m:{matrix.pk}:title",
        f"m:{matrix.pk}:option:0",
        f"m:{matrix.pk}:option:1",
        f"q:{items[0].pk}:text",
        f"q:{items[1].pk}:text",
    ]


@pytest.mark.parametrize(
    ("label", "words"), [("좋음", True), ("Very good", True), ("7", False), ("0–10", False), ("1e+06–2e+06", False)]
)
def test_only_labels_with_words_need_translating(label, words):
    assert languages.needs_translation(label) is words


def test_a_missing_translation_refuses_to_open_naming_language_and_strings(organizer):
    survey = korean_survey(organizer)
    languages.do_add_language(survey, "en", "ko")
    question = survey.questions.first()
    languages.do_save_translations(survey, "en", {"survey:title": "Team mood", f"q:{question.pk}:text": "How are you?"})
    with pytest.raises(actions.LifecycleError) as refused:
        actions.do_open_survey(survey)
    assert "English: 8 strings not translated (Description, Thank-you message, Question 1: option 1, …)" in str(
        refused.value
    )
    survey.refresh_from_db()
    assert survey.status == "draft"
    make_bilingual_rest(survey)
    actions.do_open_survey(survey)
    assert survey.status == "open"


def make_bilingual_rest(survey):
    texts = {s.key: english(s.text) for s in languages.source_strings(survey)}
    languages.do_save_translations(survey, "en", texts)


def test_editing_the_base_text_marks_its_translation_outdated(organizer):
    survey = korean_survey(organizer)
    make_bilingual(survey)
    question = survey.questions.first()
    Question.objects.filter(pk=question.pk).update(text="오늘 기분은?")
    [base, english_status] = languages.statuses(survey)
    assert (base.code, english_status.code) == ("ko", "en")
    assert [s.key for s in english_status.outdated] == [f"q:{question.pk}:text"]
    assert english_status.missing == []
    assert "English: 1 translation outdated by a later edit (Question 1)." in actions.open_problems(survey)
    languages.do_save_translations(survey, "en", {f"q:{question.pk}:text": "How is today?"})
    assert actions.open_problems(survey) == []


def test_two_options_may_not_read_the_same_in_a_translation(organizer_client, organizer):
    survey = korean_survey(organizer)
    languages.do_add_language(survey, "en", "ko")
    question = survey.questions.first()
    url = reverse("survey_translations", args=[survey.pk, "en"])
    response = organizer_client.post(url, {f"q:{question.pk}:option:0": "Good", f"q:{question.pk}:option:1": "good"})
    assert response.status_code == 200
    assert "Two options of the same question read the same." in response.text
    assert not Translation.objects.exists()


# -- the builder's pages ---------------------------------------------------------------------------


def test_the_builder_adds_a_language_and_translates_side_by_side(organizer_client, organizer):
    survey = korean_survey(organizer)
    assert "Languages" in organizer_client.get(survey.get_absolute_url()).text
    url = reverse("survey_languages", args=[survey.pk])
    response = organizer_client.post(url, {"base": "ko", "language": "en"})
    assert response.status_code == 302
    assert response["Location"] == reverse("survey_translations", args=[survey.pk, "en"])
    assert list(SurveyLanguage.objects.values_list("code", "is_base")) == [("ko", True), ("en", False)]
    page = organizer_client.get(response["Location"]).text
    assert "팀 분위기" in page and "10 strings are not translated yet." in page
    assert page.count('data-state="missing"') == 10
    assert 'lang="en"' in page
    strings = languages.source_strings(survey)
    response = organizer_client.post(response["Location"], {s.key: english(s.text) for s in strings})
    assert response.status_code == 302
    page = organizer_client.get(url).text
    assert 'data-missing="0"' in page
    assert actions.open_problems(survey) == []
    # the builder's status box names what is missing once a string is emptied again
    texts = {s.key: english(s.text) for s in strings} | {"survey:title": ""}
    organizer_client.post(reverse("survey_translations", args=[survey.pk, "en"]), texts)
    assert "English: 1 string not translated (Title)." in organizer_client.get(survey.get_absolute_url()).text


def test_a_language_cannot_be_added_twice_nor_be_the_base(organizer_client, organizer):
    survey = korean_survey(organizer)
    url = reverse("survey_languages", args=[survey.pk])
    response = organizer_client.post(url, {"base": "ko", "language": "ko"})
    assert "That is the language the survey is written in." in response.text
    assert not SurveyLanguage.objects.exists()
    organizer_client.post(url, {"base": "ko", "language": "en"})
    response = organizer_client.post(url, {"language": "en"})
    assert "The survey is already offered in English." in response.text
    response = organizer_client.post(url, {"language": "xx-not-a-language"})
    assert response.status_code == 200
    assert SurveyLanguage.objects.count() == 2


def test_removing_the_last_other_language_makes_a_one_language_survey(organizer_client, organizer):
    survey = korean_survey(organizer)
    make_bilingual(survey)
    response = organizer_client.post(reverse("survey_languages", args=[survey.pk]), {"remove": "en"})
    assert response.status_code == 302
    assert not SurveyLanguage.objects.exists() and not Translation.objects.exists()
    assert organizer_client.get(reverse("survey_translations", args=[survey.pk, "en"])).status_code == 404


# -- respondents -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accept", "expected"),
    [("en-US,en;q=0.9", "en"), ("ko-KR,ko;q=0.9,en;q=0.8", "ko"), ("fr-FR,fr;q=0.9", "ko"), ("", "ko")],
)
def test_respondents_get_their_browsers_language_else_the_base(client, bilingual, accept, expected):
    response = page(client, bilingual, HTTP_ACCEPT_LANGUAGE=accept)
    assert response.status_code == 200
    title = "EN 팀 분위기" if expected == "en" else "팀 분위기"
    assert f"<h1>{title}</h1>" in response.text
    assert f'<html lang="{expected}">' in response.text
    assert response["Content-Language"] == expected
    # Django's own strings follow
    assert ("Randomize and send" in response.text) is (expected == "en")


def test_the_switcher_links_every_language_and_marks_the_current(client, bilingual):
    response = client.get(reverse("respond", args=[bilingual.slug]) + "?lang=en", HTTP_ACCEPT_LANGUAGE="ko")
    text = response.text
    assert "<h1>EN 팀 분위기</h1>" in text
    assert '<a href="?lang=ko" hreflang="ko" lang="ko" data-survey-language >한국어</a>' in text
    assert '<a href="?lang=en" hreflang="en" lang="en" data-survey-language aria-current="page">English</a>' in text
    assert 'aria-label="Language of this survey"' in text
    # the page's next requests keep the language: receipt, transparency page, browser strings
    assert f'data-submit-url="{reverse("submit", args=[bilingual.slug])}?lang=en"' in text
    assert f'{reverse("transparency", args=[bilingual.slug])}?lang=en"' in text
    assert f"{reverse('javascript-catalog')}?lang=en&amp;v=" in text
    assert "EN 좋음" in text and "EN 전혀" in text and "EN 고맙습니다." in text


def test_a_one_language_survey_keeps_the_sites_switcher(client, organizer):
    survey = korean_survey(organizer)
    actions.do_open_survey(survey)
    text = page(client, survey).text
    assert "data-survey-language" not in text and 'action="/i18n/setlang/"' in text
    assert f'data-submit-url="{reverse("submit", args=[survey.slug])}"' in text


def test_an_incomplete_language_added_later_is_not_offered(client, bilingual):
    languages.do_add_language(bilingual, "ja", "ko")
    response = page(client, bilingual, HTTP_ACCEPT_LANGUAGE="ja")
    assert "<h1>팀 분위기</h1>" in response.text
    assert 'hreflang="ja"' not in response.text
    assert client.get(reverse("respond", args=[bilingual.slug]) + "?lang=ja").text.count("<h1>팀 분위기</h1>") == 1


def test_a_language_murmur_does_not_speak_marks_the_survey_text(client, organizer):
    survey = korean_survey(organizer)
    make_bilingual(survey, other="ja", translate=lambda text: f"JA {text}")
    actions.do_open_survey(survey)
    text = page(client, survey, HTTP_ACCEPT_LANGUAGE="ja").text
    assert '<h1 lang="ja">JA 팀 분위기</h1>' in text
    assert '<span lang="ja">JA 기분이 어떤가요?</span>' in text


def test_every_language_gets_the_same_specs_digest_and_form(client, bilingual):
    korean, english_page = (
        page(client, bilingual, HTTP_ACCEPT_LANGUAGE="ko"),
        page(client, bilingual, HTTP_ACCEPT_LANGUAGE="en"),
    )
    assert specs_of(korean) == specs_of(english_page)
    digest = re.compile(r"<code data-spec-digest>(\w+)</code>")
    assert digest.search(korean.text)[1] == digest.search(english_page.text)[1]

    def form_attributes(response):
        form = re.search(r"<form class=\"answer-form\"(.*?)>", response.text, re.S)[1]
        names = re.findall(r"(data-[\w-]+)", form)
        ignored = ("data-token", "data-csrf-token", "data-survey-title", "data-submit-url")
        return [n for n in names if n not in ignored]

    assert form_attributes(korean) == form_attributes(english_page)


def answer(survey, seed):
    """A submission body as respond.js builds it: the page's token and one report per question."""
    items = []
    for question in survey.questions.all():
        randomization = question.current_randomization()
        mechanism = randomization.build_mechanism()
        packed = mechanism.randomize(np.array([1]), rng=seed)[0].tobytes()
        items.append(
            {"question": question.pk, "version": randomization.version, "report": mechanism.unpack_report(packed)}
        )
    return {"token": new_token(survey), "reports": items}


def test_both_languages_pool_into_one_tally_and_store_no_language(bilingual):
    tables_before = set(connection.introspection.table_names())
    receipts = {}
    for language in ("ko", "en"):
        body = answer(bilingual, seed=7)
        url = reverse("submit", args=[bilingual.slug]) + f"?lang={language}"
        response = Client().post(url, json.dumps(body), content_type="application/json")
        assert response.status_code == 201, response.content
        receipts[language] = response.json()["receipt"]
        assert response["Content-Language"] == language
    assert set(connection.introspection.table_names()) == tables_before
    # the same body in both languages: the same stored reports, nothing else per submission
    packed = sorted(bytes(p) for p in Report.objects.values_list("packed", flat=True))
    assert packed[0::2] == packed[1::2]
    assert {f.name for f in Submission._meta.concrete_fields} == {"id", "survey", "received_hour", "nonce"}
    assert {f.name for f in Report._meta.concrete_fields} == {
        "id",
        "survey",
        "submission",
        "question",
        "randomization",
        "packed",
    }
    assert {f.name for f in TallyDelta._meta.concrete_fields} == {"survey", "id", "shard", "payload"}
    for row in [*Submission.objects.values(), *Report.objects.values(), *HourlyResponses.objects.values()]:
        assert not any(value in ("ko", "en") for value in row.values())
    # one randomization, one tally per question: n pools both
    for question in bilingual.questions.all():
        assert question.randomizations.count() == 1
        assert stored_tally(question.randomizations.get()).n == 2
    # receipts in the reader's language, same reports
    assert receipts["ko"][0]["text"] == "기분이 어떤가요?"
    assert receipts["en"][0]["text"] == "EN 기분이 어떤가요?"
    assert [r["stored"] for r in receipts["ko"]] == [r["stored"] for r in receipts["en"]]
    assert receipts["en"][0]["summary"].startswith("the option “EN ")
    assert "EN" not in json.dumps(receipts["ko"], ensure_ascii=False)


def test_the_cached_questions_stay_in_the_base_language(bilingual):
    for language in ("en", "ko"):
        body = answer(bilingual, seed=1)
        url = reverse("submit", args=[bilingual.slug]) + f"?lang={language}"
        receipt = Client().post(url, json.dumps(body), content_type="application/json").json()["receipt"]
    assert receipt[0]["text"] == "기분이 어떤가요?"


def test_the_transparency_page_and_browser_strings_follow_the_language(client, bilingual):
    url = reverse("transparency", args=[bilingual.slug])
    english_page = client.get(url + "?lang=en", HTTP_ACCEPT_LANGUAGE="ko").text
    assert "EN 기분이 어떤가요?" in english_page and "Randomization parameters" in english_page
    korean = client.get(url, HTTP_ACCEPT_LANGUAGE="ko").text
    assert "EN 기분" not in korean and "무작위화" in korean
    catalog = reverse("javascript-catalog")
    assert client.get(catalog + "?lang=ko", HTTP_ACCEPT_LANGUAGE="en").text != client.get(catalog).text
    assert client.get(catalog + "?lang=xx").text == client.get(catalog).text


def test_results_and_exports_keep_the_base_language(organizer_client, bilingual):
    text = organizer_client.get(bilingual.get_results_url(), HTTP_ACCEPT_LANGUAGE="en").text
    assert "기분이 어떤가요?" in text and "EN 기분이 어떤가요?" not in text


def test_a_declared_pair_and_a_matrix_read_in_the_language(client, organizer):
    survey = make_survey(organizer, title="짝")
    first = make_question(survey, text="흡연?", kind="yes_no", options=["예", "아니요"])
    second = make_question(survey, text="음주?", kind="yes_no", options=["예", "아니요"])
    actions.do_declare_pair(
        first, second, {"text": "흡연 × 음주", "epsilon": 1.0, "mechanism": "krr", "mechanism_params": {}}
    )
    actions.do_add_matrix(survey, "평가", [matrix_item("소통", ["좋음", "나쁨"])])
    make_bilingual(survey)
    actions.do_open_survey(survey)
    text = page(client, survey, HTTP_ACCEPT_LANGUAGE="en").text
    assert "EN 평가" in text and "EN 소통" in text and "EN 좋음" in text and "EN 흡연?" in text
    pair = Question.objects.get(survey=survey, pair_first__isnull=False)
    languages.localize(None, [pair], "en")
    assert pair.options[0] == "EN 예 × EN 예"
    assert Matrix.objects.get(survey=survey).title == "평가"


def test_the_demo_has_a_bilingual_survey_with_pooled_reports(client, db):
    from surveys.demo import BILINGUAL, DEMO_RESPONDENTS, load_demo
    from surveys.results.estimates import SurveyState

    loaded = load_demo()
    survey = next(s for s, _ in loaded if s.title == BILINGUAL.title)
    survey.refresh_from_db()
    assert survey.workspace is not None and survey.workspace.memberships.count() == 2
    assert languages.offered_languages(survey) == ["ko", "en"]
    assert actions.open_problems(survey) == []
    english_page = page(client, survey, HTTP_ACCEPT_LANGUAGE="en").text
    assert "Team mood survey (demo, Korean and English)" in english_page
    assert "How satisfied are you with your team?" in english_page
    state = SurveyState.read(survey)
    assert {r.n for q in state.questions for r in state.results(q) if r.n} == {DEMO_RESPONDENTS}
    assert [s for s, created in load_demo() if created] == []  # loads once


def test_a_duplicate_keeps_the_languages_and_translations(organizer):
    survey = korean_survey(organizer)
    actions.do_add_matrix(survey, "평가", [matrix_item("소통", ["좋음", "나쁨"])])
    make_bilingual(survey)
    copy = actions.do_duplicate_survey(survey)
    assert list(copy.languages.values_list("code", "is_base")) == [("ko", True), ("en", False)]
    # the copy's title ("Copy of ...") is new: its translation is outdated, the rest carries over
    assert actions.open_problems(copy) == ["English: 1 translation outdated by a later edit (Title)."]
    keys = {s.key for s in languages.source_strings(copy)}
    assert set(copy.translations.values_list("key", flat=True)) == keys
    questions = list(copy.questions.all())
    languages.localize(copy, questions, "en")
    assert [q.text for q in questions] == ["EN 기분이 어떤가요?", "EN 추천하시겠어요?", "EN 소통"]
    assert questions[2].options == ["EN 좋음", "EN 나쁨"] and questions[2].matrix.title == "EN 평가"


def test_the_apis_open_route_refuses_a_missing_translation_too(client, organizer):
    from tests.surveys.test_api import call, make_token

    survey = korean_survey(organizer)
    languages.do_add_language(survey, "en", "ko")
    token = make_token(organizer)
    response = call(client, token, "post", f"/api/v1/surveys/{survey.pk}/open")
    assert response.status_code in (400, 409, 422), response.content
    assert "English: 10 strings not translated" in response.content.decode()
    survey.refresh_from_db()
    assert survey.status == "draft"
    make_bilingual_rest(survey)
    assert call(client, token, "post", f"/api/v1/surveys/{survey.pk}/open").status_code == 200
