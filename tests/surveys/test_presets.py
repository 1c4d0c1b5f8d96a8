"""Templates: ready questions for sensitive topics fill the builder's form, in Korean and English."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import translation

from surveys.forms.question import QuestionForm
from surveys.presets import PRESETS
from tests.base import make_survey


@pytest.fixture
def survey(organizer):
    return make_survey(organizer, epsilon_cap=5.0, expected_respondents=500)


@pytest.mark.parametrize("preset", PRESETS, ids=lambda preset: preset.key)
@pytest.mark.parametrize("language", ["en", "ko"])
def test_every_template_makes_a_valid_question_with_its_epsilon_and_mechanism(survey, preset, language):
    with translation.override(language):
        form = QuestionForm({**preset.initial(), "weight": "1"}, survey=survey)
        assert form.is_valid(), form.errors
    cleaned = form.cleaned_data
    assert (cleaned["epsilon"], cleaned["mechanism"]) == (preset.epsilon, preset.mechanism)
    assert not cleaned["planned_epsilon"]


def test_every_template_is_translated():
    for preset in PRESETS:
        with translation.override("en"):
            english = [str(preset.title), str(preset.text), str(preset.reason), *map(str, preset.options)]
        with translation.override("ko"):
            korean = [str(preset.title), str(preset.text), str(preset.reason), *map(str, preset.options)]
        assert all(a != b for a, b in zip(english, korean, strict=True)), preset.key


def test_the_builder_fills_the_add_form_from_a_template(organizer_client, survey, htmx_headers):
    page = organizer_client.get(survey.get_absolute_url()).content.decode()
    assert 'name="preset"' in page and "Salary band" in page
    url = reverse("question_preset", args=[survey.pk])
    html = organizer_client.get(url, {"preset": "salary"}, **htmx_headers).content.decode()
    assert "<html" not in html and 'id="add-question"' in html
    assert "What is your annual salary before tax?" in html and "120,000 or more" in html
    assert "data-preset-reason" in html and "Bands, not an exact number" in html
    assert organizer_client.get(url, {"preset": "nope"}).status_code == 404
    assert survey.questions.count() == 0  # nothing is saved until the organizer adds it
