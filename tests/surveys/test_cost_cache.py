"""The builder's cost panel computes its costly figures once per mechanism parameters, not per object."""

from __future__ import annotations

import pytest
from django.urls import reverse

import ldp
from ldp.mechanisms.local_hashing import OptimalLocalHashing
from surveys import costs
from tests.base import make_survey


@pytest.fixture
def figures(monkeypatch):
    """An empty figure cache, and a count of OLH guess probabilities actually computed."""
    monkeypatch.setattr(costs, "_FIGURES", {})
    calls = []
    original = OptimalLocalHashing.guess_probability

    def counted(self):
        calls.append(self)
        return original(self)

    monkeypatch.setattr(OptimalLocalHashing, "guess_probability", counted)
    return calls


def preview(client, survey, **params):
    data = {"text": "Q", "kind": "single", "options_text": "A\nB\nC\nD\nE\nF", "epsilon": "1", "mechanism": "olh"}
    return client.post(reverse("question_cost_preview", args=[survey.pk]), {**data, **params}, HTTP_HX_REQUEST="true")


def test_two_requests_building_equal_mechanisms_share_one_entry(organizer_client, organizer, figures):
    survey = make_survey(organizer, expected_respondents=1000)
    first = preview(organizer_client, survey).content.decode()
    entries = dict(costs._FIGURES)
    second = preview(organizer_client, survey).content.decode()
    assert len(figures) == 1  # two mechanisms built, one guess probability computed
    assert entries == costs._FIGURES
    assert first == second
    preview(organizer_client, survey, epsilon="2")
    assert len(figures) == 2  # other parameters, another entry


def test_the_key_is_the_parameters_not_the_object():
    one, other = (ldp.make_mechanism("olh", k=6, epsilon=1.0) for _ in range(2))
    assert one is not other
    assert costs.figure_key(one, "guess_probability") == costs.figure_key(other, "guess_probability")
    assert costs.figure_key(one, "half_width", 100) != costs.figure_key(one, "half_width", 200)
    wider = ldp.make_mechanism("olh", k=6, epsilon=1.0, range_size=5)
    assert costs.figure_key(one, "guess_probability") != costs.figure_key(wider, "guess_probability")
    assert costs.figure_key(one, "guess_probability") != costs.figure_key(
        ldp.make_mechanism("krr", k=6, epsilon=1.0), "guess_probability"
    )
