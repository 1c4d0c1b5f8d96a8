"""“Prefer not to say”: a last option a choice question may offer, whose randomized report a skip sends.

The builder adds it (k grows by one, nothing else of the randomization changes) for single choice and
yes/no only; the answer page's spec entry names it as ``skip``, which static/ldp/branching.js sends for
a question shown and left empty (tests/js/branching.test.mjs, tests/browser/test_branching.py); the
transparency page and the answer page say so; its share is estimated, carded and exported like any
option's, counting those who chose it and those who skipped.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.urls import reverse
from django.utils import translation

from surveys import actions
from surveys.forms.question import QuestionForm
from surveys.kinds import kind_of, skip_index
from surveys.models import Question
from surveys.results.estimates import SurveyState
from tests.base import make_question, make_reports, make_survey
from tests.surveys.test_api import call, make_token
from tests.surveys.test_builder import question_data

PREFER_NOT = "Prefer not to say"


@pytest.fixture
def survey(organizer):
    return make_survey(organizer, expected_respondents=2000)


def spec_entries(html):
    return json.loads(html.split('id="murmur-specs" type="application/json">')[1].split("</script>")[0])


def test_ticking_it_adds_one_last_option_and_editing_shows_only_the_written_ones(organizer_client, survey):
    response = organizer_client.post(reverse("question_add", args=[survey.pk]), question_data(prefer_not_to_say="on"))
    assert response.status_code == 302, response.content.decode()
    question = survey.questions.get()
    assert question.prefer_not_to_say
    assert question.options == ["Apple", "Banana", "Cherry", PREFER_NOT]
    assert (question.k, question.prefer_not_index, question.written_options) == (4, 3, ["Apple", "Banana", "Cherry"])
    assert question.build_mechanism().k == 4  # in the randomized domain, at the same epsilon
    assert question.epsilon == 1.0
    edit = organizer_client.get(reverse("question_edit", args=[survey.pk, question.pk])).content.decode()
    assert "Apple\nBanana\nCherry</textarea>" in edit
    assert f'id="id_q{question.pk}_prefer_not_to_say" checked>' in edit
    assert "(also what a skip sends)" in organizer_client.get(survey.get_absolute_url()).content.decode()
    # Unticked, the option goes and k shrinks back.
    organizer_client.post(reverse("question_edit", args=[survey.pk, question.pk]), question_data())
    question.refresh_from_db()
    assert (question.options, question.prefer_not_to_say, question.prefer_not_index) == (
        ["Apple", "Banana", "Cherry"],
        False,
        None,
    )


def test_yes_no_offers_it_and_the_label_is_korean_in_korean(survey):
    with translation.override("ko"):
        form = QuestionForm(question_data(kind="yes_no", prefer_not_to_say="on"), survey=survey)
        assert form.is_valid(), form.errors
    assert form.cleaned_data["options"] == ["예", "아니요", "응답하고 싶지 않음"]
    assert form.cleaned_data["built"].k == 3


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"options_text": "Apple\nPrefer not to say"}, "options_text", "Remove “Prefer not to say” from the options"),
        ({"options_text": "\n".join(f"o{i}" for i in range(64))}, "options_text", "give at most 63 options"),
    ],
)
def test_what_does_not_fit_is_refused_with_a_sentence(survey, overrides, field, message):
    form = QuestionForm(question_data(prefer_not_to_say="on", **overrides), survey=survey)
    assert not form.is_valid()
    assert message in " ".join(form.errors[field])


@pytest.mark.parametrize(
    ("kind", "fields"),
    [("rating", {"scale": "1-5"}), ("multi_select", {"mechanism": "set-oue"}), ("numeric", {"range_low": "0"})],
)
def test_kinds_that_do_not_offer_it_ignore_the_tick(survey, kind, fields):
    data = question_data(kind=kind, prefer_not_to_say="on", **fields)
    if kind == "numeric":
        data |= {"range_high": "10", "mechanism": "laplace"}
    form = QuestionForm(data, survey=survey)
    assert form.is_valid(), form.errors
    assert form.cleaned_data["prefer_not_to_say"] is False
    assert PREFER_NOT not in form.cleaned_data["options"]
    assert not kind_of(kind).offers_prefer_not_to_say


def test_it_is_frozen_with_the_randomization(organizer_client, survey):
    question = make_question(survey, options=["Good", "Bad", PREFER_NOT], prefer_not_to_say=True)
    actions.do_open_survey(survey)
    make_reports(question, [0, 1, 2])
    url = reverse("question_edit", args=[survey.pk, question.pk])
    edit = organizer_client.get(url).content.decode()
    assert f'name="prefer_not_to_say" disabled aria-describedby="id_q{question.pk}_prefer_not_to_say_helptext"' in edit
    assert f'id="id_q{question.pk}_prefer_not_to_say" checked>' in edit
    # The builder sends no disabled checkbox: rewording keeps the option (and its wording).
    response = organizer_client.post(url, {"text": "Reworded?", "options_text": "Fine\nPoor"})
    assert response.status_code == 302, response.content.decode()
    question.refresh_from_db()
    assert (question.options, question.prefer_not_to_say) == (["Fine", "Poor", PREFER_NOT], True)
    # Turning it off (as the API would) is refused.
    form = QuestionForm(
        {"text": "x", "options_text": "Fine\nPoor", "prefer_not_to_say": False}, survey=survey, question=question
    )
    assert not form.is_valid()
    assert "randomization is frozen" in " ".join(form.errors["prefer_not_to_say"])


def test_the_answer_page_and_the_transparency_page_say_what_a_skip_sends(client, survey):
    offered = make_question(survey, text="Fruit?", options=["Apple", "Pear", PREFER_NOT], prefer_not_to_say=True)
    plain = make_question(survey, text="Mood?", options=["Good", "Bad"])
    offered.logic = {"shuffle_options": True, "keep_last": True}
    offered.save(update_fields=["logic"])
    actions.do_open_survey(survey)
    html = client.get(reverse("respond", args=[survey.slug])).content.decode()
    entries = spec_entries(html)
    assert [e.get("skip") for e in entries] == [2, None]
    assert entries[0]["spec"]["k"] == 3 and "skip" not in entries[1]
    form = html.split("data-respond-form")[1]
    assert form.count("data-prefer-not") == 1
    text = " ".join(html.split())
    assert "If you leave this question empty, your browser sends the randomized report of “Prefer not to say”" in text
    page = client.get(reverse("transparency", args=[survey.slug])).content.decode()
    assert page.count("data-skip-note") == 2
    words = " ".join(page.split())
    assert "Left empty by a respondent who sees it, it sends the randomized report of “Prefer not to say”" in words
    assert "path, or not drawn for them, it sends the randomized report of a fake answer drawn uniformly" in words
    # Both pages publish the same entries, skip included, hence the same digest.
    digest = html.split("data-spec-digest>")[1].split("<")[0]
    assert digest in page
    assert skip_index(offered) == 2 and skip_index(plain) is None


def test_a_pair_of_two_questions_offering_it_skips_to_both(organizer_client, survey):
    first = make_question(survey, text="Fruit?", options=["Apple", "Pear", PREFER_NOT], prefer_not_to_say=True)
    second = make_question(survey, text="Weekend?", kind="yes_no", options=["Yes", "No", PREFER_NOT])
    data = {"first": first.pk, "second": second.pk, "epsilon": "2", "mechanism": "krr"}
    assert organizer_client.post(reverse("pair_add", args=[survey.pk]), data).status_code == 302
    pair = survey.questions.get(kind=Question.Kind.PAIR)
    assert skip_index(pair) is None  # the second question does not offer it
    second.prefer_not_to_say = True
    second.save(update_fields=["prefer_not_to_say"])
    pair.refresh_from_db()
    assert skip_index(pair) == 8 and pair.options[8] == f"{PREFER_NOT} × {PREFER_NOT}"


def test_its_share_counts_choosers_and_skippers_in_the_card_and_the_export(organizer_client, survey):
    """400 chose Apple, 200 Pear, 100 chose "Prefer not to say" and 300 skipped (their browsers sent its
    report, as static/ldp/branching.js skipAnswer does): its share is 0.4, within 4 standard errors."""
    question = make_question(survey, options=["Apple", "Pear", PREFER_NOT], prefer_not_to_say=True, epsilon=2.0)
    actions.do_open_survey(survey)
    truth = np.array([0.4, 0.2, 0.4])
    make_reports(question, [0] * 400 + [1] * 200 + [2] * 100 + [2] * 300, seed=3)
    [result] = SurveyState.read(survey, [question]).results(question)
    estimate = result.unbiased
    assert np.all(np.abs(np.asarray(estimate.proportions) - truth) <= 4 * np.asarray(estimate.standard_errors))
    html = organizer_client.get(reverse("survey_results", args=[survey.pk])).content.decode()
    assert "data-prefer-not-note" in html
    assert "“Prefer not to say” counts the respondents who chose it and those who left the question empty" in (
        " ".join(html.split())
    )
    rows = organizer_client.get(reverse("export_estimates", args=[survey.pk, "json"])).json()["estimates"]
    shares = [r for r in rows if r["statistic"] == "share"]
    assert [(r["option"], r["prefer_not_to_say"]) for r in shares] == [
        ("Apple", False),
        ("Pear", False),
        (PREFER_NOT, True),
    ]
    csv = organizer_client.get(reverse("export_estimates", args=[survey.pk, "csv"])).content.decode("utf-8-sig")
    header = csv.splitlines()[0].split(",")
    assert header[header.index("option") + 1] == "prefer_not_to_say"


def test_a_frozen_question_takes_back_its_options_as_read_and_keeps_its_korean_label(client, organizer, survey):
    """The API lists the label last among ``options`` (tests/surveys/test_api_properties.py: a question
    read is taken back as it is); reworded with it still last, the question keeps its own label."""
    question = make_question(survey, options=["Good", "Bad", "응답하고 싶지 않음"], prefer_not_to_say=True)
    actions.do_open_survey(survey)
    make_reports(question, [0, 1, 2] * 5)
    token = make_token(organizer)
    path = f"/api/v1/surveys/{survey.pk}/questions/{question.pk}"
    read = call(client, token, "get", path).json()
    reworded = call(client, token, "patch", path, {"options": ["Fine", "Poor", read["options"][-1]]})
    assert reworded.status_code == 200, reworded.content
    assert reworded.json()["options"] == ["Fine", "Poor", "응답하고 싶지 않음"]


def test_the_label_in_the_middle_is_still_refused_through_the_api(client, organizer, survey):
    token = make_token(organizer)
    body = {"text": "Q?", "options": ["Apple", PREFER_NOT, "Banana"], "prefer_not_to_say": True}
    refused = call(client, token, "post", f"/api/v1/surveys/{survey.pk}/questions", body)
    assert refused.status_code == 422 and "options" in refused.json()["fields"]
