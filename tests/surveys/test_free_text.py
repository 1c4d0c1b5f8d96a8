"""Short-answer (free-text) questions end to end: builder, answer page, submit, tallies, results, exports."""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest
from django.urls import reverse

from ldp.registry import family_of as family
from ldp.text import normalize_text
from ldp.textreports import make_text_mechanism
from surveys import actions
from surveys.kinds import kind_of
from surveys.models import Question, Report, Submission, TallyCell
from surveys.responding.submissions import new_token
from tests.base import (
    make_question,
    make_survey,
    make_text_question,
    make_text_reports,
    stored_tally,
    tally_of_reports,
    with_stand_ins,
)

KOREAN = {"HTTP_ACCEPT_LANGUAGE": "ko"}
TEXT_MECHANISMS = ["text-cms", "text-hcms", "rappor"]


def add(client, survey, **fields):
    data = {"text": "Which city?", "kind": "text", "epsilon": "4", "mechanism": "auto", **fields}
    return client.post(reverse("question_add", args=[survey.pk]), data)


def test_the_kind_names_the_text_mechanisms_and_their_family():
    assert kind_of("text").mechanisms() == ("text-cms", "text-hcms", "rappor")
    assert {family(m) for m in TEXT_MECHANISMS} == {"text"}
    assert kind_of("text").options({}, None) == []


def test_automatic_picks_the_count_mean_sketch_at_the_seed_shape_and_normalizes_candidates(organizer_client, organizer):
    survey = make_survey(organizer)
    response = add(organizer_client, survey, candidates_text="Seoul\n  SEOUL \n부산\n\n")
    assert response.status_code == 302, response.content.decode()
    question = survey.questions.get()
    assert (question.kind, question.mechanism, question.options) == ("text", "text-cms", [])
    assert question.mechanism_params == {"hash_count": 64, "width": 128}
    assert question.candidates == ["seoul", "부산"]
    assert question.build_mechanism().client_spec()["mechanism"] == "text-cms"


def test_rappor_stores_its_exact_epsilon_and_the_seed_bloom_filter(organizer_client, organizer):
    survey = make_survey(organizer)
    response = add(organizer_client, survey, mechanism="rappor", epsilon="2")
    assert response.status_code == 302
    question = survey.questions.get()
    params = question.mechanism_params
    assert (params["bits"], params["hash_count"], params["cohorts"], params["f"]) == (32, 2, 64, 0.5)
    assert math.isclose(question.epsilon, 2.0, rel_tol=1e-12)
    assert math.isclose(question.build_mechanism().inner.epsilon_one_report(), question.epsilon, rel_tol=1e-12)


def test_a_short_answer_refuses_choice_mechanisms_and_too_many_candidates(organizer_client, organizer):
    survey = make_survey(organizer)
    assert "needs a mechanism for text" in add(organizer_client, survey, mechanism="krr").content.decode()
    lines = "\n".join(f"city {i}" for i in range(201))
    assert "at most 200 candidate answers" in add(organizer_client, survey, candidates_text=lines).content.decode()
    assert not survey.questions.exists()


def test_a_choice_question_refuses_a_text_mechanism(organizer_client, organizer):
    survey = make_survey(organizer)
    data = {"text": "Pick", "kind": "single", "options_text": "A\nB", "epsilon": "1", "mechanism": "rappor"}
    response = organizer_client.post(reverse("question_add", args=[survey.pk]), data)
    assert "needs a mechanism for choices" in response.content.decode()


def test_the_builder_previews_the_error_of_one_candidate(organizer_client, organizer):
    survey = make_survey(organizer, expected_respondents=500)
    data = {"text": "Which city?", "kind": "text", "epsilon": "2", "mechanism": "text-hcms"}
    html = organizer_client.post(reverse("question_cost_preview", args=[survey.pk]), data).content.decode()
    assert "the expected error of the share of one candidate answer" in " ".join(html.split())


