"""Multi-select ("choose all that apply") questions end to end: builder, answer page, submit, tallies,
results, exports, preview and duplicate."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from django.urls import reverse

from ldp.advisor import Z_95
from ldp.multiselect import SET_MECHANISMS, make_set_mechanism, recommend_multiselect
from ldp.registry import family_of as family
from surveys import actions
from surveys.kinds import kind_of
from surveys.models import Report, Submission, TallyCell
from surveys.responding.submissions import new_token
from tests.base import (
    make_multi_question,
    make_question,
    make_set_reports,
    make_survey,
    stored_tally,
    tally_of_reports,
    with_stand_ins,
)

KOREAN = {"HTTP_ACCEPT_LANGUAGE": "ko"}
OPTIONS = ["Focus time", "Pair work", "Written docs", "Stand-ups", "Mentoring"]


def add(client, survey, **fields):
    data = {
        "text": "Which helped?",
        "kind": "multi_select",
        "options_text": "\n".join(OPTIONS),
        "epsilon": "2",
        "mechanism": "auto",
        **fields,
    }
    return client.post(reverse("question_add", args=[survey.pk]), data)


#: 1,000 respondents: 60 % chose option 0, 40 % option 2, 25 % option 0 and 2 together, 10 % nothing.
POPULATION = np.array(
    [[1, 0, 1, 0, 0]] * 250
    + [[1, 0, 0, 0, 0]] * 350
    + [[0, 0, 1, 0, 0]] * 150
    + [[0, 1, 0, 0, 0]] * 150
    + [[0] * 5] * 100
)


# -- the registry and the builder -------------------------------------------------------------------


def test_the_kind_names_the_set_mechanisms_and_their_family():
    assert kind_of("multi_select").mechanisms() == SET_MECHANISMS
    assert {family(m) for m in SET_MECHANISMS} == {"multi"}
    assert kind_of("multi_select").frozen_fields == ("max_choices",)
    assert "set-oue" not in kind_of("single").mechanisms()


@pytest.mark.parametrize(("limit", "stored"), [("", 5), ("2", 2), ("5", 5), ("1", 1)])
def test_automatic_follows_the_multiselect_advisor_for_k_l_epsilon_and_n(organizer_client, organizer, limit, stored):
    survey = make_survey(organizer, expected_respondents=800)
    response = add(organizer_client, survey, max_choices=limit)
    assert response.status_code == 302, response.content.decode()
    question = survey.questions.get()
    assert (question.kind, question.options, question.mechanism_params) == (
        "multi_select",
        OPTIONS,
        {"max_choices": stored},
    )
    assert question.mechanism == recommend_multiselect(5, stored, 2.0, 800).best.mechanism
    assert question.mechanism_chosen_automatically
    assert question.build_mechanism().client_spec()["max_choices"] == stored


@pytest.mark.parametrize(
    ("limit", "message"), [("6", "between 1 and the number of options (5)"), ("0", "greater than or equal to 1")]
)
def test_a_maximum_outside_1_to_k_is_refused(organizer_client, organizer, limit, message):
    survey = make_survey(organizer)
    response = add(organizer_client, survey, max_choices=limit)
    assert message in response.content.decode()
    assert not survey.questions.exists()


def test_a_multi_select_question_refuses_choice_mechanisms_and_one_option(organizer_client, organizer):
    survey = make_survey(organizer)
    assert "needs a mechanism for sets of options" in add(organizer_client, survey, mechanism="oue").content.decode()
    assert "Give between 2 and 64 options" in add(organizer_client, survey, options_text="Only").content.decode()
    data = {"text": "Pick", "kind": "single", "options_text": "A\nB", "epsilon": "1", "mechanism": "set-sue"}
    response = organizer_client.post(reverse("question_add", args=[survey.pk]), data)
    assert "needs a mechanism for choices" in response.content.decode()
    assert not survey.questions.exists()


@pytest.mark.parametrize("mechanism", SET_MECHANISMS)
def test_the_cost_preview_shows_each_options_expected_error_at_the_expected_n(organizer_client, organizer, mechanism):
    survey = make_survey(organizer, expected_respondents=500)
    data = {"text": "Which?", "kind": "multi_select", "options_text": "\n".join(OPTIONS), "epsilon": "1.5"}
    data |= {"mechanism": mechanism, "max_choices": "3"}
    html = " ".join(
        organizer_client.post(reverse("question_cost_preview", args=[survey.pk]), data).content.decode().split()
    )
    ranking = {c.mechanism: c.half_width for c in recommend_multiselect(5, 3, 1.5, 500).ranking}
    shown = html.split("data-half-width>± ")[1].split("<")[0]
    assert shown == f"{100 * ranking[mechanism]:.1f}"
    assert "the expected error of each option's share with 500 respondents" in html
    assert "guesses the true answer" not in html


def test_automatic_says_why_in_one_sentence(organizer_client, organizer):
    survey = make_survey(organizer, expected_respondents=500)
    data = {"text": "Which?", "kind": "multi_select", "options_text": "\n".join(OPTIONS), "epsilon": "1.5"}
    data |= {"mechanism": "auto", "max_choices": "3"}
    html = " ".join(
        organizer_client.post(reverse("question_cost_preview", args=[survey.pk]), data).content.decode().split()
    )
    why = html.split("data-advisor-why>")[1].split("</p>")[0]
    assert why.startswith(
        "Automatic picks Padding and sampling with k-RR: for 5 options of which at most 3 may be chosen"
    )
    assert "(± 14.0 points), ahead of Symmetric unary encoding of the chosen set" in why


def test_recommend_picks_the_advisors_set_mechanism(organizer_client, organizer):
    survey = make_survey(organizer, expected_respondents=1000)
    response = add(organizer_client, survey, mechanism="set-sue", max_choices="1", epsilon="1", action="recommend")
    assert response.status_code == 200
    assert '<option value="padding-krr" selected>' in response.content.decode()
    assert not survey.questions.exists()


def test_the_maximum_is_frozen_with_the_randomization_once_there_are_reports(organizer_client, organizer):
    survey = make_survey(organizer)
    question = make_multi_question(survey, max_choices=2)
    actions.do_open_survey(survey)
    make_set_reports(question, [[1, 1, 0, 0, 0]] * 3)
    url = reverse("question_edit", args=[survey.pk, question.pk])
    reworded = {"text": "Reworded?", "options_text": "\n".join(o.upper() for o in OPTIONS)}
    response = organizer_client.post(url, {**reworded, "max_choices": "3"})
    assert "randomization is frozen" in response.content.decode()
    response = organizer_client.post(url, reworded)
    assert response.status_code == 302, response.content.decode()
    question.refresh_from_db()
    assert question.text == "Reworded?" and question.mechanism_params == {"max_choices": 2}
    assert question.randomizations.count() == 1


def test_the_builder_card_says_how_many_may_be_chosen(organizer_client, organizer):
    survey = make_survey(organizer)
    make_multi_question(survey, max_choices=2)
    make_multi_question(survey, "set-sue", max_choices=5)
    html = " ".join(organizer_client.get(reverse("survey_detail", args=[survey.pk])).content.decode().split())
    assert "Choose all that apply, at most 2" in html and "Choose all that apply, any number" in html
    assert 'data-kinds="multi_select"' in html and 'name="max_choices"' in html
    edit = organizer_client.get(reverse("question_edit", args=[survey.pk, survey.questions.first().pk]))
    assert 'name="max_choices" value="2"' in edit.content.decode()


# -- the answer page, submit and tallies ------------------------------------------------------------


@pytest.fixture
def survey(organizer):
    survey = make_survey(organizer)
    for mechanism in SET_MECHANISMS:
        make_multi_question(survey, mechanism, max_choices=2)
    make_question(survey, text="Pick one")
    actions.do_open_survey(survey)
    return survey


def test_the_answer_page_shows_nameless_checkboxes_with_the_maximum(client, survey):
    html = client.get(reverse("respond", args=[survey.slug])).content.decode()
    form = html.split("data-respond-form")[1].split("</form>")[0]
    assert form.count('type="checkbox" data-option-index') == 4 * 5 and "name=" not in form
    assert form.count('data-max-choices="2"') == 4 and form.count('data-takes="set"') == 4
    assert " ".join(form.split()).count("Choose all that apply, at most 2.") == 4
    specs = json.loads(html.split('id="murmur-specs" type="application/json">')[1].split("</script>")[0])
    assert [s["spec"]["mechanism"] for s in specs[:4]] == list(SET_MECHANISMS)
    assert {s["spec"]["max_choices"] for s in specs[:4]} == {2}
    promise = json.loads(html.split('id="murmur-promise" type="application/json">')[1].split("</script>")[0])
    assert [promise["questions"][str(s["question"])]["epsilon"] for s in specs[:4]] == [2.0] * 4
    text = " ".join(html.split())
    assert text.count("so any option may look chosen or not") == 2
    assert text.count("fills your choices up to 2 with blanks") == 2


def post(client, survey, reports, **headers):
    body = json.dumps({"token": new_token(survey), "reports": reports})
    return client.post(reverse("submit", args=[survey.slug]), body, content_type="application/json", **headers)


def item(question, report):
    return {"question": question.pk, "version": question.current_randomization().version, "report": report}


def multi_questions(survey):
    return list(survey.questions.filter(kind="multi_select").order_by("position"))


def valid_reports(survey):
    sue, oue, krr, olh = multi_questions(survey)
    return [
        item(sue, {"bits": [1, 0, 0, 1, 1]}),
        item(oue, {"bits": [0, 0, 0, 0, 0]}),
        item(krr, {"value": 6}),  # the second blank of k + l = 7 items
        item(olh, {"hash": [11, 22, 33], "value": 0}),
    ]


def test_set_reports_are_stored_with_their_tally_cells_and_a_receipt_in_words(client, survey):
    response = post(client, survey, with_stand_ins(survey, valid_reports(survey)))
    assert response.status_code == 201, response.content
    questions = multi_questions(survey)
    for question in questions:
        randomization = question.current_randomization()
        assert stored_tally(randomization).n == 1
        assert np.array_equal(stored_tally(randomization).counts, tally_of_reports(randomization).counts)
    assert stored_tally(questions[0].current_randomization()).counts.tolist() == [1, 0, 0, 1, 1]
    assert stored_tally(questions[2].current_randomization()).counts.tolist() == [0] * 6 + [1]
    receipt = response.json()["receipt"]
    assert receipt[0]["summary"] == "a yes/no mark for every option, marked for: “Focus time”, “Stand-ups”, “Mentoring”"
    assert receipt[1]["summary"] == "a yes/no mark for every option, marked for: none"
    assert receipt[2]["summary"] == "a blank, randomized (it names no option)"
    assert receipt[3]["summary"].startswith("one hashed code of one of your choices or a blank, randomized: 1 of ")
    assert {r["chance"] for r in receipt[:4]} == {""}  # the fifth is the choice question's stand-in


def test_a_padding_report_naming_an_option_is_described_as_randomized(client, survey):
    reports = valid_reports(survey)
    reports[2] = {**reports[2], "report": {"value": 1}}
    receipt = post(client, survey, with_stand_ins(survey, reports)).json()["receipt"]
    assert receipt[2]["summary"] == "one option, randomized (not necessarily one you chose): “Pair work”"


@pytest.mark.parametrize(
    ("which", "report", "reason"),
    [
        (0, {"bits": [1, 0, 0, 1]}, "bits must have 5 entries"),
        (0, {"bits": [1, 0, 0, 1, 1, 0]}, "bits must have 5 entries"),
        (0, {"bits": [1, 0, 0, 1, 2]}, "must be 0 or 1"),
        (0, {"bits": [1, 0, 0, 1, True]}, "must be 0 or 1"),
        (0, {"bits": [1, 0, 0, 1, 1.0]}, "must be 0 or 1"),
        (0, {"bits": "10011"}, "bits must be a list"),
        (1, {"bits": [0] * 5, "chosen": [0, 1]}, "exactly the fields"),
        (1, {}, "exactly the fields"),
        (1, [0, 0, 0, 0, 0], "must be an object"),
        (2, {"value": 7}, "value must lie in [0, 6]"),
        (2, {"value": -1}, "value must lie"),
        (2, {"value": "1"}, "value must be an integer"),
        (2, {"value": 1, "set": [0]}, "exactly the fields"),
        (3, {"hash": [11, 22, 33], "value": 99}, "value must lie"),
        (3, {"hash": [11, 22], "value": 0}, "hash"),
        (3, {"value": 0}, "exactly the fields"),
    ],
)
def test_a_malformed_set_report_is_refused_and_nothing_is_stored(client, survey, which, report, reason):
    reports = valid_reports(survey)
    reports[which] = {**reports[which], "report": report}
    response = post(client, survey, reports)
    assert response.status_code == 400
    message = response.json()["error"]
    assert f"Report {which + 1} (question “Which helped (" in message and "is malformed" in message
    assert reason in message, message
    assert not (Submission.objects.exists() or Report.objects.exists() or TallyCell.objects.exists())


def test_the_refusal_of_a_malformed_set_report_speaks_korean(client, survey):
    reports = valid_reports(survey)
    reports[0] = {**reports[0], "report": {"bits": [1, 0]}}
    response = post(client, survey, reports, **KOREAN)
    assert response.status_code == 400
    assert "보고값 1(문항 “Which helped (set-sue)?”)의 형식이 잘못되었습니다" in response.json()["error"]
    assert not Report.objects.exists()


@pytest.mark.parametrize("mechanism", SET_MECHANISMS)
def test_stored_tallies_equal_the_stored_reports(organizer, mechanism):
    survey = make_survey(organizer)
    question = make_multi_question(survey, mechanism, max_choices=2)
    actions.do_open_survey(survey)
    make_set_reports(question, POPULATION[:300], seed=3)
    make_set_reports(question, POPULATION[300:420], seed=4)
    randomization = question.current_randomization()
    stored, recomputed = stored_tally(randomization), tally_of_reports(randomization)
    assert stored.n == recomputed.n == 420
    assert np.array_equal(stored.counts, recomputed.counts)


# -- results and exports ----------------------------------------------------------------------------


@pytest.fixture
def answered(organizer):
    """One open survey, a multi-select question per mechanism (l = 2), each with POPULATION's reports."""
    survey = make_survey(organizer, title="Helpers")
    for seed, mechanism in enumerate(SET_MECHANISMS):
        question = make_multi_question(survey, mechanism, max_choices=2)
        make_set_reports(question, POPULATION, seed=seed)
    actions.do_open_survey(survey)
    return survey


