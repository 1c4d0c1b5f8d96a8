"""Every main page speaks Korean to a Korean browser, and none of our English is left on it.

The English left-overs are checked two ways: a list of known sentences, and every message of the
Korean catalog long enough to be unmistakable (so a page that forgets ``{% translate %}`` around a
string that the catalog does translate elsewhere fails too).
"""

from __future__ import annotations

import gettext
import json
import re
from html import unescape

import pytest
from django.conf import settings
from django.urls import reverse

from surveys.models import Survey
from tests.base import make_open_survey, make_question, make_reports, make_survey, make_user

KOREAN = {"HTTP_ACCEPT_LANGUAGE": "ko"}

KNOWN_ENGLISH = [
    "Your surveys",
    "Log in",
    "Sign up",
    "Log out",
    "A crowd's answer is heard",
    "local differential privacy",
    "Create a survey",
    "Privacy budget",
    "How your answers stay private",
    "Randomize and send",
    "responses so far",
    "Too few responses",
    "Estimated share of each option",
    "Std. error",
    "Add a question",
    "Recommend a mechanism",
    "Survey settings",
    "percentage points",
    "Someone who sees",
    "Published results",
    "Forgot your password?",
    "Already have an account?",
    # Django's own strings, translated by Django's catalog:
    "Required. 150 characters or fewer.",
    "Password confirmation",
    "Username",
]


def catalog_sentences() -> list[str]:
    """The catalog's English messages with at least four words and no placeholders or markup."""
    path = settings.LOCALE_PATHS[0] / "ko" / "LC_MESSAGES" / "django.mo"
    with open(path, "rb") as mo:
        catalog = gettext.GNUTranslations(mo)._catalog  # type: ignore[attr-defined]
    sentences = []
    for key, translation in catalog.items():
        message = key[0] if isinstance(key, tuple) else key
        if "\x04" in message or "%" in message or "<" in message or len(message.split()) < 4:
            continue
        if translation != message:  # proper names such as "Count Mean Sketch (Apple)" stay as they are
            sentences.append(message)
    return sentences


def visible_text(html: str) -> str:
    html = re.sub(r"<(script|style|svg)\b.*?</\1>", " ", html, flags=re.S)
    # Text marked up as English (a cited paper's title) is English on purpose, and says so to screen readers.
    html = re.sub(r'<(cite)\b[^>]*\blang="en"[^>]*>.*?</\1>', " ", html, flags=re.S)
    text = re.sub(r"<[^>]+>", " ", html)
    return re.sub(r"\s+", " ", unescape(text))


def korean_page(client, url: str) -> str:
    response = client.get(url, **KOREAN)
    assert response.status_code == 200, url
    html = response.content.decode()
    assert '<html lang="ko">' in html
    return html


@pytest.fixture
def results_survey(organizer):
    survey = make_open_survey(organizer, questions=2, public_results=True)
    for question in survey.questions.all():
        make_reports(question, [0, 1, 2, 0, 1] * 120)
    few = make_question(survey, text="A late question")
    make_reports(few, [0, 1, 2])
    return Survey.objects.get(pk=survey.pk)


def test_catalog_sentences_are_many_enough_to_mean_something():
    assert len(catalog_sentences()) > 60


@pytest.mark.parametrize("url_name", ["home", "login", "signup", "password_reset"])
def test_anonymous_pages_are_korean(client, db, url_name):
    html = korean_page(client, reverse(url_name))
    assert_korean_only(html)


def test_the_home_page_leads_anonymous_visitors_to_sign_up(client, db):
    html = korean_page(client, reverse("home"))
    assert "회원가입하고 설문 만들기" in html
    assert f'href="{reverse("signup")}"' in html


def test_the_home_page_leads_organizers_to_create_a_survey(organizer_client):
    html = korean_page(organizer_client, reverse("home"))
    assert "설문 만들기" in html
    assert f'href="{reverse("survey_create")}"' in html


def test_organizer_pages_are_korean(organizer_client, organizer, results_survey):
    draft = make_survey(organizer, title="Draft pulse")
    make_question(draft)
    for url in [
        reverse("survey_list"),
        reverse("survey_create"),
        reverse("survey_detail", args=[draft.pk]),
        reverse("survey_detail", args=[results_survey.pk]),
        reverse("survey_results", args=[results_survey.pk]),
        reverse("survey_results", args=[results_survey.pk]) + "?estimate=unbiased",
        reverse("question_results", args=[results_survey.pk, results_survey.questions.first().pk]),
    ]:
        assert_korean_only(korean_page(organizer_client, url), url)


def test_the_builder_speaks_korean(organizer_client, organizer):
    survey = make_survey(organizer)
    make_question(survey)
    html = korean_page(organizer_client, reverse("survey_detail", args=[survey.pk]))
    for korean in ["문항 추가", "프라이버시 예산 ε", "메커니즘 추천받기", "모든 문항에 답한 응답자가 쓰는 예산", "%p"]:
        assert korean in html