@pytest.fixture
def survey(organizer):
    survey = make_survey(organizer)
    for mechanism in TEXT_MECHANISMS:
        params = {"rappor": {"bits": 16, "cohorts": 8}}.get(mechanism, {"hash_count": 8, "width": 16})
        make_text_question(survey, mechanism, text=f"City ({mechanism})?", mechanism_params=params)
    make_question(survey, text="Pick one")
    actions.do_open_survey(survey)
    return survey


def test_the_answer_page_shows_a_nameless_text_input(client, survey):
    html = client.get(reverse("respond", args=[survey.slug])).content.decode()
    assert html.count("data-text-input") == 3
    assert [line.split('data-takes="')[1][:4] for line in html.splitlines() if "data-takes" in line] == [
        "text",
        "text",
        "text",
        "inde",
    ]
    assert "name=" not in html.split("data-respond-form")[1].split("</form>")[0]
    specs = json.loads(html.split('id="murmur-specs" type="application/json">')[1].split("</script>")[0])
    assert [s["spec"]["mechanism"] for s in specs[:3]] == TEXT_MECHANISMS


def post(client, survey, reports, **headers):
    body = json.dumps({"token": new_token(survey), "reports": reports})
    return client.post(reverse("submit", args=[survey.slug]), body, content_type="application/json", **headers)


def item(question, report):
    return {"question": question.pk, "version": question.current_randomization().version, "report": report}


def valid_reports(survey):
    cms, hcms, rappor = survey.questions.filter(kind="text")
    return [
        item(cms, {"row": 7, "bits": [1, 0] * 8}),
        item(hcms, {"row": 0, "index": 15, "bit": 1}),
        item(rappor, {"cohort": 7, "bits": [0, 1] * 8}),
    ]


def test_text_reports_are_stored_with_their_tally_cells_and_a_receipt(client, survey):
    response = post(client, survey, with_stand_ins(survey, valid_reports(survey)))
    assert response.status_code == 201, response.content
    cms, hcms, rappor = survey.questions.filter(kind="text")
    for question in (cms, hcms, rappor):
        randomization = question.current_randomization()
        stored = stored_tally(randomization)
        assert stored.n == 1
        assert np.array_equal(stored.counts, tally_of_reports(randomization).counts)
    # CMS: one report in row 7, +1 at cells 0, 2, ..., 14; HCMS: row 0, index 15 signed +1; RAPPOR: cohort 7.
    cms_counts = stored_tally(cms.current_randomization()).counts
    assert cms_counts[7] == 1 and cms_counts[8 + 7 * 16 : 8 + 8 * 16].tolist() == [1, 0] * 8
    assert stored_tally(hcms.current_randomization()).counts[8 + 15] == 1
    assert stored_tally(rappor.current_randomization()).counts[7] == 1
    receipt = response.json()["receipt"]
    assert "Bloom filter" in receipt[2]["summary"] and receipt[2]["chance"] == ""
    assert "sketch" in receipt[0]["summary"]


@pytest.mark.parametrize(
    ("which", "report", "reason"),
    [
        (2, {"cohort": 8, "bits": [0] * 16}, "cohort must lie in [0, 7]"),
        (2, {"cohort": -1, "bits": [0] * 16}, "cohort must lie"),
        (2, {"cohort": 1, "bits": [0] * 15}, "bits must have 16 entries"),
        (2, {"cohort": 1, "bits": [0] * 15 + [2]}, "must be 0 or 1"),
        (2, {"cohort": 1, "bits": [0] * 15 + [True]}, "must be 0 or 1"),
        (2, {"cohort": 1, "bits": [0] * 16, "text": "서울"}, "exactly the fields"),
        (2, {"cohort": 1.0, "bits": [0] * 16}, "cohort must be an integer"),
        (2, {"bits": [0] * 16}, "exactly the fields"),
        (0, {"row": 8, "bits": [0] * 16}, "row must lie"),
        (0, {"row": 0, "bits": "0101"}, "bits must be a list"),
        (1, {"row": 0, "index": 16, "bit": 1}, "index must lie"),
        (1, {"row": 0, "index": 0, "bit": 2}, "bit must lie"),
    ],
)
def test_a_malformed_text_report_is_refused_and_nothing_is_stored(client, survey, which, report, reason):
    reports = valid_reports(survey)
    reports[which] = {**reports[which], "report": report}
    response = post(client, survey, reports)
    assert response.status_code == 400
    message = response.json()["error"]
    assert f"Report {which + 1} (question “City (" in message and "is malformed" in message and reason in message
    assert not (Submission.objects.exists() or Report.objects.exists() or TallyCell.objects.exists())


