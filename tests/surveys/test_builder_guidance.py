"""The builder's guidance: default ε cap, budget warning, the share link
with a copy button, and a public page in plain language with keyboard-reachable tables."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from surveys.forms.survey import DEFAULT_EPSILON_CAP, SurveyForm
from tests.base import make_open_survey, make_question, make_reports, make_survey


def test_a_new_survey_starts_with_the_default_cap_and_says_why(organizer_client):
    assert SurveyForm().fields["epsilon_cap"].initial == DEFAULT_EPSILON_CAP == 5.0
    page = organizer_client.get(reverse("survey_create")).content.decode()
    assert 'name="epsilon_cap" value="5.0"' in page
    assert "beyond that, randomization protects each answer only weakly" in page


def test_an_existing_survey_keeps_its_own_cap(organizer):
    survey = make_survey(organizer, epsilon_cap=None)
    assert SurveyForm(instance=survey).initial["epsilon_cap"] is None


@pytest.mark.parametrize(("epsilons", "warned"), [((2.0, 3.0), False), ((3.0, 2.5), True)])
def test_the_budget_warns_above_the_suggested_total(organizer_client, organizer, epsilons, warned):
    survey = make_survey(organizer)
    for epsilon in epsilons:
        make_question(survey, epsilon=epsilon)
    page = organizer_client.get(survey.get_absolute_url()).content.decode()
    assert ("data-budget-warning" in page) is warned


def test_the_share_link_is_absolute_with_a_copy_button(organizer_client, organizer):
    survey = make_open_survey(organizer)
    page = organizer_client.get(survey.get_absolute_url()).content.decode()
    assert f'value="http://testserver{survey.get_share_url()}"' in page
    assert 'data-copy-target="#share-link"' in page
    assert "surveys/copy.js" in page


@pytest.fixture
def published(organizer):
    survey = make_open_survey(organizer, public_results=True)
    make_reports(survey.questions.first(), [0] * 300 + [1] * 150 + [2] * 50, seed=3)
    return survey


def test_the_public_page_speaks_plainly(client, published):
    page = client.get(reverse("public_results", args=[published.slug])).content.decode()
    sentences = re.findall(r"Between ([\d.]+ %) and ([\d.]+ %) chose “(\w+)”", page)
    assert [option for *_, option in sentences] == ["Good", "Fine", "Bad"]
    assert "randomized on the respondent's own device" in page
    # The technical table is still there, folded away, and reachable by keyboard.
    assert '<details class="method">' in page
    assert 'class="table-scroll" tabindex="0" role="region"' in page


def test_phones_get_html_bars_with_the_same_numbers(client, published):
    page = client.get(reverse("public_results", args=[published.slug])).content.decode()
    values = re.findall(r'<meter min="0" max="1" value="([-\d.e]+)">', page)
    assert len(values) == 3
    shown = re.findall(r"<td data-estimate>([^<]+)</td>", page)
    bar_texts = re.findall(r'<span class="bar-value">([^<]+) <small>', page)
    assert bar_texts == shown


class TestErrorWarning:
    """A plain warning (not a block) when the expected error is too large to read anything."""

    def card(self, organizer_client, organizer, expected, **question):
        survey = make_survey(organizer, expected_respondents=expected)
        make_question(survey, **question)
        return organizer_client.get(survey.get_absolute_url()).content.decode()

    def test_a_wide_share_band_warns_and_says_what_would_fix_it(self, organizer_client, organizer):
        page = self.card(organizer_client, organizer, 40, epsilon=0.5, options=list("ABCDEFGH"))
        assert "data-error-warning" in page
        assert "expect more respondents" in page and "raise ε" in page and "offer fewer options" in page

    def test_a_narrow_band_does_not_warn(self, organizer_client, organizer):
        page = self.card(organizer_client, organizer, 5000, epsilon=2.0, options=["A", "B"])
        assert "data-error-warning" not in page

    def test_the_respondents_needed_bring_the_band_to_ten_points(self, organizer):
        from ldp.advisor import expected_half_width
        from surveys.costs import QuestionCost

        survey = make_survey(organizer, expected_respondents=40)
        question = make_question(survey, epsilon=0.5, options=list("ABCDEFGH"))
        cost = QuestionCost(question.build_mechanism(), 40)
        assert cost.too_wide
        needed = cost.respondents_needed
        assert (
            expected_half_width(question.build_mechanism(), needed)
            <= 0.10
            < expected_half_width(question.build_mechanism(), needed - 1)
        )


def test_the_advisor_explains_its_choice_in_one_sentence(organizer_client, organizer):
    survey = make_survey(organizer, expected_respondents=1000)
    data = {"text": "Fruit?", "kind": "single", "options_text": "A\nB\nC\nD\nE", "epsilon": "1", "mechanism": "auto"}
    response = organizer_client.post(reverse("question_add", args=[survey.pk]), data)
    assert response.status_code == 302
    page = organizer_client.get(survey.get_absolute_url()).content.decode()
    sentence = re.search(r"<p data-advisor-why>([^<]+)</p>", page).group(1)
    assert sentence.startswith("Automatic picks ") and "for 5 options at ε = 1" in sentence and "ahead of" in sentence