def recomputed(question):
    """ldp's estimate from the stored Report rows, with a mechanism built from the exported parameters."""
    randomization = question.current_randomization()
    mechanism = make_set_mechanism(
        randomization.mechanism, randomization.k, randomization.epsilon, **randomization.params
    )
    return mechanism.estimate(tally_of_reports(randomization))


def page_rows(html):
    """(estimate, interval) text per option row of the results table."""
    rows = [row for row in html.split("<tr")[1:] if "data-option=" in row]
    return [
        (row.split("data-estimate>")[1].split("<")[0], row.split("data-interval>")[1].split("<")[0]) for row in rows
    ]


def percent(value):
    return f"{100 * value:.1f} %"


@pytest.mark.parametrize("estimate", ["consistent", "unbiased"])
def test_the_results_page_shows_ldps_shares_and_bands_recomputed_from_the_stored_reports(
    organizer_client, answered, estimate
):
    for question in multi_questions(answered):
        url = reverse("question_results", args=[answered.pk, question.pk]) + f"?estimate={estimate}"
        html = organizer_client.get(url).content.decode()
        truth = recomputed(question)
        if estimate == "consistent":
            shares, (low, high) = truth.consistent_shares, truth.bands
        else:
            shares = truth.shares
            low, high = truth.shares - Z_95 * truth.standard_errors, truth.shares + Z_95 * truth.standard_errors
        expected = [(percent(s), f"{percent(lo)} – {percent(hi)}") for s, lo, hi in zip(shares, low, high, strict=True)]
        assert page_rows(html) == expected
        mean = html.split("data-mean-count-value>")[1].split("<")[0]
        assert abs(float(mean) - truth.mean_count) <= 0.005 + 1e-12  # shown to two decimals
        assert "data-too-few" not in html and "<svg" in html and "need not add up to 100 %" in html