def test_the_refusal_of_a_malformed_bloom_filter_speaks_korean(client, survey):
    reports = valid_reports(survey)
    reports[2] = {**reports[2], "report": {"cohort": 1, "bits": [0] * 3}}
    response = post(client, survey, reports, **KOREAN)
    assert response.status_code == 400
    assert "보고값 3(문항 “City (rappor)?”)의 형식이 잘못되었습니다" in response.json()["error"]
    assert not Report.objects.exists()


#: A population with Korean, mixed-case and oddly spaced answers; normalized before hashing.
POPULATION = ["서울"] * 900 + ["  Busan "] * 500 + ["대구"] * 150 + [f"town {i}" for i in range(150)]


@pytest.fixture
def answered(organizer):
    """An open survey whose text-cms question has 1,700 reports of POPULATION (seed 13), no candidates yet."""
    survey = make_survey(organizer, title="Cities")
    question = make_text_question(survey, "text-cms", epsilon=4.0, text="Which city do you live in?")
    actions.do_open_survey(survey)
    make_text_reports(question, [normalize_text(t) for t in POPULATION], seed=13)
    return survey, question


def test_results_ask_for_candidates_until_there_are_some(organizer_client, answered):
    survey, question = answered
    html = organizer_client.get(reverse("question_results", args=[survey.pk, question.pk])).content.decode()
    assert "data-no-candidates" in html and "data-candidates-form" in html


def test_candidates_given_after_the_reports_find_the_frequent_answers(organizer_client, answered):
    survey, question = answered
    version = question.current_randomization().version
    url = reverse("question_candidates", args=[survey.pk, question.pk])
    response = organizer_client.post(url, {"candidates_text": "서울\nBUSAN\n대구\nIncheon\n제주"})
    assert response.status_code == 302
    question.refresh_from_db()
    assert question.candidates == ["서울", "busan", "대구", "incheon", "제주"]
    assert question.current_randomization().version == version  # candidates do not touch the randomization
    html = organizer_client.get(reverse("question_results", args=[survey.pk, question.pk])).content.decode()
    found = html.split("data-found>")[1].split("</p>")[0]
    assert "“서울”" in found and "“busan”" in found and "incheon" not in found and "제주" not in found
    rows = {
        row.split('data-candidate="')[1].split('"')[0]: row for row in html.split("<tr")[2:] if "data-candidate" in row
    }
    assert set(rows) == {"서울", "busan", "대구", "incheon", "제주"}
    assert 'class="found"' in rows["서울"] and 'class="found"' not in rows["제주"]
    assert "Benjamini–Hochberg" in html and "can only count answers you name" in html
    assert html.count("<svg") >= 1 and "busan" in html.split("<svg")[1]
    dashboard = organizer_client.get(reverse("survey_results", args=[survey.pk])).content.decode()
    assert "“서울”" in dashboard.split("data-found>")[1].split("</p>")[0]
    assert "data-candidates-form" not in dashboard


def test_the_estimates_export_counts_each_candidate_within_its_interval(organizer_client, answered):
    survey, question = answered
    actions.do_set_candidates(question, ["서울", "busan", "제주"])
    response = organizer_client.get(reverse("export_estimates", args=[survey.pk, "csv"]))
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [r["option"] for r in rows] == ["서울", "busan", "제주"]
    assert {r["kind"] for r in rows} == {"text"} and {r["statistic"] for r in rows} == {"count"}
    truth = {"서울": 900, "busan": 500, "제주": 0}
    for row in rows:
        # Within 4 standard errors of the truth (the standard error includes the other strings' collisions).
        assert abs(float(row["unbiased"]) - truth[row["option"]]) <= 4 * float(row["standard_error"])
        assert json.loads(row["params"]) == {"hash_count": 64, "width": 128}
    assert [r["found"] for r in rows] == ["True", "True", "False"]
    data = organizer_client.get(reverse("export_estimates", args=[survey.pk, "json"])).json()
    tally = data["text_tallies"][0]
    assert (tally["question_id"], tally["mechanism"], tally["n"]) == (question.pk, "text-cms", len(POPULATION))
    assert len(tally["per_row"]) == 64 and np.array(tally["cells"]).shape == (64, 128)


