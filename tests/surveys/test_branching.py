"""Branching in the app: the builder's conditions and path preview, the answer page's logic, and a
submission that must carry one report for every question (ldp.branching)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.urls import reverse

from surveys import actions
from surveys.models import Question, Submission
from surveys.responding.submissions import new_token
from tests.base import make_number_question, make_question, make_survey


@pytest.fixture
def survey(organizer):
    survey = make_survey(organizer, title="Branches")
    make_question(survey, text="Do you cycle?", kind="yes_no", options=["Yes", "No"])
    make_question(survey, text="How far?", options=["Near", "Middle", "Far"], mechanism="oue")
    make_question(survey, text="Rate the paths", kind="rating", scale="1-5", options=["1", "2", "3", "4", "5"])
    return survey


def questions(survey):
    return list(survey.questions.all())


def test_a_condition_is_saved_from_the_builder_and_previewed(organizer_client, survey):
    first, second, third = questions(survey)
    url = reverse("question_logic", args=[survey.pk, second.pk])
    response = organizer_client.post(url, {"source": first.pk, "options": [f"{first.pk}:0"]})
    assert response.status_code == 302
    second.refresh_from_db()
    assert second.logic == {"show_if": {"question": first.pk, "in": [0]}}
    page = organizer_client.get(survey.get_absolute_url())
    html = page.content.decode()
    assert "data-path-preview" in html
    assert html.count("data-path>") == 2
    assert "Shown only when question 1 is “Yes”." in html


def test_a_range_condition_on_a_rating_and_a_shuffle(organizer_client, survey):
    first, second, third = questions(survey)
    organizer_client.post(
        reverse("question_logic", args=[survey.pk, second.pk]),
        {"source": third.pk, "low": 4, "high": 5, "shuffle_options": "on", "keep_last": "on"},
    )
    second.refresh_from_db()
    assert second.logic == {}  # a condition may only test an earlier question
    organizer_client.post(
        reverse("question_logic", args=[survey.pk, third.pk]),
        {"source": first.pk, "options": [f"{first.pk}:1"]},
    )
    organizer_client.post(
        reverse("question_logic", args=[survey.pk, second.pk]),
        {"shuffle_options": "on", "keep_last": "on"},
    )
    second.refresh_from_db()
    third.refresh_from_db()
    assert third.logic == {"show_if": {"question": first.pk, "in": [1]}}
    assert second.logic == {"shuffle_options": True, "keep_last": True}


def test_a_range_needs_a_question_that_has_values(organizer_client, survey):
    first, second, third = questions(survey)
    Question.objects.filter(pk=third.pk).update(position=0)  # the rating now comes first
    response = organizer_client.post(
        reverse("question_logic", args=[survey.pk, second.pk]), {"source": third.pk, "low": 4, "high": 5}
    )
    assert response.status_code == 302
    second.refresh_from_db()
    assert second.logic == {"show_if": {"question": third.pk, "between": [4.0, 5.0]}}
    response = organizer_client.post(
        reverse("question_logic", args=[survey.pk, second.pk]), {"source": third.pk, "low": 5, "high": 1}
    )
    second.refresh_from_db()
    assert second.logic["show_if"]["between"] == [4.0, 5.0]  # unchanged


def test_a_number_decides_through_a_range_and_the_preview_says_so(organizer_client, organizer):
    survey = make_survey(organizer, title="Ages")
    age = make_number_question(survey, text="Your age?", lo=0, hi=100)
    school = make_question(survey, text="Which school?", options=["Day", "Evening"])
    url = reverse("question_logic", args=[survey.pk, school.pk])
    organizer_client.post(url, {"source": age.pk, "options": [f"{age.pk}:0"]})
    school.refresh_from_db()
    assert school.logic == {}  # a number offers no options to pick
    organizer_client.post(url, {"source": age.pk, "low": 18, "high": 30.5})
    school.refresh_from_db()
    assert school.logic == {"show_if": {"question": age.pk, "between": [18.0, 30.5]}}
    html = organizer_client.get(survey.get_absolute_url()).content.decode()
    assert html.count("data-path>") == 2
    assert "question 1 lies from 18 to 30.5" in html


def test_someone_else_cannot_change_the_logic(client, survey):
    from tests.base import PASSWORD, make_user

    make_user("mallory")
    client.login(username="mallory", password=PASSWORD)
    first, second, _third = questions(survey)
    response = client.post(
        reverse("question_logic", args=[survey.pk, second.pk]), {"source": first.pk, "options": [f"{first.pk}:0"]}
    )
    assert response.status_code == 404


def test_the_answer_page_carries_the_logic_and_says_skips_send_a_report(client, survey):
    first, second, _third = questions(survey)
    second.logic = {"show_if": {"question": first.pk, "in": [0]}, "shuffle_options": True, "keep_last": False}
    second.save(update_fields=["logic"])
    actions.do_open_survey(survey)
    html = client.get(reverse("respond", args=[survey.slug])).content.decode()
    logic = json.loads(html.split('id="murmur-logic" type="application/json">')[1].split("</script>")[0])
    assert logic == {str(second.pk): second.logic}
    assert "every question sends a randomized report" in html


def reports_for(survey, answers):
    items = []
    for question, answer in zip(survey.questions.all(), answers, strict=True):
        randomization = question.current_randomization()
        mechanism = randomization.build_mechanism()
        packed = mechanism.randomize(np.array([answer]), rng=1)[0].tobytes()
        items.append(
            {"question": question.pk, "version": randomization.version, "report": mechanism.unpack_report(packed)}
        )
    return items


def test_a_submission_must_carry_every_question(client, survey):
    actions.do_open_survey(survey)
    url = reverse("submit", args=[survey.slug])
    full = reports_for(survey, [0, 1, 2])
    partial = {"token": new_token(survey), "reports": full[:2]}
    response = client.post(url, json.dumps(partial), content_type="application/json")
    assert response.status_code == 400
    assert "one report for every question" in response.json()["error"]
    assert not Submission.objects.exists()
    # Trailing spaces (the browser pads the body) are fine.
    body = json.dumps({"token": new_token(survey), "reports": full}) + " " * 100
    response = client.post(url, body, content_type="application/json")
    assert response.status_code == 201, response.content
    assert len(response.json()["receipt"]) == 3


def test_a_random_order_block_is_saved(organizer_client, survey):
    first, second, third = questions(survey)
    for question in (second, third):
        organizer_client.post(reverse("question_logic", args=[survey.pk, question.pk]), {"block": " opinions "})
        question.refresh_from_db()
        assert question.logic == {"block": "opinions"}


def test_a_duplicate_keeps_its_conditions_on_its_own_questions(survey):
    first, second, _third = questions(survey)
    second.logic = {"show_if": {"question": first.pk, "in": [0]}, "shuffle_options": True, "keep_last": False}
    second.save(update_fields=["logic"])
    copy = actions.do_duplicate_survey(survey)
    copied = list(copy.questions.all())
    assert copied[1].logic == {
        "show_if": {"question": copied[0].pk, "in": [0]},
        "shuffle_options": True,
        "keep_last": False,
    }


def test_the_crosstab_with_the_deciding_question_shows_shares_among_those_asked(organizer_client, organizer):
    from tests.base import make_joint_reports

    survey = make_survey(organizer, title="Asked")
    first = make_question(survey, text="Cycle?", kind="yes_no", options=["Yes", "No"], epsilon=4.0)
    second = make_question(survey, text="How far?", options=["Near", "Far"], epsilon=4.0)
    second.logic = {"show_if": {"question": first.pk, "in": [0]}}
    second.save(update_fields=["logic"])
    actions.do_open_survey(survey)
    rng = np.random.default_rng(2)
    yes = rng.random(4000) < 0.4
    far = rng.random(4000) < 0.25  # among those asked: 75 % near, 25 % far
    answers = np.column_stack([np.where(yes, 0, 1), np.where(yes, far.astype(int), rng.integers(0, 2, 4000))])
    make_joint_reports([first, second], answers, seed=3)
    url = reverse("survey_crosstab", args=[survey.pk]) + f"?first={first.pk}&second={second.pk}"
    html = organizer_client.get(url).content.decode()
    assert "data-among-asked" in html and "Among those who were asked" in html
    assert html.count("data-among-row") == 2
    page = " ".join(html.split())
    asked = float(page.split("Share asked: ")[1].split(" ")[0])
    assert 35 <= asked <= 45  # 40 % were asked
    reverse_url = reverse("survey_crosstab", args=[survey.pk]) + f"?first={second.pk}&second={first.pk}"
    assert "data-among-asked" not in organizer_client.get(reverse_url).content.decode()