def test_joint_bands_are_the_simultaneous_ones_and_say_so(organizer_client, answered):
    question = multi_questions(answered)[0]
    url = reverse("question_results", args=[answered.pk, question.pk]) + "?bands=joint"
    html = organizer_client.get(url).content.decode()
    truth = recomputed(question)
    low, high = truth.simultaneous
    assert [interval for _, interval in page_rows(html)] == [
        f"{percent(lo)} – {percent(hi)}" for lo, hi in zip(low, high, strict=True)
    ]
    assert "95 % bands for all options at once" in html
    assert np.all(truth.simultaneous.high - truth.simultaneous.low >= truth.bands.high - truth.bands.low - 1e-12)


def test_the_shares_are_near_the_truth(answered):
    truth = POPULATION.mean(axis=0)
    for question in multi_questions(answered):
        estimate = recomputed(question)
        # Within 4 standard errors (fixed seeds; each option's standard error is ldp's analytic one).
        assert np.all(np.abs(estimate.shares - truth) <= 4 * estimate.standard_errors), question.mechanism
        assert abs(estimate.mean_count - truth.sum()) <= 4 * np.sqrt(estimate.mean_count_variance)


def test_too_few_reports_get_the_small_n_notice(organizer_client, organizer):
    survey = make_survey(organizer)
    question = make_multi_question(survey, "set-sue", max_choices=5, epsilon=0.5)
    actions.do_open_survey(survey)
    make_set_reports(question, POPULATION[:40], seed=1)
    html = " ".join(
        organizer_client.get(reverse("question_results", args=[survey.pk, question.pk])).content.decode().split()
    )
    assert "data-too-few" in html and "drops below ± 20.0 points" in html
    assert "data-mean-count" not in html