def test_the_raw_export_holds_the_reports_that_reestimate_the_counts(organizer_client, answered):
    survey, question = answered
    data = json.loads(b"".join(organizer_client.get(reverse("export_reports", args=[survey.pk, "json"]))))
    record = data["randomizations"][0]
    assert (record["kind"], record["mechanism"]) == ("text", "text-cms")
    assert record["params"] == {"hash_count": 64, "width": 128}
    mechanism = make_text_mechanism(record["mechanism"], record["epsilon"], **record["params"])
    packed = b"".join(mechanism.parse_report(r["report"]) for r in data["reports"])
    tally = mechanism.tally(mechanism.unpack_many(packed))
    assert np.array_equal(tally.counts, stored_tally(question.current_randomization()).counts)


def test_candidates_can_change_in_the_builder_after_reports_but_not_the_randomization(organizer_client, answered):
    survey, question = answered
    url = reverse("question_edit", args=[survey.pk, question.pk])
    data = {"text": "Which city?", "candidates_text": "Seoul"}
    response = organizer_client.post(url, data)
    assert response.status_code == 302, response.content.decode()
    question.refresh_from_db()
    assert question.candidates == ["seoul"] and question.mechanism == "text-cms"
    response = organizer_client.post(url, {**data, "mechanism": "rappor"})
    assert "randomization is frozen" in response.content.decode()


def test_only_the_owner_may_set_candidates(client, other_organizer, answered):
    survey, question = answered
    client.force_login(other_organizer)
    response = client.post(reverse("question_candidates", args=[survey.pk, question.pk]), {"candidates_text": "x"})
    assert response.status_code == 404
    question.refresh_from_db()
    assert question.candidates == []


def test_candidates_of_a_choice_question_are_not_a_thing(organizer_client, organizer):
    survey = make_survey(organizer)
    question = make_question(survey)
    url = reverse("question_candidates", args=[survey.pk, question.pk])
    assert organizer_client.post(url, {"candidates_text": "x"}).status_code == 404


def test_a_question_with_too_few_reports_says_so(organizer_client, organizer):
    survey = make_survey(organizer)
    question = make_text_question(survey, "rappor", epsilon=2.0, candidates=["서울"])
    actions.do_open_survey(survey)
    make_text_reports(question, ["서울"] * 3, seed=1)
    html = organizer_client.get(reverse("question_results", args=[survey.pk, question.pk])).content.decode()
    assert "data-too-few" in html and "Too few responses to count answers" in html
    assert "data-few" in html and "of 3) wrote “서울”" in html  # and what the 3 reports already allow
    assert Question.objects.get(pk=question.pk).kind == "text"


def test_recommend_picks_the_sketch_for_a_short_answer(organizer_client, organizer):
    survey = make_survey(organizer)
    response = add(organizer_client, survey, mechanism="rappor", action="recommend")
    assert response.status_code == 200
    assert '<option value="text-cms" selected>' in response.content.decode()
    assert not survey.questions.exists()


def test_candidates_can_be_given_on_the_results_page_before_any_report(organizer_client, organizer):
    survey = make_survey(organizer)
    question = make_text_question(survey)
    actions.do_open_survey(survey)
    html = organizer_client.get(reverse("question_results", args=[survey.pk, question.pk])).content.decode()
    assert "No reports yet." in html and "data-candidates-form" in html
    url = reverse("question_candidates", args=[survey.pk, question.pk])
    response = organizer_client.post(url, {"candidates_text": "x" * 201})
    assert response.status_code == 400 and "at most 200 characters" in response.content.decode()


