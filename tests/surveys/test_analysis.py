"""The analysis page: regression of a randomized answer on questions asked directly, weighting to
population margins, their export, and small-group protection on every page and export."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from django.urls import reverse

from ldp.regression import dummies, fit_regression
from ldp.weighting import post_stratify, raked_estimate
from surveys import actions
from tests.base import make_boruch_survey, make_joint_reports, make_question, make_survey

N = 600
DEPARTMENTS = ["Sales", "Engineering", "Support", "Legal"]
AGES = ["Under 40", "40 and over"]


def answers(seed: int = 3, legal: int = 4) -> np.ndarray:
    """Department (Legal: only ``legal`` people), age band, and a yes/no answer whose share of
    "yes" (option 0) rises with department and age."""
    rng = np.random.default_rng(seed)
    department = rng.choice(3, size=N, p=[0.5, 0.3, 0.2])
    department[:legal] = 3
    age = rng.integers(0, 2, size=N)
    p_yes = 1 / (1 + np.exp(-(-1.0 + 0.8 * (department == 1) + 0.4 * (department == 2) + 0.6 * age)))
    outcome = (rng.random(N) >= p_yes).astype(int)  # 0 = yes
    return np.column_stack([outcome, department, age])


@pytest.fixture
def survey(organizer):
    survey = make_survey(organizer)
    groups = {"Department?": DEPARTMENTS, "Age band?": AGES}
    make_boruch_survey(survey, ["Yes", "No"], groups, "Did you ever hide a mistake?")
    make_joint_reports(list(survey.questions.all()), answers())
    return survey


def stored(survey, drop_legal=True):
    """The reports and direct answers as stored, joined by submission (the test's own join); Legal's
    4 people are a group below 10, left out when the analysis groups by department."""
    from surveys.models import Report

    outcome, department, age = survey.questions.all()
    by_submission: dict[int, dict[int, int]] = {}
    for sid, qid, packed in Report.objects.filter(question__survey=survey).values_list(
        "submission_id", "question_id", "packed"
    ):
        by_submission.setdefault(sid, {})[qid] = bytes(packed)[0]
    rows = sorted(by_submission.items())
    table = np.array([[r[outcome.pk], r[department.pk], r[age.pk]] for _, r in rows])
    return outcome, table[table[:, 1] != 3] if drop_legal else table


def query(survey, margins=False):
    outcome, department, age = survey.questions.all()
    params = {"outcome": outcome.pk, "covariates": [department.pk, age.pk]}
    if margins:
        params |= {f"margin_{department.pk}_{i}": v for i, v in enumerate([40, 40, 20, 0])}
        params |= {f"margin_{age.pk}_{i}": v for i, v in enumerate([50, 50])}
    return params


def test_the_regression_matches_ldp_on_the_same_data(organizer_client, survey):
    response = organizer_client.get(reverse("survey_analysis", args=[survey.pk]), query(survey))
    assert response.status_code == 200
    table = response.context["table"]
    outcome, data = stored(survey)
    x = np.column_stack([np.ones(len(data)), dummies(data[:, 1], 3), dummies(data[:, 2], 2)])
    expected = fit_regression(outcome.build_mechanism(), data[:, 0], x)
    got = np.array([c.estimate for c in table.coefficients])
    np.testing.assert_allclose(got, expected.coefficients.ravel(), atol=1e-9)
    np.testing.assert_allclose(
        [c.standard_error for c in table.coefficients], expected.standard_errors.ravel(), rtol=1e-9
    )
    assert table.n == len(data) == N - 4
    page = response.content.decode()
    assert "Regression coefficients" in page and "Department?: Engineering / Sales" in page
    assert "<svg" in response.context["table"].chart


def test_the_weighted_estimate_matches_ldp_raking(organizer_client, survey):
    response = organizer_client.get(reverse("survey_analysis", args=[survey.pk]), query(survey, margins=True))
    weights = response.context["weights"]
    outcome, data = stored(survey)
    expected = raked_estimate(outcome.build_mechanism(), data[:, 0], data[:, 1:], [[0.4, 0.4, 0.2], [0.5, 0.5]])
    np.testing.assert_allclose([s.weighted for s in weights.shares], expected.proportions, atol=1e-12)
    np.testing.assert_allclose([s.weighted_se for s in weights.shares], expected.standard_errors, atol=1e-12)
    plain = post_stratify(outcome.build_mechanism(), data[:, 0], np.zeros(len(data), dtype=int), [1.0])
    np.testing.assert_allclose([s.unweighted for s in weights.shares], plain.proportions, atol=1e-12)
    assert weights.method == "raked"
    assert "Weighted to the population" in response.content.decode()


def test_one_margin_post_stratifies(organizer_client, survey):
    outcome, department, age = survey.questions.all()
    params = query(survey) | {f"margin_{age.pk}_0": 30, f"margin_{age.pk}_1": 70}
    weights = organizer_client.get(reverse("survey_analysis", args=[survey.pk]), params).context["weights"]
    _, data = stored(survey, drop_legal=False)  # weighting by age alone: department's groups play no part
    expected = post_stratify(outcome.build_mechanism(), data[:, 0], data[:, 2], [0.3, 0.7])
    np.testing.assert_allclose([s.weighted for s in weights.shares], expected.proportions, atol=1e-12)
    assert weights.method == "post-stratified"


def test_the_export_holds_the_same_numbers(organizer_client, survey):
    page = organizer_client.get(reverse("survey_analysis", args=[survey.pk]), query(survey, margins=True))
    export = organizer_client.get(reverse("export_analysis", args=[survey.pk]), query(survey, margins=True))
    record = json.loads(export.content)
    assert [c["estimate"] for c in record["regression"]["coefficients"]] == [
        c.estimate for c in page.context["table"].coefficients
    ]
    assert record["weighting"]["shares"][0]["weighted"] == page.context["weights"].shares[0].weighted
    assert record["minimum_group"] == 10 and record["small_groups_left_out"] is True


def test_strangers_cannot_see_the_analysis(client, other_organizer, survey):
    client.force_login(other_organizer)
    assert client.get(reverse("survey_analysis", args=[survey.pk])).status_code == 404
    assert client.get(reverse("export_analysis", args=[survey.pk]), query(survey)).status_code == 404


def test_the_results_page_links_to_the_analysis(organizer_client, survey):
    page = organizer_client.get(reverse("survey_results", args=[survey.pk])).content.decode()
    assert reverse("survey_analysis", args=[survey.pk]) in page


def test_the_builder_says_how_many_respondents_detect_a_difference(organizer_client, survey):
    outcome = survey.questions.first()
    response = organizer_client.get(
        reverse("survey_power", args=[survey.pk]), {"question": outcome.pk, "share_a": 30, "share_b": 40}
    )
    from ldp.power import two_shares_sample_size

    assert response.context["needed"] == two_shares_sample_size(outcome.build_mechanism(), 0.3, 0.4)
    assert response.context["needed_direct"] == 354  # z^2 (0.21 + 0.24) / 0.01, docs/designs.md
    assert "respondents in each group" in response.content.decode()
    # The same comparison as a logistic regression's group coefficient: about twice the per-group n,
    # since it counts both groups (the Wald tests agree to first order).
    regression = response.context["needed_regression"]
    assert 1.8 * response.context["needed"] < regression < 2.2 * response.context["needed"]


# -- small groups --------------------------------------------------------------------------------


def legal_rows(html: str) -> list[str]:
    """Every table row naming the Legal department (4 people) on a page."""
    import re

    return [row for row in re.findall(r"<tr[^>]*>.*?</tr>", html, re.S) if "Legal" in row]


def test_no_group_below_ten_appears_on_any_page_or_export(client, organizer_client, survey):
    survey.public_results = True
    survey.save(update_fields=["public_results"])
    outcome, department, age = survey.questions.all()
    pages = [
        organizer_client.get(reverse("survey_results", args=[survey.pk])),
        organizer_client.get(reverse("question_results", args=[survey.pk, department.pk])),
        client.get(reverse("public_results", args=[survey.slug])),
        organizer_client.get(reverse("survey_analysis", args=[survey.pk]), query(survey, margins=True)),
        organizer_client.get(reverse("survey_crosstab", args=[survey.pk])),
        client.get(reverse("transparency", args=[survey.slug])),
    ]
    for response in pages:
        assert response.status_code == 200
        for row in legal_rows(response.content.decode()):
            assert "data-hidden-group" in row and "4" not in row.replace("Legal", "")
    # The direct card shows Legal hidden, and Support (its secondary suppression) too: 4 + Support >= 10.
    results = pages[0].content.decode()
    assert len(legal_rows(results)) == 1
    # The analysis names no group of Legal, and every group it predicts has at least 10 respondents.
    analysis_page = pages[3]
    assert "Legal" not in str(analysis_page.context["table"].predicted)
    assert all(len(g.group) for g in analysis_page.context["table"].predicted)
    # Cross-tabs offer no question asked directly.
    assert department not in pages[4].context["choices"] and age not in pages[4].context["choices"]

    estimates = json.loads(organizer_client.get(reverse("export_estimates", args=[survey.pk, "json"])).content)
    rows = estimates["estimates"] if isinstance(estimates, dict) else estimates
    legal = [r for r in rows if r.get("option") == "Legal"]
    assert legal and all(r["raw_count"] is None and r["unbiased"] is None for r in legal)
    csv_text = organizer_client.get(reverse("export_estimates", args=[survey.pk, "csv"])).content.decode()
    import csv
    import io

    legal_csv = [r for r in csv.DictReader(io.StringIO(csv_text)) if r["option"] == "Legal"]
    assert legal_csv and all(r["raw_count"] == "" and r["unbiased"] == "" for r in legal_csv)

    for fmt in ("json", "csv"):
        response = organizer_client.get(reverse("export_reports", args=[survey.pk, fmt]))
        body = b"".join(response.streaming_content).decode()
        if fmt == "json":
            reports = json.loads(body)["reports"]
            assert {r["question_id"] for r in reports} == {outcome.pk}  # no answer given directly
        else:
            lines = body.splitlines()[1:]
            assert lines and all(line.split(",")[3] == str(outcome.pk) for line in lines)

    record = json.loads(organizer_client.get(reverse("export_analysis", args=[survey.pk]), query(survey, True)).content)
    assert "Legal" not in json.dumps(record)
    assert record["n"] is None and record["n_at_least"] == 590  # 596 analysed: 600 - 596 would tell Legal's 4
    assert "n ≥ <span data-n>590</span>" in analysis_page.content.decode()


def test_a_choice_outcome_gets_a_multinomial_regression(organizer_client, organizer):
    survey = make_survey(organizer, title="Commute")
    make_question(survey, text="How do you commute?", options=["Car", "Bus", "Bike"], epsilon=2.0, mechanism="krr")
    make_question(survey, text="Region?", options=["North", "South"], epsilon=math.inf, mechanism="direct")
    actions.do_open_survey(survey)
    rng = np.random.default_rng(5)
    region = rng.integers(0, 2, size=400)
    mode = np.where(region == 0, rng.choice(3, size=400, p=[0.6, 0.3, 0.1]), rng.choice(3, size=400, p=[0.2, 0.3, 0.5]))
    make_joint_reports(list(survey.questions.all()), np.column_stack([mode, region]))
    outcome, covariate = survey.questions.all()
    response = organizer_client.get(
        reverse("survey_analysis", args=[survey.pk]), {"outcome": outcome.pk, "covariates": [covariate.pk]}
    )
    table = response.context["table"]
    assert [c.option for c in table.coefficients] == ["Car", "Bus"] * 2  # log-odds against "Bike"
    assert len(table.predicted) == 2 * 3  # both regions, every option
    shares = {(g.group, g.option): g.share for g in table.predicted}
    assert shares[("North", "Car")] > shares[("South", "Car")]
