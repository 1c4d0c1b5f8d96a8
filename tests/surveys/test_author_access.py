"""Every organizer URL, walked as its owner, another organizer and an anonymous visitor."""

from __future__ import annotations

import pytest
from django.urls import reverse

from surveys import urls
from surveys.models import Matrix
from tests.base import make_question, make_survey

# Every view of the organizers' modules except sign-up (results readers' access is in test_results).
ORGANIZER_MODULES = {
    "surveys.views.author",
    "surveys.views.blocks",
    "surveys.views.budget",
    "surveys.views.presets",
    "surveys.views.invitations",
    "surveys.views.preview",
}
ORGANIZER_URLS = sorted(
    p.name for p in urls.urlpatterns if p.callback.__module__ in ORGANIZER_MODULES and p.name != "signup"
)


def url_for(name: str, survey, question, matrix) -> str:
    kwargs = {}
    route = next(p for p in urls.urlpatterns if p.name == name).pattern
    if "survey_id" in route.converters:
        kwargs["survey_id"] = survey.pk
    if "question_id" in route.converters:
        kwargs["question_id"] = question.pk
    if "matrix_id" in route.converters:
        kwargs["matrix_id"] = matrix.pk
    return reverse(name, kwargs=kwargs)


@pytest.fixture
def owned(organizer):
    survey = make_survey(organizer)
    return survey, make_question(survey), Matrix.objects.create(survey=survey, title="Grid")


def test_the_url_list_covers_every_organizer_view():
    assert len(ORGANIZER_URLS) == 27


@pytest.mark.parametrize("name", ORGANIZER_URLS)
@pytest.mark.parametrize("method", ["get", "post"])
def test_it_sends_anonymous_visitors_to_log_in(client, owned, name, method):
    response = getattr(client, method)(url_for(name, *owned))
    assert response.status_code in (302, 405)
    if response.status_code == 302:
        assert response.url.startswith(reverse("login"))


@pytest.mark.parametrize("name", [n for n in ORGANIZER_URLS if n not in ("survey_list", "survey_create")])
@pytest.mark.parametrize("method", ["get", "post"])
def test_it_hides_surveys_from_other_organizers(client, owned, other_organizer, name, method):
    client.force_login(other_organizer)
    response = getattr(client, method)(url_for(name, *owned))
    assert response.status_code in (404, 405)
    survey, question, matrix = owned
    survey.refresh_from_db()
    question.refresh_from_db()
    assert survey.status == "draft"
    assert survey.questions.count() == 1 and Matrix.objects.filter(pk=matrix.pk).exists()


@pytest.mark.parametrize("name", [n for n in ORGANIZER_URLS if n not in ("survey_list", "survey_create")])
def test_it_hides_surveys_from_staff_in_the_builder(client, owned, staff, name):
    # Staff see every survey through Django admin, not through another organizer's builder.
    client.force_login(staff)
    assert client.get(url_for(name, *owned)).status_code in (404, 405)


def test_the_survey_list_shows_only_ones_own_surveys(client, owned, other_organizer):
    make_survey(other_organizer, title="Bob's secret survey")
    client.force_login(other_organizer)
    response = client.get(reverse("survey_list"))
    assert b"Bob&#x27;s secret survey" in response.content
    assert b"Team pulse" not in response.content


def test_the_owner_reaches_the_builder(organizer_client, owned):
    survey, *_ = owned
    assert organizer_client.get(reverse("survey_detail", args=[survey.pk])).status_code == 200