def test_the_transparency_page_publishes_the_text_specs(client, survey):
    html = client.get(reverse("transparency", args=[survey.slug])).content.decode()
    assert "text-cms" in html and "rappor" in html


def test_the_builder_card_and_the_answer_page_describe_a_short_answer(client, organizer_client, survey):
    actions.do_set_candidates(survey.questions.get(mechanism="rappor"), ["서울", "부산"])
    html = " ".join(organizer_client.get(reverse("survey_detail", args=[survey.pk])).content.decode().split())
    assert html.count("A short answer in the respondent's own words") == 3
    assert "2 candidate answers to count" in html and "RAPPOR (Google)" in html
    page = " ".join(client.get(reverse("respond", args=[survey.slug])).content.decode().split())
    assert page.count("the text itself never leaves this page") == 3
    assert page.count("chance you wrote a given answer") == 3


def test_the_preview_checks_text_reports_and_stores_nothing(organizer_client, survey):
    cms = survey.questions.filter(kind="text").first()
    body = {"reports": [{"question": cms.pk, "version": 0, "report": {"row": 1, "bits": [0, 1] * 8}}]}
    url = reverse("survey_preview_check", args=[survey.pk])
    response = organizer_client.post(url, json.dumps(body), content_type="application/json")
    assert response.status_code == 200 and response.json()["receipt"][0]["stored"]["row"] == 1
    body["reports"][0]["report"] = {"row": 1, "bits": [0, 1] * 7}
    response = organizer_client.post(url, json.dumps(body), content_type="application/json")
    assert response.status_code == 400 and "bits must have 16 entries" in response.json()["error"]
    assert not Report.objects.exists()


def test_a_duplicated_survey_keeps_the_short_answers_and_their_candidates(survey):
    actions.do_set_candidates(survey.questions.get(mechanism="rappor"), ["서울"])
    copy = actions.do_duplicate_survey(survey)
    question = copy.questions.get(mechanism="rappor")
    assert (question.kind, question.candidates) == ("text", ["서울"])


def test_a_rappor_question_with_reports_can_be_reworded_without_a_new_randomization(organizer_client, organizer):
    survey = make_survey(organizer)
    add(organizer_client, survey, mechanism="rappor", epsilon="2.5")
    question = survey.questions.get()
    actions.do_open_survey(survey)
    make_text_reports(question, ["서울"] * 5, seed=2)
    version = question.current_randomization().version
    response = organizer_client.post(
        reverse("question_edit", args=[survey.pk, question.pk]),
        {"text": "Which city, really?", "candidates_text": "서울"},
    )
    assert response.status_code == 302, response.content.decode()
    question.refresh_from_db()
    assert (question.text, question.epsilon, question.candidates) == ("Which city, really?", 2.5, ["서울"])
    assert question.current_randomization().version == version


def test_the_results_of_a_short_answer_speak_korean(organizer_client, answered):
    survey, question = answered
    actions.do_set_candidates(question, ["서울", "제주"])
    html = organizer_client.get(reverse("question_results", args=[survey.pk, question.pk]), **KOREAN).content.decode()
    assert "후보 가운데 발견된 답:" in html and "Benjamini–Hochberg 절차" in html and "이 답들 세기" in html
    assert "Found among the candidates" not in html and "can only count answers you name" not in html


@pytest.mark.parametrize("mechanism", TEXT_MECHANISMS)
def test_stored_tallies_equal_the_reports_whatever_their_signs(organizer, mechanism):
    # HCMS cells sum +-1 per report, so some go below zero; the sharded cells must still add up.
    survey = make_survey(organizer)
    question = make_text_question(survey, mechanism, epsilon=1.0)
    actions.do_open_survey(survey)
    make_text_reports(question, ["서울"] * 40 + ["부산"] * 20, seed=3)
    randomization = question.current_randomization()
    stored = stored_tally(randomization)
    assert stored.n == 60 and np.array_equal(stored.counts, tally_of_reports(randomization).counts)
    assert mechanism != "text-hcms" or stored.counts.min() < 0
