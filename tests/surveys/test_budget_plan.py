"""The survey's budget plan: the total is split over the questions, and adding one re-plans the others."""

from __future__ import annotations

import pytest
from django.urls import reverse

from surveys import budget_panel
from surveys.budget import Unit, split
from surveys.models import Survey
from tests.base import make_question, make_reports, make_survey


def add(client, survey, **fields):
    """Add a question as the builder's form posts it, with its defaults (a planned share)."""
    data = {
        "text": "Which fruit?",
        "kind": "single",
        "options_text": "Apple\nBanana\nCherry",
        "budget": "plan",
        "weight": "1",
        "epsilon": "1.0",
        "mechanism": "auto",
        "hash_count": "512",
        "width": "128",
        "action": "save",
        **fields,
    }
    return client.post(reverse("question_add", args=[survey.pk]), data)


@pytest.fixture
def survey(organizer_client):
    # Created as a new organizer would: the form's defaults (a total of 5, 1000 respondents).
    data = {"title": "Pulse", "expected_respondents": "1000", "epsilon_cap": "5"}
    organizer_client.post(reverse("survey_create"), data)
    return Survey.objects.get(title="Pulse")


def test_the_split_gives_each_planned_unit_its_weights_share_of_what_fixed_ones_leave():
    plan = split(5.0, [Unit(1), Unit(2, weight=2.0), Unit(3, fixed=1.0)])
    assert plan.epsilons == {1: pytest.approx(4 / 3, abs=1e-4), 2: pytest.approx(8 / 3, abs=1e-4)}
    assert plan.feasible and plan.spent <= 5.0
    assert not split(1.0, [Unit(1), Unit(2, fixed=0.995)]).feasible  # 0.005 is below the smallest ε
    assert split(None, [Unit(1, weight=2.0)]).epsilons == {1: 2.0}


def test_ten_default_questions_share_the_default_total_and_the_survey_opens(organizer_client, survey):
    for i in range(10):
        response = add(organizer_client, survey, text=f"Question {i + 1}")
        assert response.status_code == 302, response.content.decode()[:2000]
    epsilons = [q.epsilon for q in survey.questions.all()]
    assert epsilons == [0.5] * 10
    assert all(q.planned_epsilon for q in survey.questions.all())
    organizer_client.post(reverse("survey_open", args=[survey.pk]))
    survey.refresh_from_db()
    assert survey.status == "open"


def test_adding_a_question_re_plans_the_others_and_automatic_chooses_again(organizer_client, survey):
    add(organizer_client, survey, text="One")
    assert survey.questions.get().epsilon == 5.0
    add(organizer_client, survey, text="Two", weight="4")
    one, two = survey.questions.all()
    assert (one.epsilon, two.epsilon) == (1.0, 4.0)
    assert one.mechanism_chosen_automatically and two.budget_weight == 4.0
    organizer_client.post(reverse("question_delete", args=[survey.pk, two.pk]))
    one.refresh_from_db()
    assert one.epsilon == 5.0


def test_a_matrix_counts_each_row_and_a_pair_counts_once(organizer_client, survey):
    add(organizer_client, survey, text="Fruit?", options_text="Apple\nBanana")
    add(organizer_client, survey, text="Weekend?", options_text="Yes\nNo")
    organizer_client.post(
        reverse("matrix_add", args=[survey.pk]),
        {"title": "Rate", "items_text": "A\nB\nC", "options_text": "Low\nHigh", "budget": "plan", "mechanism": "auto"},
    )
    assert sorted(q.epsilon for q in survey.questions.all()) == [1.0] * 5
    fruit, weekend = survey.questions.filter(matrix=None)
    response = organizer_client.post(
        reverse("pair_add", args=[survey.pk]),
        {"first": fruit.pk, "second": weekend.pk, "budget": "plan", "mechanism": "auto"},
    )
    assert response.status_code == 302
    pair = survey.questions.get(kind="pair")
    rows = survey.questions.filter(kind="matrix")
    assert pair.epsilon == 1.25 and all(row.epsilon == 1.25 for row in rows)
    assert survey.total_epsilon == pytest.approx(5.0)


