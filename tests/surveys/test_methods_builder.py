"""Randomized-response designs by name and questions asked directly, from the builder to the answer
page, the submission, the results and the transparency page."""

from __future__ import annotations

import json
import math
import re

import pytest
from django.urls import reverse

from surveys import actions
from surveys.models import Question, Survey
from surveys.responding.submissions import new_token
from tests.base import make_survey
from tests.surveys.test_builder import question_data as builder_data


def question_data(**overrides):
    """The builder's fields for a yes / no question by forced response (test_builder's, overridden)."""
    defaults = {"text": "Did you ever cheat on a test?", "kind": "yes_no", "options_text": ""}
    return builder_data(**{**defaults, "mechanism": "forced-response", **overrides})


@pytest.fixture
def survey(organizer):
    return make_survey(organizer)


def add(client, survey, **overrides):
    return client.post(reverse("question_add", args=[survey.pk]), question_data(**overrides))


def test_forced_response_with_boruchs_die_states_its_exact_epsilon(organizer_client, survey):
    add(organizer_client, survey, forced_yes="1/6", forced_no="1/6", epsilon="2")
    question = Question.objects.get(survey=survey)
    assert question.mechanism == "forced-response"
    assert question.mechanism_params == {"forced": ["1/6", "1/6"]}
    assert question.epsilon == pytest.approx(math.log(5), rel=1e-12)  # ln(1 + (4/6) / (1/6))


def test_a_design_without_parameters_takes_the_standard_one_at_its_epsilon(organizer_client, survey):
    add(organizer_client, survey, mechanism="warner", epsilon=str(math.log(3)))
    question = Question.objects.get(survey=survey)
    assert question.mechanism_params == {"p": "3/4"}
    assert question.build_mechanism().worst_case_log_ratio() <= question.epsilon


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"mechanism": "warner", "statement_p": "1/2"}, "statement_p"),
        ({"mechanism": "forced-response", "forced_yes": "1/2", "forced_no": "1/2"}, "forced_yes"),
        ({"mechanism": "forced-response", "forced_yes": "1/6"}, "forced_no"),
        ({"mechanism": "crosswise", "kind": "single", "options_text": "A\nB\nC"}, "mechanism"),
    ],
)
def test_it_refuses_design_parameters_that_do_not_fit(organizer_client, survey, overrides, field):
    response = add(organizer_client, survey, **overrides)
    assert not Question.objects.filter(survey=survey).exists()
    assert field in response.context["add_form"].errors


def test_a_direct_question_is_stored_as_given_with_infinite_epsilon(organizer_client, survey):
    add(organizer_client, survey, kind="single", options_text="Sales\nEngineering\nSupport", mechanism="direct")
    question = Question.objects.get(survey=survey)
    assert question.mechanism == "direct" and math.isinf(question.epsilon)
    survey.refresh_from_db()
    assert survey.total_epsilon == 0.0  # not randomized: not in the budget, counted apart


def test_a_direct_question_has_at_most_twenty_options(organizer_client, survey):
    options = "\n".join(f"Option {i}" for i in range(21))
    response = add(organizer_client, survey, kind="single", options_text=options, mechanism="direct")
    assert "mechanism" in response.context["add_form"].errors


def test_only_choice_questions_may_be_asked_directly(organizer_client, survey):
    response = add(organizer_client, survey, kind="rating", scale="1-5", mechanism="direct")
    assert "mechanism" in response.context["add_form"].errors


def open_survey(client, survey) -> Survey:
    add(client, survey, forced_yes="1/6", forced_no="1/6")
    add(client, survey, text="Department?", kind="single", options_text="Sales\nEngineering", mechanism="direct")
    actions.do_open_survey(survey)
    return survey


def test_the_answer_page_shows_the_paper_instruction_and_marks_the_direct_question(organizer_client, client, survey):
    open_survey(organizer_client, survey)
    page = client.get(reverse("respond", args=[survey.slug])).content.decode()
    assert "Forced response: your browser rolls a die for you" in page
    assert "16.67 %" in page and "66.67 %" in page  # p_yes = p_no = 1/6, truth 4/6
    assert "Asked directly: this answer is not randomized" in page
    assert "Except one question marked “asked directly”" in page  # beside "randomizes every answer"
    specs = json.loads(re.search(r'id="murmur-specs"[^>]*>(.*?)</script>', page, re.S).group(1))
    assert [s["spec"]["mechanism"] for s in specs] == ["forced-response"]  # no spec: sent as given


