"""The builder's preview (exactly the answer page, storing nothing) and "duplicate survey"."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.urls import reverse

import ldp
from surveys.models import Invitation, Question, Randomization, Report, Submission, Survey, TallyCell
from surveys.responding import invitations
from tests.base import make_open_survey, make_question, make_reports, make_survey


@pytest.fixture
def draft(organizer):
    survey = make_survey(organizer, title="Draft pulse", epsilon_cap=4.0)
    make_question(survey, text="Fruit?", options=["Apple", "Banana", "Cherry"], mechanism="oue")
    make_question(survey, text="Cycle?", kind="yes_no", options=["Yes", "No"])
    return survey


def stored_rows():
    return [m.objects.count() for m in (Submission, Report, TallyCell, Randomization)]


def preview_reports(page_html):
    specs = json.loads(page_html.split('id="murmur-specs" type="application/json">')[1].split("</script>")[0])

    reports = []
    for entry in specs:
        spec = entry["spec"]
        question = Question.objects.get(pk=entry["question"])
        mechanism = ldp.make_mechanism(
            question.mechanism, k=question.k, epsilon=question.epsilon, **question.mechanism_params
        )
        assert mechanism.client_spec() == spec
        packed = mechanism.randomize(np.array([0]), rng=1)[0].tobytes()
        reports.append(
            {"question": entry["question"], "version": entry["version"], "report": mechanism.unpack_report(packed)}
        )
    return reports


def test_the_preview_is_the_answer_page_and_stores_nothing(organizer_client, draft):
    before = stored_rows()
    page = organizer_client.get(reverse("survey_preview", args=[draft.pk])).content.decode()
    assert "data-preview" in page and "Fruit?" in page and "Cherry" in page
    assert reverse("survey_preview_check", args=[draft.pk]) in page
    reports = preview_reports(page)
    response = organizer_client.post(
        reverse("survey_preview_check", args=[draft.pk]),
        json.dumps({"token": "preview", "reports": reports}),
        content_type="application/json",
    )
    assert response.status_code == 200
    assert [r["stored"] for r in response.json()["receipt"]] == [r["report"] for r in reports]
    assert stored_rows() == before == [0, 0, 0, 0]
    draft.refresh_from_db()
    assert draft.status == Survey.Status.DRAFT


def test_a_malformed_preview_report_is_refused_like_a_real_one(organizer_client, draft):
    question = draft.questions.first()
    response = organizer_client.post(
        reverse("survey_preview_check", args=[draft.pk]),
        json.dumps({"token": "preview", "reports": [{"question": question.pk, "version": 0, "report": {"bits": [7]}}]}),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "malformed" in response.json()["error"]


def test_only_the_owner_previews(client, other_organizer, draft):
    client.force_login(other_organizer)
    assert client.get(reverse("survey_preview", args=[draft.pk])).status_code == 404
    assert (
        client.post(reverse("survey_preview_check", args=[draft.pk]), "{}", content_type="application/json").status_code
        == 404
    )


def test_duplicate_copies_settings_and_questions_but_no_reports_or_invitations(organizer_client, organizer):
    survey = make_open_survey(organizer, questions=2, epsilon_cap=3.0, expected_respondents=321, invite_only=True)
    make_reports(survey.questions.first(), [0, 1, 2, 1])
    invitations.create_links(survey, "https://murmur.test/s/x/", 2)
    response = organizer_client.post(reverse("survey_duplicate", args=[survey.pk]))
    copy = Survey.objects.exclude(pk=survey.pk).get()
    assert response.url == copy.get_absolute_url()
    assert copy.title == f"Copy of {survey.title}"
    assert (copy.status, copy.owner, copy.epsilon_cap, copy.expected_respondents, copy.invite_only) == (
        Survey.Status.DRAFT,
        organizer,
        3.0,
        321,
        True,
    )
    assert copy.slug != survey.slug
    fields = ["text", "kind", "options", "epsilon", "mechanism", "mechanism_params", "position"]
    assert list(copy.questions.values_list(*fields)) == list(survey.questions.values_list(*fields))
    assert not Report.objects.filter(question__survey=copy).exists()
    assert not Randomization.objects.filter(question__survey=copy).exists()
    assert not Invitation.objects.filter(survey=copy).exists()
    assert Report.objects.filter(question__survey=survey).count() == 4  # the original is untouched


def test_only_the_owner_duplicates(client, other_organizer, draft):
    client.force_login(other_organizer)
    assert client.post(reverse("survey_duplicate", args=[draft.pk])).status_code == 404
    assert Survey.objects.count() == 1
