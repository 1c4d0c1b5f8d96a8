"""Number and rating questions end to end: builder, answer page, submit, results and exports."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from django.urls import reverse

from surveys import actions
from surveys.models import Question, Report, Submission, TallyCell
from surveys.responding.submissions import new_token
from tests.base import make_number_question, make_question, make_reports, make_survey, stored_tally

KOREAN = {"HTTP_ACCEPT_LANGUAGE": "ko"}
NUMERIC = ["laplace", "gaussian", "1bitmean", "duchi", "piecewise", "hybrid"]


def add(client, survey, **fields):
    data = {"text": "How many hours?", "kind": "numeric", "epsilon": "1", "mechanism": "auto", **fields}
    return client.post(reverse("question_add", args=[survey.pk]), data)


def test_a_number_question_needs_its_range(organizer_client, organizer):
    survey = make_survey(organizer)
    response = add(organizer_client, survey, range_low="0")
    assert response.status_code == 200
    assert "needs its lowest and highest value" in response.content.decode()
    response = add(organizer_client, survey, range_low="10", range_high="5")
    assert "must be above the lowest" in response.content.decode()
    assert not survey.questions.exists()


def test_automatic_picks_the_advisors_numeric_mechanism_and_stores_the_range(organizer_client, organizer):
    survey = make_survey(organizer)
    response = add(organizer_client, survey, range_low="0", range_high="60", unit="hours", whole_numbers="on")
    assert response.status_code == 302
    question = survey.questions.get()
    assert (question.kind, question.mechanism, question.mechanism_chosen_automatically) == ("numeric", "hybrid", True)
    assert question.mechanism_params == {"lo": 0.0, "hi": 60.0, "grid": 100}
    assert (question.range_low, question.range_high, question.unit, question.whole_numbers) == (0, 60, "hours", True)
    assert question.build_mechanism().hi == 60.0


def test_a_number_question_refuses_a_choice_mechanism(organizer_client, organizer):
    survey = make_survey(organizer)
    response = add(organizer_client, survey, range_low="0", range_high="60", mechanism="krr")
    assert "A mean needs a mechanism for numbers" in response.content.decode()
    assert not survey.questions.exists()


@pytest.mark.parametrize(
    ("estimate", "mechanism", "expected"),
    [("shares", "auto", "choice"), ("mean", "auto", "numeric"), ("mean", "duchi", "numeric")],
)
def test_a_rating_question_uses_the_family_of_its_estimate(organizer_client, organizer, estimate, mechanism, expected):
    survey = make_survey(organizer)
    response = add(
        organizer_client,
        survey,
        kind="rating",
        scale="0-10",
        low_label="Not at all likely",
        high_label="Extremely likely",
        rating_estimate=estimate,
        mechanism=mechanism,
    )
    assert response.status_code == 302
    question = survey.questions.get()
    assert question.options == [str(v) for v in range(11)]
    built = question.build_mechanism()
    if expected == "numeric":
        assert (built.lo, built.hi) == (0.0, 10.0)
    else:
        assert built.k == 11
    assert (question.low_label, question.high_label) == ("Not at all likely", "Extremely likely")


def test_the_cost_preview_compares_every_numeric_mechanism_and_says_why(organizer_client, organizer):
    survey = make_survey(organizer, expected_respondents=1000)
    url = reverse("question_cost_preview", args=[survey.pk])
    for epsilon, regime in (("0.5", "Below ε ≈ 1.29"), ("3", "Above ε ≈ 1.29")):
        params = {"text": "x", "kind": "numeric", "range_low": "0", "range_high": "10", "epsilon": epsilon}
        html = organizer_client.post(url, {**params, "mechanism": "piecewise"}).content.decode()
        assert regime in html
        for label in ("Laplace (discrete)", "1BitMean (Microsoft)", "Piecewise", "Hybrid (Duchi + Piecewise)"):
            assert label in html
    # The expected half-width is the mechanism's worst case at n, in the question's units.
    from ldp.numeric import make_numeric_mechanism

    expected = 1.959964 * make_numeric_mechanism("piecewise", lo=0, hi=10, epsilon=3.0).expected_standard_error(1000)
    assert f"± {expected:.2f}" in html or f"± {expected:.3g}" in html


def test_the_rating_preview_recommends_an_estimate(organizer_client, organizer):
    survey = make_survey(organizer, expected_respondents=100)
    url = reverse("question_cost_preview", args=[survey.pk])
    base = {"text": "x", "kind": "rating", "epsilon": "0.5", "mechanism": "auto"}
    assert "Recommended: the mean" in organizer_client.post(url, {**base, "scale": "1-7"}).content.decode()
    assert "Net Promoter Score" in organizer_client.post(url, {**base, "scale": "0-10"}).content.decode()


@pytest.fixture
def survey(organizer):
    survey = make_survey(organizer)
    make_number_question(survey, text="Hours of sleep?", lo=0, hi=12, mechanism="piecewise", unit="hours")
    make_question(survey, text="Rate us", kind="rating", options=["1", "2", "3", "4", "5"], scale="1-5")
    make_number_question(survey, text="Age?", lo=18, hi=90, mechanism="1bitmean", unit="years")
    actions.do_open_survey(survey)
    return survey


def test_the_answer_page_shows_a_number_input_and_a_rating_scale(client, survey):
    html = client.get(reverse("respond", args=[survey.slug])).content.decode()
    assert 'data-number-input data-lo="0.0" data-hi="12.0"' in " ".join(html.split())
    assert 'data-value="5"' in html
    specs = json.loads(html.split('id="murmur-specs" type="application/json">')[1].split("</script>")[0])
    assert specs[0]["spec"]["mechanism"] == "piecewise"
    assert [line.split('data-takes="')[1][:5] for line in html.splitlines() if "data-takes" in line] == [
        "value",
        "index",
        "value",
    ]
    assert "name=" not in html.split("data-respond-form")[1].split("</form>")[0]


def post(client, survey, reports):
    body = json.dumps({"token": new_token(survey), "reports": reports})
    return client.post(reverse("submit", args=[survey.slug]), body, content_type="application/json")


def item(question, report):
    return {"question": question.pk, "version": question.current_randomization().version, "report": report}


def test_numeric_reports_are_stored_with_their_tally_cells(client, survey):
    sleep, rating, age = survey.questions.all()
    response = post(client, survey, [item(sleep, {"index": 17}), item(rating, {"value": 3}), item(age, {"index": 1})])
    assert response.status_code == 201, response.content
    tally = stored_tally(sleep.current_randomization())
    assert tally.n == 1 and tally.counts[17] == 1 and tally.counts.sum() == 1
    assert stored_tally(age.current_randomization()).counts.tolist() == [0, 1]


@pytest.mark.parametrize(
    "report",
    [
        {"index": -1},
        {"index": 10**6},
        {"index": 2.0},
        {"index": True},
        {"index": "3"},
        {"index": None},
        {"value": 3},
        {"index": 3, "value": 1},
        [3],
        "NaN",
    ],
)
def test_a_malformed_numeric_report_is_refused_and_nothing_is_stored(client, survey, report):
    sleep, rating, _age = survey.questions.all()
    response = post(client, survey, [item(rating, {"value": 3}), item(sleep, report)])
    assert response.status_code == 400
    assert "Report 2 (question “Hours of sleep?”) is malformed" in response.json()["error"]
    assert not (Submission.objects.exists() or Report.objects.exists() or TallyCell.objects.exists())


@pytest.mark.parametrize("body", ['{"index": NaN}', '{"index": Infinity}', '{"index": 2}'])
def test_one_bit_reports_must_be_a_bit_and_finite(client, survey, body):
    age = survey.questions.get(text="Age?")
    report = json.dumps({"question": age.pk, "version": age.current_randomization().version, "report": "BODY"})
    raw = json.dumps({"token": new_token(survey), "reports": ["ITEM"]}).replace('"ITEM"', report)
    raw = raw.replace('"BODY"', body)  # NaN and Infinity are not JSON, but Python's parser accepts them
    response = client.post(reverse("submit", args=[survey.slug]), raw, content_type="application/json")
    assert response.status_code == 400
    assert not Report.objects.exists()


def test_the_dashboard_shows_each_mean_with_its_interval_and_exports_it(organizer_client, survey):
    sleep, rating, age = survey.questions.all()
    rng = np.random.default_rng(5)
    make_reports(sleep, rng.uniform(5, 9, 3000).tolist(), seed=1)
    make_reports(rating, rng.choice(5, 3000, p=[0.1, 0.1, 0.2, 0.3, 0.3]).tolist(), seed=2)
    make_reports(age, [30.0] * 20, seed=3)
    html = organizer_client.get(reverse("survey_results", args=[survey.pk])).content.decode()
    assert html.count("data-mean") >= 1 and "Mean rating" in html
    assert "Too few responses" in html and "about ± " in html  # the 20 ages
    rows = organizer_client.get(reverse("export_estimates", args=[survey.pk, "json"])).json()["estimates"]
    sleep_row = next(r for r in rows if r["question_id"] == sleep.pk)
    assert sleep_row["statistic"] == "mean" and sleep_row["params"]["lo"] == 0.0
    assert sleep_row["unbiased_low"] < 7 < sleep_row["unbiased_high"]
    assert sleep_row["unbiased_high"] - sleep_row["unbiased_low"] < 1.5
    rating_mean = next(r for r in rows if r["question_id"] == rating.pk and r["statistic"] == "mean")
    assert rating_mean["unbiased_low"] < 3.6 < rating_mean["unbiased_high"]
    age_row = next(r for r in rows if r["question_id"] == age.pk)
    assert age_row["enough"] is False and age_row["reports_needed"] > 20
    text = organizer_client.get(reverse("export_estimates", args=[survey.pk, "csv"])).content.decode("utf-8-sig")
    assert {r["statistic"] for r in csv.DictReader(io.StringIO(text))} == {"mean", "share"}


def test_the_raw_export_reestimates_the_mean(organizer_client, survey):
    from ldp import Tally
    from ldp.numeric import make_numeric_mechanism

    sleep = survey.questions.get(text="Hours of sleep?")
    make_reports(sleep, [4.0, 8.0, 11.5] * 200, seed=4)
    response = organizer_client.get(reverse("export_reports", args=[survey.pk, "json"]))
    data = json.loads(b"".join(response.streaming_content))
    record = next(r for r in data["randomizations"] if r["question_id"] == sleep.pk)
    mechanism = make_numeric_mechanism(record["mechanism"], epsilon=record["epsilon"], **record["params"])
    indices = [r["report"]["index"] for r in data["reports"] if r["question_id"] == sleep.pk]
    tally = Tally(len(indices), np.bincount(indices, minlength=mechanism.output_size))
    rows = organizer_client.get(reverse("export_estimates", args=[survey.pk, "json"])).json()["estimates"]
    row = next(r for r in rows if r["question_id"] == sleep.pk)
    assert mechanism.estimate(tally).mean == pytest.approx(row["unbiased"], abs=1e-12)


def test_a_frozen_number_question_keeps_its_range(organizer_client, survey):
    sleep = survey.questions.get(text="Hours of sleep?")
    make_reports(sleep, [5.0], seed=0)
    url = reverse("question_edit", args=[survey.pk, sleep.pk])
    response = organizer_client.post(url, {"text": "Sleep (hours)?", "range_low": "0", "range_high": "24"})
    assert "randomization is frozen" in response.content.decode()
    response = organizer_client.post(url, {"text": "Sleep (hours)?"})
    assert response.status_code == 302
    sleep.refresh_from_db()
    assert (sleep.text, sleep.range_high, sleep.mechanism_params["hi"]) == ("Sleep (hours)?", 12, 12.0)
    assert Question.objects.get(pk=sleep.pk).current_randomization() is not None


def test_the_dashboard_offers_modips_synthetic_records_that_match_the_page(organizer_client, survey):
    sleep, _rating, age = survey.questions.all()
    make_reports(sleep, np.random.default_rng(8).uniform(5, 9, 3000).tolist(), seed=1)
    make_reports(age, [30.0] * 3000, seed=2)
    html = organizer_client.get(reverse("survey_results", args=[survey.pk])).content.decode("utf-8-sig")
    assert html.count("data-synthetic") == 1  # Piecewise; the one-bit age question identifies only a mean
    url = reverse("export_synthetic", args=[survey.pk, sleep.pk, 1])
    assert url in html
    first = organizer_client.get(url).content.decode("utf-8-sig")
    assert first == organizer_client.get(url).content.decode("utf-8-sig")  # seeded by the tally: stable downloads
    rows = list(csv.DictReader(io.StringIO(first)))
    values = np.array([float(r["value"]) for r in rows])
    assert len(rows) == 3000 and [r["record"] for r in rows[:2]] == ["1", "2"]
    assert 6 < values.mean() < 8  # true mean 7
    assert organizer_client.get(reverse("export_synthetic", args=[survey.pk, age.pk, 1])).status_code == 404


def test_strangers_get_no_synthetic_records(client, other_organizer, survey):
    sleep = survey.questions.get(text="Hours of sleep?")
    make_reports(sleep, [6.0] * 3000, seed=1)
    client.force_login(other_organizer)
    assert client.get(reverse("export_synthetic", args=[survey.pk, sleep.pk, 1])).status_code == 404


def test_number_and_rating_pages_speak_korean(client, organizer_client, survey):
    from tests.surveys.test_translations import assert_korean_only, korean_page

    sleep, rating, age = survey.questions.all()
    make_reports(sleep, [6.0, 7.0, 8.0] * 1000, seed=1)
    make_reports(rating, [0, 3, 4] * 1000, seed=2)
    make_reports(age, [30.0] * 20, seed=3)
    answer_page = korean_page(client, reverse("respond", args=[survey.slug]))
    assert "까지" in answer_page and "정수만 입력할 수 있습니다." in answer_page
    assert_korean_only(answer_page)
    dashboard = korean_page(organizer_client, reverse("survey_results", args=[survey.pk]))
    for korean in ["평균", "평균 평점", "재현자료 (Modips)", "의미 있는 추정을 하기에는 응답이 너무 적습니다"]:
        assert korean in dashboard
    assert_korean_only(dashboard)
    url = reverse("question_cost_preview", args=[survey.pk])
    preview = organizer_client.post(
        url,
        {"text": "x", "kind": "numeric", "range_low": "0", "range_high": "10", "epsilon": "0.5", "mechanism": "auto"},
        **KOREAN,
    ).content.decode()
    assert "ε가 약 1.29보다 작으면" in preview and "메커니즘별 평균의 예상 ± 오차" in preview
    assert_korean_only(preview)


def test_the_public_page_shows_the_mean_but_no_owner_download(client, survey):
    survey.public_results = True
    survey.save(update_fields=["public_results"])
    sleep = survey.questions.get(text="Hours of sleep?")
    make_reports(sleep, [6.0, 7.0, 8.0] * 1000, seed=1)
    html = client.get(reverse("public_results", args=[survey.slug])).content.decode()
    assert "data-mean" in html and "data-synthetic" in html
    assert reverse("export_synthetic", args=[survey.pk, sleep.pk, 1]) not in html


def test_a_number_question_with_bins_estimates_a_histogram_with_choice_mechanisms(organizer_client, organizer):
    survey = make_survey(organizer, expected_respondents=2000)
    response = add(organizer_client, survey, text="Commute?", range_low="0", range_high="60", bins="4", epsilon="2")
    assert response.status_code == 302
    question = survey.questions.get()
    assert question.options == ["0–15", "15–30", "30–45", "45–60"]
    assert question.mechanism in ("krr", "subset", "oue", "olh", "hadamard", "sue", "dbitflip", "cms", "hcms")
    assert question.build_mechanism().k == 4
    response = add(organizer_client, survey, range_low="0", range_high="60", bins="4", mechanism="piecewise")
    assert "needs a mechanism for choices" in response.content.decode()
    actions.do_open_survey(survey)
    html = organizer_client.get(reverse("respond", args=[survey.slug])).content.decode()
    assert 'data-bins="4"' in html and 'data-takes="index"' in html
    make_reports(question, [0, 1, 1, 2, 3] * 600, seed=3)  # bin indices, as the browser computes them
    html = organizer_client.get(reverse("survey_results", args=[survey.pk])).content.decode()
    assert "15–30" in html and "data-estimate" in html and "data-mean" not in html
    rows = organizer_client.get(reverse("export_estimates", args=[survey.pk, "json"])).json()["estimates"]
    assert [r["option"] for r in rows] == ["0–15", "15–30", "30–45", "45–60"]
    second = rows[1]
    assert second["statistic"] == "share" and second["unbiased_low"] < 0.4 < second["unbiased_high"]


def test_bins_must_be_between_two_and_twenty(organizer_client, organizer):
    survey = make_survey(organizer)
    response = add(organizer_client, survey, range_low="0", range_high="60", bins="21")
    assert response.status_code == 200 and not survey.questions.exists()