def test_the_estimates_export_holds_every_share_the_mean_count_and_the_tallies(organizer_client, answered):
    response = organizer_client.get(reverse("export_estimates", args=[answered.pk, "csv"]))
    rows = [r for r in csv.DictReader(io.StringIO(response.content.decode())) if r["kind"] == "multi_select"]
    assert [r["statistic"] for r in rows] == (["share"] * 5 + ["mean_count"]) * 4
    for question in multi_questions(answered):
        mine = [r for r in rows if int(r["question_id"]) == question.pk]
        truth = recomputed(question)
        assert [float(r["unbiased"]) for r in mine[:5]] == pytest.approx(truth.shares.tolist(), abs=1e-12)
        assert [float(r["consistent_low"]) for r in mine[:5]] == pytest.approx(truth.bands.low.tolist(), abs=1e-12)
        assert float(mine[5]["unbiased"]) == pytest.approx(truth.mean_count, abs=1e-12)
        assert json.loads(mine[0]["params"]) == {"max_choices": 2} and mine[0]["mechanism"] == question.mechanism
    data = organizer_client.get(reverse("export_estimates", args=[answered.pk, "json"])).json()
    for record, question in zip(data["multi_select_tallies"], multi_questions(answered), strict=True):
        randomization = question.current_randomization()
        assert (record["question_id"], record["mechanism"], record["k"], record["max_choices"]) == (
            question.pk,
            question.mechanism,
            5,
            2,
        )
        assert record["n"] == len(POPULATION)
        assert record["counts"] == tally_of_reports(randomization).counts.tolist()


