"""The survey builder: creating surveys, adding, editing, reordering and deleting questions."""

from __future__ import annotations

import pytest
from django.urls import reverse

from surveys.models import Question, Survey
from tests.base import make_question, make_reports, make_survey


def question_data(**overrides):
    return {
        "text": "Which fruit?",
        "kind": "single",
        "options_text": "Apple\nBanana\nCherry",
        "epsilon": "1.0",
        "mechanism": "krr",
        "d": "",
        "hash_count": "512",
        "width": "128",
        "action": "save",
        **overrides,
    }


@pytest.fixture
def survey(organizer):
    return make_survey(organizer)


def add_url(survey):
    return reverse("question_add", args=[survey.pk])


def edit_url(question):
    return reverse("question_edit", args=[question.survey_id, question.pk])


def test_it_creates_a_survey_owned_by_the_organizer(organizer_client, organizer):
    response = organizer_client.post(
        reverse("survey_create"), {"title": "Pulse", "description": "", "expected_respondents": "800"}
    )
    survey = Survey.objects.get()
    assert response.url == reverse("survey_detail", args=[survey.pk])
    assert survey.owner == organizer
    assert survey.status == "draft"
    assert len(survey.slug) >= 22


def test_it_adds_a_question_and_returns_only_fragments_to_htmx(organizer_client, survey, htmx_headers):
    response = organizer_client.post(add_url(survey), question_data(), **htmx_headers)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html
    assert 'id="add-question"' in html
    # Adding re-plans the others' budget: the whole list comes out of band, with the new card.
    assert '<ol id="questions" class="questions" hx-swap-oob="true">' in html
    assert 'id="budget"' in html and 'hx-swap-oob="true"' in html
    question = survey.questions.get()
    assert question.options == ["Apple", "Banana", "Cherry"]
    assert (question.epsilon, question.mechanism, question.mechanism_params) == (1.0, "krr", {})


def test_it_adds_a_question_without_javascript(organizer_client, survey):
    response = organizer_client.post(add_url(survey), question_data())
    assert response.status_code == 302
    assert survey.questions.count() == 1


def test_yes_no_questions_get_two_options(organizer_client, survey):
    organizer_client.post(add_url(survey), question_data(kind="yes_no", options_text=""))
    assert survey.questions.get().options == ["Yes", "No"]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"epsilon": "0"}, "greater than or equal to 0.01"),
        ({"epsilon": "11"}, "less than or equal to 10"),
        ({"epsilon": "abc"}, "Enter a number"),
        ({"options_text": "Apple\napple"}, "appears twice"),
        ({"options_text": "Apple"}, "between 2 and 64 options"),
        ({"options_text": "\n  \n"}, "between 2 and 64 options"),
        ({"options_text": "\n".join(f"o{i}" for i in range(65))}, "between 2 and 64 options"),
        ({"mechanism": "dbitflip", "d": "4"}, "d cannot exceed the number of options (3)"),
        ({"mechanism": "dbitflip", "d": "0"}, "greater than or equal to 1"),
        ({"mechanism": "cms", "width": "1"}, "greater than or equal to 2"),
        ({"mechanism": "cms", "hash_count": "5000"}, "less than or equal to 1024"),
        ({"mechanism": "nonsense"}, "Select a valid choice"),
        ({"mechanism": "rappor"}, "This estimate needs a mechanism for choices"),
        ({"text": ""}, "This field is required"),
    ],
)
def test_it_refuses_invalid_questions_and_says_why(organizer_client, survey, htmx_headers, overrides, message):
    response = organizer_client.post(add_url(survey), question_data(**overrides), **htmx_headers)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert response["HX-Retarget"] == "#add-question"
    assert not survey.questions.exists()


def test_dbitflip_defaults_d_to_the_number_of_options(organizer_client, survey):
    organizer_client.post(add_url(survey), question_data(mechanism="dbitflip"))
    assert survey.questions.get().mechanism_params == {"d": 3}


def test_cms_keeps_its_knobs_and_a_working_hash_seed(organizer_client, survey):
    organizer_client.post(add_url(survey), question_data(mechanism="cms", hash_count="64", width="32"))
    params = survey.questions.get().mechanism_params
    assert params["hash_count"] == 64
    assert params["width"] == 32
    survey.questions.get().build_mechanism()  # the seed tells the options apart


