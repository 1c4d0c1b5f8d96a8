"""The live cost preview and the recommend action, against ldp's analytic formulas."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from django.urls import reverse

import ldp
from ldp.advisor import recommend
from tests.base import make_question, make_reports, make_survey


@pytest.fixture
def survey(organizer):
    return make_survey(organizer, expected_respondents=1000)


def preview(client, survey, **params):
    data = {
        "text": "Q",
        "kind": "single",
        "options_text": "A\nB\nC\nD\nE",
        "epsilon": "1",
        "mechanism": "krr",
        "d": "",
        "hash_count": "512",
        "width": "128",
        **params,
    }
    return client.post(reverse("question_cost_preview", args=[survey.pk]), data, HTTP_HX_REQUEST="true")


def shown_half_width(html: str) -> float:
    return float(re.search(r"<strong data-half-width>± ([0-9.]+)</strong>", html).group(1))


@pytest.mark.parametrize(
    ("params", "mechanism"),
    [
        ({"epsilon": "1"}, ldp.make_mechanism("krr", k=5, epsilon=1.0)),
        ({"epsilon": "0.5"}, ldp.make_mechanism("krr", k=5, epsilon=0.5)),
        ({"mechanism": "dbitflip", "d": "4"}, ldp.make_mechanism("dbitflip", k=5, epsilon=1.0, d=4)),
        ({"mechanism": "cms"}, ldp.make_mechanism("cms", k=5, epsilon=1.0, hash_seed=0)),
    ],
)
def test_preview_numbers_are_ldps(organizer_client, survey, params, mechanism):
    html = preview(organizer_client, survey, **params).content.decode()
    assert "<html" not in html
    # 95 % half-width in percentage points: 1.959964 * max sd at evenly spread answers, n = 1000.
    expected = 1.959964 * np.max(np.sqrt(np.diag(mechanism.covariance(np.full(5, 0.2), 1000))))
    assert shown_half_width(html) == pytest.approx(100 * expected, abs=0.05)
    assert f"right {100 * mechanism.guess_probability():.1f} %" in html
    prior, gamma = 0.1, math.exp(mechanism.epsilon)
    posterior = gamma * prior / (1 + (gamma - 1) * prior)
    assert f"believe at most {100 * posterior:.1f} %" in html


def test_krr_preview_states_the_probability_that_the_report_is_the_answer(organizer_client, survey):
    html = preview(organizer_client, survey, epsilon="1").content.decode()
    p = math.e / (math.e + 4)
    assert f"true answer with probability {100 * p:.1f} %" in html


def test_preview_changes_with_epsilon_and_n(organizer_client, survey):
    loose = shown_half_width(preview(organizer_client, survey, epsilon="2").content.decode())
    tight = shown_half_width(preview(organizer_client, survey, epsilon="0.5").content.decode())
    assert tight > loose
    survey.expected_respondents = 4000
    survey.save()
    quarter = shown_half_width(preview(organizer_client, survey, epsilon="2").content.decode())
    assert quarter == pytest.approx(loose / 2, abs=0.1)  # error scales as 1/sqrt(n)


def test_preview_explains_an_invalid_choice(organizer_client, survey):
    html = preview(organizer_client, survey, mechanism="dbitflip", d="9").content.decode()
    assert "d cannot exceed the number of options (5)" in html
    assert "data-half-width" not in html


def test_recommend_picks_the_advisors_mechanism(organizer_client, survey, htmx_headers):
    data = {
        "text": "Q",
        "kind": "single",
        "options_text": "\n".join(f"option {i}" for i in range(10)),
        "epsilon": "1",
        "mechanism": "krr",
        "d": "",
        "hash_count": "512",
        "width": "128",
        "action": "recommend",
    }
    best = recommend(10, 1.0, 1000).best
    assert best.mechanism != "krr"  # so the form must change to show it
    response = organizer_client.post(reverse("question_add", args=[survey.pk]), data, **htmx_headers)
    html = response.content.decode()
    assert f'<option value="{best.mechanism}" selected>' in html
    assert not survey.questions.exists()  # recommending saves nothing


def test_recommend_on_an_existing_question(organizer_client, survey):
    question = make_question(survey, options=["A", "B"], epsilon=1.0, mechanism="dbitflip", mechanism_params={"d": 1})
    data = {
        "text": "Q",
        "kind": "yes_no",
        "options_text": "",
        "epsilon": "1",
        "mechanism": "dbitflip",
        "d": "1",
        "action": "recommend",
    }
    html = organizer_client.post(reverse("question_edit", args=[survey.pk, question.pk]), data).content.decode()
    assert '<option value="krr" selected>' in html
    question.refresh_from_db()
    assert question.mechanism == "dbitflip"


def question_data(**params):
    return {
        "text": "Q",
        "kind": "single",
        "options_text": "\n".join(f"option {i}" for i in range(10)),
        "epsilon": "0.5",
        "mechanism": "auto",
        "d": "",
        "hash_count": "512",
        "width": "128",
        **params,
    }


class TestAutomaticMechanism:
    def test_is_the_builders_default(self, organizer_client, survey):
        html = organizer_client.get(reverse("survey_detail", args=[survey.pk])).content.decode()
        assert '<option value="auto" selected>' in html

    def test_saves_the_advisors_mechanism_and_parameters(self, organizer_client, survey):
        response = organizer_client.post(reverse("question_add", args=[survey.pk]), question_data())
        assert response.status_code == 302
        question = survey.questions.get()
        best = recommend(10, 0.5, 1000).best
        assert question.mechanism == best.mechanism
        assert question.build_mechanism().params() == best.params
        assert question.mechanism_chosen_automatically
        html = organizer_client.get(reverse("survey_detail", args=[survey.pk])).content.decode()
        assert "chosen automatically" in html

    @pytest.mark.parametrize(("k", "epsilon"), [(5, 5.0), (10, 0.5), (2, 1.0), (40, 2.0)])
    def test_follows_the_options_and_epsilon(self, organizer_client, survey, k, epsilon):
        options = "\n".join(f"option {i}" for i in range(k))
        data = question_data(epsilon=str(epsilon), options_text=options)
        assert organizer_client.post(reverse("question_add", args=[survey.pk]), data).status_code == 302
        best = recommend(k, epsilon, survey.expected_respondents).best
        question = survey.questions.get()
        assert (question.mechanism, question.build_mechanism().params()) == (best.mechanism, best.params)

    def test_the_edit_form_shows_automatic_and_a_frozen_question_keeps_its_mechanism(self, organizer_client, survey):
        organizer_client.post(reverse("question_add", args=[survey.pk]), question_data())
        question = survey.questions.get()
        edit = reverse("question_edit", args=[survey.pk, question.pk])
        html = organizer_client.get(edit).content.decode()
        assert '<option value="auto" selected>' in html
        # Say the advisor chose k-RR when the question was saved (it would not today): once the
        # question has reports, saving it again must keep k-RR.
        question.mechanism, question.mechanism_params = "krr", {}
        question.save()
        chosen, params = question.mechanism, question.mechanism_params
        make_reports(question, [0, 1, 2], seed=1)
        assert recommend(10, 0.5, survey.expected_respondents).best.mechanism != chosen
        response = organizer_client.post(edit, question_data(text="Reworded", epsilon=""))
        assert response.status_code == 302
        question.refresh_from_db()
        assert question.text == "Reworded"
        assert (question.mechanism, question.mechanism_params) == (chosen, params)
        assert question.mechanism_chosen_automatically
