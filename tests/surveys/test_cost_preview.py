"""The live cost preview and the recommend action, against ldp's analytic formulas."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from django.urls import reverse

import ldp
from ldp.advisor import recommend
from tests.base import make_question, make_survey


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
    return client.get(reverse("question_cost_preview", args=[survey.pk]), data, HTTP_HX_REQUEST="true")


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