def test_it_edits_a_question_in_place(organizer_client, survey, htmx_headers):
    question = make_question(survey)
    form = organizer_client.get(edit_url(question), **htmx_headers)
    assert "<form" in form.content.decode() and "<html" not in form.content.decode()
    response = organizer_client.post(
        edit_url(question), question_data(text="Reworded", epsilon="2.5", mechanism="dbitflip", d="2"), **htmx_headers
    )
    assert response.status_code == 200
    question.refresh_from_db()
    assert (question.text, question.epsilon, question.mechanism_params) == ("Reworded", 2.5, {"d": 2})
    assert f'id="question-{question.pk}"' in response.content.decode()


class TestFrozenParameters:
    @pytest.fixture
    def question(self, survey):
        question = make_question(survey, options=["Good", "Fine", "Bad"])
        make_reports(question, [0, 1, 2])
        return question

    @pytest.mark.parametrize(
        ("field", "value"),
        [("epsilon", "2.0"), ("mechanism", "cms"), ("kind", "yes_no")],
    )
    def test_it_refuses_changes_to_the_randomization(self, organizer_client, question, field, value):
        response = organizer_client.post(
            edit_url(question), question_data(options_text="Good\nFine\nBad", **{field: value})
        )
        assert response.status_code == 200
        assert "randomization is frozen" in response.content.decode()
        question.refresh_from_db()
        assert (question.epsilon, question.mechanism, question.kind) == (1.0, "krr", "single")

    def test_it_refuses_a_different_number_of_options(self, organizer_client, question):
        response = organizer_client.post(edit_url(question), question_data(options_text="Good\nFine"))
        assert "number of options is frozen at 3" in response.content.decode()
        question.refresh_from_db()
        assert question.options == ["Good", "Fine", "Bad"]

    def test_it_allows_rewording(self, organizer_client, question):
        data = question_data(text="How is it going?", options_text="Great\nOkay\nPoor")
        for name in ("epsilon", "mechanism", "kind", "d", "hash_count", "width"):
            data.pop(name)  # the browser does not send disabled inputs
        response = organizer_client.post(edit_url(question), data)
        assert response.status_code == 302
        question.refresh_from_db()
        assert question.text == "How is it going?"
        assert question.options == ["Great", "Okay", "Poor"]
        assert question.randomizations.count() == 1

    def test_the_form_shows_the_freeze(self, organizer_client, question, htmx_headers):
        html = organizer_client.get(edit_url(question), **htmx_headers).content.decode()
        assert "are frozen" in html
        assert "Recommend a mechanism" not in html

    def test_it_refuses_to_delete_a_question_with_reports(self, organizer_client, question):
        organizer_client.post(reverse("question_delete", args=[question.survey_id, question.pk]))
        assert Question.objects.filter(pk=question.pk).exists()


def test_it_deletes_and_renumbers_questions(organizer_client, survey, htmx_headers):
    first, second, third = (make_question(survey, text=t) for t in "ABC")
    response = organizer_client.post(reverse("question_delete", args=[survey.pk, second.pk]), **htmx_headers)
    assert response.status_code == 200
    assert [(q.text, q.position) for q in survey.questions.all()] == [("A", 0), ("C", 1)]


def test_it_reorders_questions(organizer_client, survey, htmx_headers):
    first, second, third = (make_question(survey, text=t) for t in "ABC")

    def move(question, direction, **headers):
        url = reverse("question_move", args=[survey.pk, question.pk])
        return organizer_client.post(url, {"direction": direction}, **headers)

    response = move(third, "up", **htmx_headers)
    assert 'id="questions"' in response.content.decode()
    assert [q.text for q in survey.questions.all()] == ["A", "C", "B"]
    move(first, "up")  # already first
    move(first, "down")
    assert [q.text for q in survey.questions.all()] == ["C", "A", "B"]
    move(first, "sideways")
    assert [q.text for q in survey.questions.all()] == ["C", "A", "B"]