def test_a_fixed_epsilon_over_the_total_is_refused_with_what_raising_it_means(organizer_client, survey):
    add(organizer_client, survey, text="Planned")
    response = add(organizer_client, survey, text="Fixed", budget="fixed", epsilon="5")
    page = response.content.decode()
    assert response.status_code == 200 and survey.questions.count() == 1
    assert "total in the budget panel" in page and "times likelier" in page
    add(organizer_client, survey, text="Fixed", budget="fixed", epsilon="2")
    assert [q.epsilon for q in survey.questions.all()] == [3.0, 2.0]


def test_raising_the_total_in_the_panel_re_plans(organizer_client, survey):
    add(organizer_client, survey, text="One")
    add(organizer_client, survey, text="Two")
    url = reverse("budget_save", args=[survey.pk])
    organizer_client.post(url, {"plan-epsilon_cap": "8", "plan-expected_respondents": "50"})
    survey.refresh_from_db()
    assert (survey.epsilon_cap, survey.expected_respondents) == (8.0, 50)
    assert [q.epsilon for q in survey.questions.all()] == [4.0, 4.0]


def test_the_preview_shows_each_questions_error_at_a_draft_total_without_saving(organizer_client, survey, htmx_headers):
    add(organizer_client, survey, text="Fruit?")
    url = reverse("budget_preview", args=[survey.pk])
    html = organizer_client.post(
        url, {"plan-epsilon_cap": "1", "plan-expected_respondents": "20"}, **htmx_headers
    ).content.decode()
    assert "<html" not in html and "data-plan-half-width" in html
    assert "With 20 respondents and a total of ε = 1" in html
    survey.refresh_from_db()
    assert (survey.epsilon_cap, survey.expected_respondents) == (5.0, 1000)


def test_the_panels_error_is_the_questions_own_cost(organizer_client, survey):
    add(organizer_client, survey, text="Fruit?")
    question = survey.questions.get()
    panel = budget_panel.panel(survey)
    (row,) = panel.rows
    from surveys.forms.question import question_cost

    assert row.relative_half_width == pytest.approx(question_cost(question).half_width)


def test_opening_a_survey_whose_every_estimate_is_too_wide_asks_to_confirm(organizer_client, organizer):
    survey = make_survey(organizer, epsilon_cap=1.0, expected_respondents=15)
    make_question(survey, epsilon=1.0)
    page = organizer_client.get(survey.get_absolute_url()).content.decode()
    assert "data-unreadable-ok" in page and "more than ± 25 points" in page
    organizer_client.post(reverse("survey_open", args=[survey.pk]))
    survey.refresh_from_db()
    assert survey.status == "draft"
    organizer_client.post(reverse("survey_open", args=[survey.pk]), {"unreadable_ok": "1"})
    survey.refresh_from_db()
    assert survey.status == "open"


def test_a_small_audience_gets_concrete_changes(organizer, organizer_client):
    survey = make_survey(organizer, epsilon_cap=5.0, expected_respondents=20)
    for i in range(5):
        make_question(survey, text=f"Q{i}", options=["a", "b", "c", "d", "e"], epsilon=1.0)
    panel = budget_panel.panel(survey)
    assert "With 20 respondents" in panel.headline
    advice = " ".join(panel.advice)
    assert "as a yes/no question" in advice
    assert "Raise the total to ε =" in advice and "times likelier" in advice


def test_questions_with_reports_keep_their_epsilon(organizer, organizer_client):
    from surveys import actions

    survey = make_survey(organizer, epsilon_cap=4.0)
    first = make_question(survey, text="Answered", planned_epsilon=True)
    make_question(survey, text="Second", planned_epsilon=True)
    actions.do_open_survey(survey)
    first.refresh_from_db()
    make_reports(first, [0, 1, 2])
    make_question(survey, text="Third", planned_epsilon=True)
    assert [q.epsilon for q in survey.questions.all()] == [2.0, 1.0, 1.0]
    second = survey.questions.get(text="Second")
    assert second.current_randomization().epsilon == 1.0  # open: the new share is in force


