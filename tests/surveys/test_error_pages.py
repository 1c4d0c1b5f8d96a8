"""403, 404, 500 and CSRF-failure pages: styled, in the visitor's language, and saying nothing internal."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import get_resolver, reverse
from django.utils import translation

from tests.base import make_survey
from tests.surveys.error_urls import SECRET

KOREAN = {"HTTP_ACCEPT_LANGUAGE": "ko"}


def assert_styled(html: str) -> None:
    assert "surveys/murmur.css" in html
    assert 'class="error-page"' in html
    assert "Traceback" not in html
    assert SECRET not in html


@pytest.mark.django_db
@pytest.mark.parametrize(("headers", "heading"), [({}, "Page not found"), (KOREAN, "페이지를 찾을 수 없습니다")])
def test_a_missing_url_gets_the_styled_404(client, headers, heading):
    response = client.get("/no-such-page/", **headers)
    assert response.status_code == 404
    html = response.content.decode()
    assert_styled(html)
    assert heading in html


def test_another_organizers_survey_is_a_plain_404_naming_nothing(organizer_client, other_organizer):
    survey = make_survey(other_organizer, title="Bob's secret plans")
    response = organizer_client.get(reverse("survey_detail", args=[survey.pk]))
    assert response.status_code == 404
    assert "Bob's secret plans" not in response.content.decode()
    assert_styled(response.content.decode())


@pytest.mark.django_db
@pytest.mark.urls("tests.surveys.error_urls")
@pytest.mark.parametrize(("headers", "heading"), [({}, "Not allowed"), (KOREAN, "권한이 없습니다")])
def test_a_forbidden_action_gets_the_styled_403_without_its_reason(client, headers, heading):
    response = client.get("/test-403/", **headers)
    assert response.status_code == 403
    html = response.content.decode()
    assert_styled(html)
    assert heading in html


@pytest.mark.django_db
@pytest.mark.urls("tests.surveys.error_urls")
@pytest.mark.parametrize(("headers", "heading"), [({}, "Something went wrong"), (KOREAN, "문제가 생겼습니다")])
def test_an_unhandled_error_gets_the_styled_500_without_the_exception(client, headers, heading):
    client.raise_request_exception = False
    response = client.get("/test-500/", **headers)
    assert response.status_code == 500
    html = response.content.decode()
    assert_styled(html)
    assert heading in html
    assert "RuntimeError" not in html


@pytest.mark.parametrize(("language", "heading"), [("en", "Something went wrong"), ("ko", "문제가 생겼습니다")])
def test_handler500_renders_in_the_active_language_without_a_database_or_user(rf, language, heading):
    handler = get_resolver().resolve_error_handler(500)
    with translation.override(language):
        response = handler(rf.get("/"))
    assert response.status_code == 500
    assert heading in response.content.decode()
    assert f'<html lang="{language}">' in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize(("headers", "heading"), [({}, "The form expired"), (KOREAN, "양식이 만료되었습니다")])
def test_a_post_without_a_csrf_token_gets_the_styled_csrf_page(headers, heading):
    client = Client(enforce_csrf_checks=True)
    response = client.post(reverse("login"), {"username": "alice", "password": "x"}, **headers)
    assert response.status_code == 403
    html = response.content.decode()
    assert_styled(html)
    assert heading in html
    assert "CSRF cookie not set" not in html  # Django's reason stays in the log
    assert "csrf_failure" not in html


@pytest.mark.django_db
@pytest.mark.urls("tests.surveys.error_urls")
@pytest.mark.parametrize(
    ("url", "status", "heading"),
    [("/no-such-page/", 404, "페이지를 찾을 수 없습니다"), ("/test-500/", 500, "문제가 생겼습니다")],
)
def test_under_debug_too_the_pages_are_styled_and_translated(client, settings, url, status, heading):
    # ``make run`` serves with DEBUG on: no technical page listing the URLs, no traceback on the page.
    settings.DEBUG = True
    client.raise_request_exception = False
    response = client.get(url, **KOREAN)
    assert response.status_code == status
    html = response.content.decode()
    assert_styled(html)
    assert heading in html and "urlpatterns" not in html and "URLconf" not in html
