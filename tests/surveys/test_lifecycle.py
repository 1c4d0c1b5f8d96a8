"""Draft -> open -> closed -> reopened, share links, and what opening freezes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from surveys import actions
from surveys.responding.writes import record_submissions
from tests.base import make_question, make_reports, make_survey


@pytest.fixture
def survey(organizer):
    return make_survey(organizer)


def open_survey(client, survey, **headers):
    return client.post(reverse("survey_open", args=[survey.pk]), **headers)


def test_a_survey_without_questions_cannot_open(organizer_client, survey):
    response = organizer_client.post(reverse("survey_open", args=[survey.pk]), follow=True)
    assert "Add at least one question." in response.content.decode()
    survey.refresh_from_db()
    assert survey.status == "draft"


def test_a_survey_over_its_cap_cannot_open(organizer_client, survey):
    make_question(survey, epsilon=3.0)
    survey.epsilon_cap = 2.0
    survey.save()
    assert "over the cap of 2" in " ".join(actions.open_problems(survey))
    open_survey(organizer_client, survey)
    survey.refresh_from_db()
    assert survey.status == "draft"


def test_a_survey_whose_close_date_has_passed_cannot_open(organizer_client, survey):
    make_question(survey)
    survey.closes_at = timezone.now() - timedelta(minutes=1)
    survey.save()
    open_survey(organizer_client, survey)
    survey.refresh_from_db()
    assert survey.status == "draft"


def test_opening_freezes_one_randomization_per_question(organizer_client, survey, htmx_headers):
    first = make_question(survey, mechanism="dbitflip", mechanism_params={"d": 2})
    second = make_question(survey, kind="yes_no", options=["Yes", "No"])
    response = open_survey(organizer_client, survey, **htmx_headers)
    assert response["HX-Redirect"] == reverse("survey_detail", args=[survey.pk])
    survey.refresh_from_db()
    assert survey.status == "open"
    assert survey.opened_at is not None
    assert [(r.version, r.mechanism, r.k, r.params) for r in first.randomizations.all()] == [
        (1, "dbitflip", 3, {"d": 2})
    ]
    assert [(r.version, r.mechanism, r.k) for r in second.randomizations.all()] == [(1, "krr", 2)]


def test_editing_an_open_question_without_reports_makes_a_new_version(survey):
    question = make_question(survey)
    actions.do_open_survey(survey)
    actions.do_update_question(
        question,
        {
            "text": "T",
            "kind": "single",
            "options": ["A", "B", "C"],
            "epsilon": 2.0,
            "mechanism": "krr",
            "mechanism_params": {},
        },
    )
    assert [(r.version, r.epsilon) for r in question.randomizations.all()] == [(1, 1.0), (2, 2.0)]
    assert question.current_randomization().version == 2


def test_close_and_reopen(organizer_client, survey):
    make_question(survey)
    open_survey(organizer_client, survey)
    organizer_client.post(reverse("survey_close", args=[survey.pk]))
    survey.refresh_from_db()
    assert survey.status == "closed"
    assert not survey.accepting_responses()
    response = organizer_client.post(reverse("survey_close", args=[survey.pk]), follow=True)
    assert "Only an open survey can be closed." in response.content.decode()
    open_survey(organizer_client, survey)
    survey.refresh_from_db()
    assert survey.status == "open"


def test_reopening_keeps_the_frozen_randomization(survey):
    question = make_question(survey)
    actions.do_open_survey(survey)
    make_reports(question, [0, 1])
    actions.do_close_survey(survey)
    actions.do_open_survey(survey)
    assert question.randomizations.count() == 1


def test_an_open_survey_shows_its_share_link_and_qr_code(organizer_client, survey):
    make_question(survey)
    draft_page = organizer_client.get(reverse("survey_detail", args=[survey.pk])).content.decode()
    assert "data-share-link" not in draft_page
    open_survey(organizer_client, survey)
    html = organizer_client.get(reverse("survey_detail", args=[survey.pk])).content.decode()
    assert f"http://testserver/s/{survey.slug}/" in html
    assert "<svg" in html


def test_share_links_are_unguessable_and_unique(organizer):
    slugs = {make_survey(organizer).slug for _ in range(20)}
    assert len(slugs) == 20
    assert all(len(slug) >= 22 for slug in slugs)  # 16 random bytes


def test_drafts_are_not_shared(client, survey):
    assert client.get(reverse("respond", args=[survey.slug])).status_code == 404


def test_the_close_date_and_response_limit_stop_responses(survey):
    make_question(survey)
    actions.do_open_survey(survey)
    assert survey.accepting_responses()
    survey.closes_at = timezone.now() + timedelta(hours=1)
    assert survey.accepting_responses()
    assert not survey.accepting_responses(now=timezone.now() + timedelta(hours=2))
    survey.response_limit = 2
    record_submissions(survey, [None])
    assert survey.accepting_responses()
    record_submissions(survey, [None])
    assert not survey.accepting_responses()