def submit(client, survey, answers):
    fr, direct = survey.questions.all()
    reports = [
        {"question": fr.pk, "version": fr.current_randomization().version, "report": {"value": answers[0]}},
        {"question": direct.pk, "version": direct.current_randomization().version, "report": {"value": answers[1]}},
    ]
    body = json.dumps({"token": new_token(survey), "reports": reports})
    return client.post(reverse("submit", args=[survey.slug]), body, content_type="application/json")


def test_a_submission_stores_the_direct_answer_and_says_so_in_the_receipt(organizer_client, client, survey):
    open_survey(organizer_client, survey)
    response = submit(client, survey, (0, 1))
    assert response.status_code == 201, response.content
    receipt = response.json()["receipt"]
    assert receipt[1]["epsilon"] is None
    assert "not randomized" in receipt[1]["summary"]


def test_the_transparency_page_lists_the_direct_question(organizer_client, client, survey):
    open_survey(organizer_client, survey)
    page = client.get(reverse("transparency", args=[survey.slug])).content.decode()
    assert "Asked directly: not randomized." in page
    assert "ε = 1.609" in page  # the total: the randomized question only


def test_the_builder_shows_designs_their_exact_epsilon_and_expected_error(organizer_client, survey, htmx_headers):
    add(organizer_client, survey, forced_yes="1/6", forced_no="1/6")
    add(
        organizer_client,
        survey,
        text="Department?",
        kind="single",
        options_text="Sales\nEngineering",
        mechanism="direct",
    )
    page = organizer_client.get(reverse("survey_detail", args=[survey.pk])).content.decode()
    assert "Forced response: probability of being told to answer “yes” (p_yes)" in page
    assert 'value="forced-response"' in page and 'value="direct"' in page
    assert reverse("survey_power", args=[survey.pk]) in page
    preview = organizer_client.post(
        reverse("question_cost_preview", args=[survey.pk]),
        question_data(forced_yes="1/6", forced_no="1/6"),
        **htmx_headers,
    )
    assert preview.status_code == 200
    text = preview.content.decode()
    assert "±" in text  # the expected error of each share
    assert "35.7 %" in text  # the posterior bound at ε = ln 5: 5 × 0.1 / (1 + 4 × 0.1)
    assert "1.609" in page  # the saved question's ε = ln 5, computed exactly from p_yes and p_no


def test_a_frozen_design_keeps_its_parameters(organizer_client, survey):
    from tests.base import make_reports

    add(organizer_client, survey, forced_yes="1/6", forced_no="1/6")
    question = Question.objects.get(survey=survey)
    make_reports(question, [0, 1, 0])
    url = reverse("question_edit", args=[survey.pk, question.pk])
    response = organizer_client.post(
        url, question_data(forced_yes="1/5", forced_no="1/5", epsilon=str(question.epsilon))
    )
    question.refresh_from_db()
    assert question.mechanism_params == {"forced": ["1/6", "1/6"]}
    assert "forced_yes" in response.context["form"].errors


def test_forced_response_on_a_choice_takes_one_probability_for_every_option(organizer_client, survey, client):
    add(organizer_client, survey, kind="single", options_text="A\nB\nC", forced_each="1/10")
    question = Question.objects.get(survey=survey)
    assert question.mechanism_params == {"forced": ["1/10", "1/10", "1/10"]}
    assert question.epsilon == pytest.approx(math.log(1 + 7))  # ln(1 + (7/10) / (1/10))
    actions.do_open_survey(survey)
    page = client.get(reverse("respond", args=[survey.slug])).content.decode()
    assert "With chance 70.00 % it sends your true answer" in page


def test_a_direct_question_shows_infinity_not_a_number(organizer_client, survey):
    add(organizer_client, survey, kind="single", options_text="Sales\nEngineering", mechanism="direct")
    page = organizer_client.get(reverse("survey_detail", args=[survey.pk])).content.decode()
    assert "ε = ∞" in page and "ε = inf" not in page