def test_the_panel_says_what_the_total_means_for_respondents(organizer_client, survey, htmx_headers):
    add(organizer_client, survey, text="Fruit?")
    html = organizer_client.post(
        reverse("budget_preview", args=[survey.pk]),
        {"plan-epsilon_cap": "8", "plan-expected_respondents": "100"},
        **htmx_headers,
    ).content.decode()
    assert "at most about 3,000 times likelier" in html  # e^8 = 2981


def test_the_form_says_what_epsilon_the_plan_gives_a_new_question(organizer_client, survey, htmx_headers):
    add(organizer_client, survey, text="One")
    data = {"text": "Two", "kind": "yes_no", "budget": "plan", "weight": "1", "mechanism": "auto"}
    html = organizer_client.post(
        reverse("question_cost_preview", args=[survey.pk]), data, **htmx_headers
    ).content.decode()
    assert "This question spends ε = 2.5." in html


def five_questions_of_four_options(client, survey, total, respondents):
    """The builder's panel after adding five planned four-option questions and saving the total and audience."""
    for i in range(5):
        add(client, survey, text=f"Q{i + 1}", options_text="A\nB\nC\nD")
    client.post(
        reverse("budget_save", args=[survey.pk]),
        {"plan-epsilon_cap": total, "plan-expected_respondents": respondents},
    )
    survey.refresh_from_db()
    return budget_panel.panel(survey)


def test_question_sampling_is_offered_where_it_narrows_every_band_and_keeps_its_word(organizer_client, survey):
    """At a total of 1 over five four-option questions (ε = 0.2 each) asking each respondent one of them
    at ε = 1 narrows every band (k-RR's variance grows like 1 / ε² at a low ε): the advice says so,
    with the numbers the panel then shows once the organizer sets the sampling up."""
    panel = five_questions_of_four_options(organizer_client, survey, total="1", respondents="1000")
    offer = budget_panel.sampling_offer(panel)
    assert offer is not None and (offer.m, offer.numbers) == (1, (1, 2, 3, 4, 5))
    assert offer.sampled < offer.now == pytest.approx(max(row.relative_half_width for row in panel.rows))
    line = "Ask each respondent 1 of questions 1, 2, 3, 4, 5, drawn at random"
    assert any(line in advice and "± 45 points instead of ± 47" in advice for advice in panel.advice)
    assert line in organizer_client.get(survey.get_absolute_url()).content.decode()

    ids = [str(q.pk) for q in survey.questions.all()]
    organizer_client.post(reverse("survey_sampling", args=[survey.pk]), {"questions": ids, "size": "1"})
    sampled = budget_panel.panel(Survey.objects.get(pk=survey.pk))
    assert sampled.pool is not None and sampled.pool.m == 1
    assert [row.epsilon for row in sampled.rows] == [1.0] * 5
    assert max(row.sampled_half_width for row in sampled.rows) == pytest.approx(offer.sampled)
    assert all(row.sampling_wins for row in sampled.rows)
    assert budget_panel.sampling_offer(sampled) is None  # already sampling
    assert not any("drawn at random" in advice for advice in sampled.advice)


def test_question_sampling_is_not_offered_where_asking_everyone_is_more_precise(organizer_client, survey):
    """At ε = 2 per question sampling loses: from 100 respondents each band is ± 11 points (advice is given)
    but a share m / 5 of them at 5 ε / m each is wider for every m, so no sampling is suggested."""
    panel = five_questions_of_four_options(organizer_client, survey, total="10", respondents="100")
    assert [row.epsilon for row in panel.rows] == [2.0] * 5 and panel.advice
    assert budget_panel.sampling_offer(panel) is None
    assert not any("drawn at random" in advice for advice in panel.advice)
    ids = [str(q.pk) for q in survey.questions.all()]
    for m in range(1, 5):
        organizer_client.post(reverse("survey_sampling", args=[survey.pk]), {"questions": ids, "size": str(m)})
        sampled = budget_panel.panel(Survey.objects.get(pk=survey.pk))
        assert sampled.pool is not None and sampled.pool.m == m
        assert not any(row.sampling_wins for row in sampled.rows)
