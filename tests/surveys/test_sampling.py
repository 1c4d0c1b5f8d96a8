"""Question sampling in the app (surveys.sampling): the builder's pool, the plan's epsilon', the answer
page's promise, the results corrected for fake reports, and what the transparency page states."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.urls import reverse

from surveys import actions
from surveys.models import Survey
from surveys.results.estimates import SurveyState, compute_estimates
from surveys.sampling import QuestionSample, pool_of
from tests.base import make_question, make_reports, make_survey, stored_tally


@pytest.fixture
def survey(organizer):
    survey = make_survey(organizer, title="Pool", epsilon_cap=2.0, expected_respondents=4000)
    make_question(survey, text="Always asked", kind="yes_no", options=["Yes", "No"], planned_epsilon=True)
    for text in ("First pooled", "Second pooled", "Third pooled"):
        make_question(survey, text=text, options=["A", "B", "C", "D"], planned_epsilon=True)
    return survey


def ids(survey):
    return [q.pk for q in survey.questions.all()]


def sample(client, survey, pooled, m):
    return client.post(reverse("survey_sampling", args=[survey.pk]), {"questions": pooled, "size": m})


def test_the_builder_saves_a_pool_and_the_plan_gives_it_epsilon_prime(organizer_client, survey):
    always, *pooled = ids(survey)
    page = organizer_client.get(survey.get_absolute_url()).content.decode()
    assert 'id="sampling"' in page and "id_sampling_size" in page
    assert sample(organizer_client, survey, pooled, 1).status_code == 302
    survey = Survey.objects.get(pk=survey.pk)
    assert pool_of(survey) is not None and pool_of(survey).questions == tuple(pooled)
    # epsilon' = (2 - 0) / (1 + 1): the always-asked question and m = 1 pooled one share the total.
    epsilons = {q.pk: q.epsilon for q in survey.questions.all()}
    assert epsilons[always] == pytest.approx(1.0) and all(epsilons[q] == pytest.approx(1.0) for q in pooled)
    assert survey.total_epsilon == pytest.approx(2.0)
    panel = organizer_client.get(survey.get_absolute_url()).content.decode()
    assert panel.count("data-sampled-half-width") == 3 and "data-split-half-width" in panel
    assert "data-sampling-state" in panel
    # m = 2: each pooled question gets 2 / 3.
    sample(organizer_client, survey, pooled, 2)
    survey = Survey.objects.get(pk=survey.pk)
    assert {q.pk: q.epsilon for q in survey.questions.all()}[pooled[0]] == pytest.approx(0.6666, abs=1e-4)
    assert survey.total_epsilon <= 2.0 + 1e-9


@pytest.mark.parametrize(
    ("picked", "m", "message"),
    [
        (slice(1, 2), 1, "at least two questions"),
        (slice(1, 4), 3, "from 1 to 2"),
        (slice(1, 4), None, "from 1 to 2"),
    ],
)
def test_the_builder_refuses_a_pool_that_samples_nothing(organizer_client, survey, picked, m, message):
    response = sample(organizer_client, survey, ids(survey)[picked], "" if m is None else m)
    assert response.status_code == 302
    assert not QuestionSample.objects.filter(survey=survey).exists()
    assert message in organizer_client.get(survey.get_absolute_url()).content.decode()


def test_a_question_with_a_fixed_epsilon_or_a_condition_cannot_be_pooled(organizer_client, survey):
    always, first, second, third = survey.questions.all()
    third.planned_epsilon = False
    third.save(update_fields=["planned_epsilon"])
    sample(organizer_client, survey, [first.pk, second.pk, third.pk], 1)
    assert not QuestionSample.objects.filter(survey=survey).exists()
    organizer_client.post(
        reverse("question_logic", args=[survey.pk, first.pk]), {"source": always.pk, "options": [f"{always.pk}:0"]}
    )
    sample(organizer_client, survey, [first.pk, second.pk], 1)
    assert not QuestionSample.objects.filter(survey=survey).exists()  # not a choice: refused by the form


def test_a_pooled_question_takes_and_decides_no_condition(organizer_client, survey):
    always, first, second, third = survey.questions.all()
    sample(organizer_client, survey, [first.pk, second.pk, third.pk], 1)
    organizer_client.post(
        reverse("question_logic", args=[survey.pk, second.pk]), {"source": always.pk, "options": [f"{always.pk}:0"]}
    )
    second.refresh_from_db()
    assert "show_if" not in second.logic


def test_the_answer_page_promises_the_sampled_total_and_says_so(client, survey):
    always, *pooled = ids(survey)
    QuestionSample.objects.create(survey=survey, questions=pooled, size=1)
    actions.replan_budget(survey)
    actions.do_open_survey(survey)
    html = client.get(survey.get_share_url()).content.decode()
    promise = json.loads(html.split('id="murmur-promise" type="application/json">')[1].split("</script>")[0])
    assert promise["sampling"] == {"questions": pooled, "m": 1}
    assert promise["total"] == pytest.approx(2.0)
    assert "data-sampling-note" in html
    transparency = client.get(reverse("transparency", args=[survey.slug])).content.decode()
    assert "data-sampling-guarantee" in transparency and transparency.count("data-sampled-question") == 3
    # The guarantee in figures: the whole response at the total counting 1 of the pool (1 + 1, not
    # 1 + 3 x 1), each really answered pooled question's report at epsilon' = 1.
    words = " ".join(transparency.split())
    assert "Total privacy budget of the parameters in force: ε = 2." in words
    assert "asked 1 of 3 questions" in words and "the whole response is ε-LDP for the total above" in words
    assert "sampled question really answered is ε-LDP for ε = 1." in words


def test_results_correct_for_the_fakes_and_say_the_question_was_sampled(organizer_client, survey):
    always, *pooled = ids(survey)
    QuestionSample.objects.create(survey=survey, questions=pooled, size=1)
    actions.replan_budget(survey)
    actions.do_open_survey(survey)
    question = survey.questions.get(pk=pooled[0])
    rng = np.random.default_rng(5)
    n, shares = 6000, np.array([0.55, 0.25, 0.15, 0.05])
    truth = rng.choice(4, size=n, p=shares)
    asked = rng.random(n) < 1 / 3
    make_reports(question, list(np.where(asked, truth, rng.integers(0, 4, size=n))), seed=6)
    (result,) = SurveyState.read(Survey.objects.get(pk=survey.pk)).results(question)
    assert result.sampled == (1, 3)
    # Unbiased for the shares of every respondent's answers; the analytic band holds them within 4 SE.
    estimate = result.unbiased
    assert np.all(np.abs(estimate.proportions - shares) <= 4 * estimate.standard_errors)
    # Uncorrected, the first share would be pulled toward 1/4: E = 0.55 / 3 + 0.25 * 2 / 3 = 0.35.
    plain = compute_estimates(result.mechanism, stored_tally(result.randomization)).unbiased
    assert abs(plain.proportions[0] - 0.35) <= 4 * plain.standard_errors[0]
    assert abs(estimate.proportions[0] - 0.55) <= 4 * estimate.standard_errors[0]
    page = organizer_client.get(reverse("survey_results", args=[survey.pk])).content.decode()
    assert "data-sampled" in page


def test_sampling_is_frozen_once_the_survey_has_reports_and_copied_with_it(organizer_client, survey):
    always, *pooled = ids(survey)
    QuestionSample.objects.create(survey=survey, questions=pooled, size=1)
    actions.do_open_survey(survey)
    make_reports(survey.questions.get(pk=always), [0, 1, 0])
    sample(organizer_client, survey, [], "")
    assert QuestionSample.objects.get(survey=survey).size == 1
    assert "data-sampling-frozen" in organizer_client.get(survey.get_absolute_url()).content.decode()
    copy = actions.do_duplicate_survey(survey)
    copied = pool_of(copy)
    assert copied is not None and copied.m == 1 and copied.questions == tuple(ids(copy)[1:])


def test_strangers_cannot_change_a_surveys_sampling(client, survey):
    from tests.base import make_user

    client.force_login(make_user("mallory"))
    response = sample(client, survey, ids(survey)[1:], 1)
    assert response.status_code in (403, 404)
    assert not QuestionSample.objects.filter(survey=survey).exists()


def test_a_branched_questions_card_says_who_was_asked_and_what_its_shares_count(organizer_client, organizer):
    from surveys.results.asked import asked_note

    survey = make_survey(organizer, title="Branches")
    decider = make_question(survey, text="Do you cycle?", kind="yes_no", options=["Yes", "No"], epsilon=3.0)
    branched = make_question(survey, text="How far?", options=["Near", "Far"], epsilon=3.0)
    branched.logic = {"show_if": {"question": decider.pk, "in": [0]}}
    branched.save(update_fields=["logic"])
    actions.do_open_survey(survey)
    rng = np.random.default_rng(9)
    answers = (rng.random(3000) < 0.3).astype(int)  # 70 % "Yes" (option 0)
    make_reports(decider, list(answers), seed=10)
    make_reports(branched, list(rng.integers(0, 2, size=3000)), seed=11)
    state = SurveyState.read(Survey.objects.get(pk=survey.pk))
    note = asked_note(state, state.questions[1])
    assert note is not None and note["answers"] == ["Yes"]
    low, high = note["band"]
    assert low <= 0.7 <= high and high - low < 0.1
    assert asked_note(state, state.questions[0]) is None
    page = organizer_client.get(reverse("survey_results", args=[survey.pk])).content.decode()
    assert page.count("data-asked-note") == 1 and "data-share-asked" in page
    assert f"?first={decider.pk}&amp;second={branched.pk}" in page
    # The public page has the note, not the cross-tab's link (readers there cannot open it).
    Survey.objects.filter(pk=survey.pk).update(public_results=True)
    public = organizer_client.get(reverse("public_results", args=[survey.slug])).content.decode()
    assert "data-share-asked" in public and "second=" not in public


def test_a_pooled_question_is_not_crossed(organizer_client, survey):
    always, *pooled = ids(survey)
    QuestionSample.objects.create(survey=survey, questions=pooled, size=1)
    actions.do_open_survey(survey)
    for question in survey.questions.all():
        make_reports(question, [0, 1, 2, 1] * 20 if question.pk != always else [0, 1] * 40)
    url = reverse("survey_crosstab", args=[survey.pk])
    response = organizer_client.get(f"{url}?first={always}&second={pooled[0]}")
    assert response.status_code == 400
    assert "cannot be crossed" in response.content.decode()