def test_the_raw_export_reestimates_exactly_what_the_page_shows(organizer_client, answered):
    """Round trip: the raw reports and their parameters alone give the exported estimates."""
    data = json.loads(b"".join(organizer_client.get(reverse("export_reports", args=[answered.pk, "json"]))))
    estimates = organizer_client.get(reverse("export_estimates", args=[answered.pk, "json"])).json()["estimates"]
    records = [r for r in data["randomizations"] if r["kind"] == "multi_select"]
    assert [r["mechanism"] for r in records] == list(SET_MECHANISMS)
    for record in records:
        assert record["client_spec"]["max_choices"] == record["params"]["max_choices"] == 2
        mechanism = make_set_mechanism(record["mechanism"], record["k"], record["epsilon"], **record["params"])
        reports = [r["report"] for r in data["reports"] if r["question_id"] == record["question_id"]]
        packed = b"".join(mechanism.parse_report(report) for report in reports)
        estimate = mechanism.estimate(mechanism.tally(mechanism.unpack_many(packed)))
        exported = [e for e in estimates if e["question_id"] == record["question_id"]]
        assert [e["unbiased"] for e in exported[:5]] == pytest.approx(estimate.shares.tolist(), abs=1e-12)
        assert exported[5]["statistic"] == "mean_count" and exported[5]["unbiased"] == pytest.approx(
            estimate.mean_count
        )