def test_the_results_dashboard_speaks_korean(organizer_client, results_survey):
    html = korean_page(organizer_client, reverse("survey_results", args=[results_survey.pk]))
    for korean in ["지금까지 응답", "선택지별 추정 비율", "표준오차", "의미 있는 추정을 하기에는 응답이 너무 적습니다"]:
        assert korean in html
    assert re.search(r"<td data-estimate>[-0-9.]+%</td>", html)  # Korean writes 12.3%, no space


def test_respondent_and_public_pages_are_korean(client, results_survey):
    answer_page = korean_page(client, reverse("respond", args=[results_survey.slug]))
    assert "내 답변이 보호되는 방식" in answer_page
    assert "무작위화해서 보내기" in answer_page
    assert_korean_only(answer_page)
    public_page = korean_page(client, reverse("public_results", args=[results_survey.slug]))
    assert "공개된 결과입니다" in public_page
    assert_korean_only(public_page)
    transparency_page = korean_page(client, reverse("transparency", args=[results_survey.slug]))
    assert "사용 중인 매개변수의 다이제스트" in transparency_page
    assert_korean_only(transparency_page)


def test_the_browser_catalog_is_korean_for_a_korean_browser(client, db):
    response = client.get(reverse("javascript-catalog"), **KOREAN)
    assert response.status_code == 200
    script = response.content.decode()
    assert json.dumps("보내기 전에 한 문항 이상 답해 주세요.") in script
    assert "selected" not in script  # the admin's catalog is not sent to respondents


def test_the_catalog_is_djangos_rendered_once_and_kept_by_browsers_under_its_version(client, organizer):
    from django.utils import translation
    from django.views.i18n import JavaScriptCatalog

    from surveys.views.catalog import catalog_src

    request = client.get("/").wsgi_request  # (its middleware activates the request's language)
    with translation.override("ko"):
        expected = JavaScriptCatalog.as_view(packages=["surveys"])(request).content
    survey = make_open_survey(organizer)
    html = client.get(reverse("respond", args=[survey.slug]), **KOREAN).content.decode()
    [src] = [unescape(s) for s in re.findall(r'<script src="([^"]+)"', html) if "lang=" in s]
    assert src == catalog_src("ko") and src.startswith(reverse("javascript-catalog") + "?lang=ko&v=")
    versioned = client.get(src, HTTP_ACCEPT_LANGUAGE="en")  # the URL, not the browser, names the language
    assert versioned.content == expected
    assert "immutable" in versioned["Cache-Control"] and "max-age=31536000" in versioned["Cache-Control"]
    # without the current version (an old page): the current catalog, never kept without asking again
    stale = client.get(reverse("javascript-catalog") + "?lang=ko&v=0000", HTTP_ACCEPT_LANGUAGE="en")
    assert stale.content == expected and "no-cache" in stale["Cache-Control"]
    again = client.get(src, HTTP_IF_NONE_MATCH=versioned["ETag"])
    assert again.status_code == 304 and again.content == b""
    english = client.get(catalog_src("en"))
    assert english.content != expected and english["ETag"] != versioned["ETag"]


def test_the_answer_page_loads_the_catalog_from_its_own_origin(client, organizer):
    survey = make_open_survey(organizer)
    html = client.get(reverse("respond", args=[survey.slug])).content.decode()
    scripts = re.findall(r'<script[^>]*src="([^"]+)"', html)
    assert any(src.startswith(reverse("javascript-catalog") + "?lang=") for src in scripts)
    assert all(src.startswith("/") and not src.startswith("//") for src in scripts)
    assert "htmx" not in html


def test_the_language_switcher_keeps_the_choice(client, db):
    html = client.get(reverse("home")).content.decode()
    assert f'action="{reverse("set_language")}"' in html
    assert re.search(r'name="language"\s+value="ko"', html)
    response = client.post(reverse("set_language"), {"language": "ko", "next": reverse("login")})
    assert response.status_code == 302
    assert response["Location"] == reverse("login")
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "ko"
    html = client.get(reverse("login")).content.decode()  # no Accept-Language: the cookie decides
    assert '<html lang="ko">' in html
    assert re.search(r'name="language"\s+value="ko"\s+lang="ko"\s+aria-current="true"', html)


def assert_korean_only(html: str, where: str = "") -> None:
    text = visible_text(html)
    assert re.search(r"[가-힣]", text), where
    left = [sentence for sentence in [*KNOWN_ENGLISH, *catalog_sentences()] if sentence in text]
    assert not left, f"English left on {where}: {left}"


def test_a_refused_submission_says_why_in_korean(client, organizer):
    survey = make_open_survey(organizer)
    response = client.post(reverse("submit", args=[survey.slug]), "not json", content_type="application/json", **KOREAN)
    assert response.status_code == 400
    assert response.json() == {"error": "제출 내용이 올바른 JSON이 아닙니다."}


def test_the_password_reset_email_is_korean_for_a_korean_browser(client, db, mailoutbox):
    make_user("dana", email="dana@example.com")
    response = client.post(reverse("password_reset"), {"email": "dana@example.com"}, **KOREAN)
    assert response.status_code == 302
    [email] = mailoutbox
    assert re.search(r"[가-힣]", email.subject)
    assert re.search(r"[가-힣]", email.body)
    assert "You're receiving this email" not in email.body