class TestBudget:
    def test_it_enforces_the_cap_when_adding(self, organizer_client, survey):
        survey.epsilon_cap = 2.0
        survey.save()
        make_question(survey, epsilon=1.5)
        response = organizer_client.post(add_url(survey), question_data(epsilon="1.0"))
        assert "over its total of 2" in response.content.decode()
        assert survey.questions.count() == 1
        organizer_client.post(add_url(survey), question_data(epsilon="0.5"))
        assert survey.questions.count() == 2

    def test_it_enforces_the_cap_when_editing(self, organizer_client, survey):
        survey.epsilon_cap = 2.0
        survey.save()
        question = make_question(survey, epsilon=1.0)
        make_question(survey, epsilon=1.0)
        response = organizer_client.post(edit_url(question), question_data(epsilon="1.5"))
        assert "ε = 2.5, over its total of 2" in response.content.decode()

    def test_a_cap_below_the_current_total_is_refused(self, organizer_client, survey):
        make_question(survey, epsilon=1.0)
        make_question(survey, epsilon=2.0)
        response = organizer_client.post(
            reverse("survey_settings", args=[survey.pk]),
            {"title": "T", "expected_respondents": "100", "epsilon_cap": "2"},
        )
        assert "already spend ε = 3" in response.content.decode()
        survey.refresh_from_db()
        assert survey.epsilon_cap is None

    def test_the_page_shows_the_total_epsilon(self, organizer_client, survey):
        make_question(survey, epsilon=1.0)
        make_question(survey, epsilon=0.25)
        html = organizer_client.get(reverse("survey_detail", args=[survey.pk])).content.decode()
        assert "<span data-total-epsilon>1.25</span>" in html


def test_settings_save_in_place_and_tell_previews_to_refresh(organizer_client, survey, htmx_headers):
    response = organizer_client.post(
        reverse("survey_settings", args=[survey.pk]),
        {"title": "Renamed", "expected_respondents": "2500", "epsilon_cap": "4"},
        **htmx_headers,
    )
    assert response["HX-Trigger"] == "surveySettingsChanged"
    assert "<html" not in response.content.decode()
    survey.refresh_from_db()
    assert (survey.title, survey.expected_respondents, survey.epsilon_cap) == ("Renamed", 2500, 4.0)


def test_it_deletes_a_survey(organizer_client, survey):
    response = organizer_client.post(reverse("survey_delete", args=[survey.pk]))
    assert response.url == reverse("survey_list")
    assert not Survey.objects.exists()


def test_adding_the_first_question_enables_opening_in_place(organizer_client, survey, htmx_headers):
    page = organizer_client.get(reverse("survey_detail", args=[survey.pk])).content.decode()
    assert "Add at least one question." in page
    html = organizer_client.post(add_url(survey), question_data(), **htmx_headers).content.decode()
    lifecycle = html[html.index('id="lifecycle"') :]
    assert 'hx-swap-oob="true"' in lifecycle[: lifecycle.index(">")]
    assert "Add at least one question." not in html


def test_the_live_preview_targets_itself_not_the_form(organizer_client, survey):
    html = organizer_client.get(reverse("survey_detail", args=[survey.pk])).content.decode()
    preview = html[html.index('class="cost-live"') :]
    assert 'hx-target="this"' in preview[: preview.index(">")]


def test_every_element_id_on_the_builder_is_unique(organizer_client, survey):
    # A label must focus its own field: the matrix, pair, settings, budget and an open editor's
    # forms sit beside the form that adds a question, with fields of the same names.
    import re
    from collections import Counter

    question = make_question(survey, text="Fruit?")
    make_question(survey, text="Weekend?", options=["Yes", "No"])
    for url in (survey.get_absolute_url(), edit_url(question)):
        html = organizer_client.get(url).content.decode()
        assert 'id="id_q' in html or url == survey.get_absolute_url()
        repeated = [i for i, n in Counter(re.findall(r'\sid="([^"]+)"', html)).items() if n > 1]
        assert not repeated, repeated


def test_the_builder_says_which_mechanisms_change_before_the_survey_recurs(organizer_client, survey):
    question = make_question(survey, text="Fruit?", mechanism_chosen_automatically=True)
    html = organizer_client.get(survey.get_absolute_url()).content.decode()
    assert "data-recurring-changes" in html
    assert "“Fruit?”: k-RR (randomized response) → dBitFlip (Microsoft)" in html
    organizer_client.post(reverse("survey_recurrence", args=[survey.pk]), {"recurrence": "manual"})
    question.refresh_from_db()
    assert question.mechanism == "dbitflip"  # what the builder said
    assert "data-recurring-changes" not in organizer_client.get(survey.get_absolute_url()).content.decode()


def test_one_expected_respondent_is_singular(organizer_client, organizer):
    survey = make_survey(organizer, expected_respondents=1)
    make_question(survey)
    html = organizer_client.get(survey.get_absolute_url()).content.decode()
    assert "with 1 respondent (" in html and "1 respondents" not in html