def test_the_results_page_speaks_korean(organizer_client, answered):
    question = multi_questions(answered)[2]
    html = " ".join(
        organizer_client.get(reverse("question_results", args=[answered.pk, question.pk]), **KOREAN)
        .content.decode()
        .split()
    )
    assert 'lang="ko"' in html
    for phrase in (
        "고른 선택지 수의 평균",
        "한 사람이 여러 선택지를 고를 수 있으므로",
        "한 사람당 최대 2개",
        "k-RR을 쓴 패딩·샘플링",
    ):
        assert phrase in html, phrase
    assert "Mean number of options chosen" not in html


def test_the_public_and_transparency_pages_show_a_multi_select_question(client, answered):
    answered.public_results = True
    answered.save(update_fields=["public_results"])
    html = " ".join(client.get(reverse("public_results", args=[answered.slug])).content.decode().split())
    assert html.count("data-mean-count>") == 4 and html.count("data-plain") == 4
    assert "chose “Focus time” (best estimate" in html
    transparency = client.get(reverse("transparency", args=[answered.slug])).content.decode()
    for mechanism in SET_MECHANISMS:
        assert (
            f"&quot;mechanism&quot;: &quot;{mechanism}&quot;" in transparency
            or f'"mechanism": "{mechanism}"' in transparency
        )
    assert "Padding and sampling with OLH" in transparency and "max_choices" in transparency


# -- preview and duplicate --------------------------------------------------------------------------


def test_the_preview_checks_set_reports_and_stores_nothing(organizer_client, survey):
    sue = multi_questions(survey)[0]
    body = {"reports": [{"question": sue.pk, "version": 0, "report": {"bits": [0, 1, 1, 0, 0]}}]}
    url = reverse("survey_preview_check", args=[survey.pk])
    response = organizer_client.post(url, json.dumps(body), content_type="application/json")
    assert response.status_code == 200
    assert response.json()["receipt"][0]["summary"].endswith("“Pair work”, “Written docs”")
    body["reports"][0]["report"] = {"bits": [0, 1, 1]}
    response = organizer_client.post(url, json.dumps(body), content_type="application/json")
    assert response.status_code == 400 and "bits must have 5 entries" in response.json()["error"]
    assert not Report.objects.exists()


def test_the_preview_page_shows_the_checkboxes(organizer_client, survey):
    html = organizer_client.get(reverse("survey_preview", args=[survey.pk])).content.decode()
    assert html.count('type="checkbox" data-option-index') == 20 and "data-preview" in html


def test_a_duplicated_survey_keeps_the_multi_select_questions_and_their_maximum(survey):
    copy = actions.do_duplicate_survey(survey)
    questions = multi_questions(copy)
    assert [(q.kind, q.mechanism, q.mechanism_params, q.options) for q in questions] == [
        ("multi_select", m, {"max_choices": 2}, OPTIONS) for m in SET_MECHANISMS
    ]


@pytest.mark.parametrize("estimate", ["consistent", "unbiased"])
def test_the_estimate_switch_does_not_say_every_questions_shares_sum_to_100_percent(
    organizer_client, answered, estimate
):
    html = " ".join(
        organizer_client.get(reverse("survey_results", args=[answered.pk]), {"estimate": estimate})
        .content.decode()
        .split()
    )
    summary = html.split('<p class="hint" data-how-summary>')[1].split("</p>")[0]
    folded = html.split('<details class="method estimate-method" data-how-estimated>')[1].split("</details>")[0]
    for hint in (summary, folded):
        assert "a single-choice question's shares" in hint
        assert "summing to 100 %" not in hint and "the shares may not sum" not in hint


@pytest.mark.parametrize("estimate", ["consistent", "unbiased"])
def test_the_estimate_switch_says_it_plainly_and_folds_how(organizer_client, answered, estimate):
    """One plain line is visible; the estimators (Norm-Sub, Feldman–Cousins, empirical Bayes) are named only
    inside a closed disclosure."""
    html = " ".join(
        organizer_client.get(reverse("survey_results", args=[answered.pk]), {"estimate": estimate})
        .content.decode()
        .split()
    )
    before, _, rest = html.partition('<details class="method estimate-method" data-how-estimated>')
    folded, _, after = rest.partition("</details>")
    assert "data-how-summary" in before and "<summary>How these estimates are made</summary>" in folded
    technical = ("Norm-Sub", "Feldman–Cousins", "empirical-Bayes", "analytic error bars")
    assert any(word in folded for word in technical)
    assert not any(word in before.split("data-how-summary")[1] for word in technical)
