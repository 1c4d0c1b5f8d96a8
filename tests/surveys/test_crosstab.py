"""Post-hoc cross-tabs on the results page: the pair table from stored counts, ldp's numbers, access, exports."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from django.urls import reverse

import ldp
from ldp.crosstab import PairTally, pair_tally, posthoc_estimate
from surveys import actions
from surveys.models import Report
from surveys.results import crosstabs, pair_counts
from surveys.results.estimates import SurveyState
from tests.base import make_joint_reports, make_number_question, make_question, make_survey

KOREAN = {"HTTP_ACCEPT_LANGUAGE": "ko"}
#: True joint shares of (fruit, weekday): fruit and day are related, so the conditional shares differ.
JOINT = np.array([[0.30, 0.05], [0.10, 0.25], [0.05, 0.25]])


def joint_answers(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    cells = rng.choice(JOINT.size, size=n, p=JOINT.ravel())
    return np.column_stack([cells // 2, cells % 2])


@pytest.fixture
def crossed(organizer):
    """Fruit (k-RR) and weekend (OUE) answered together by 4,000; 300 more answered fruit only; a mean."""
    survey = make_survey(organizer, title="Crossed")
    fruit = make_question(survey, text="Fruit?", options=["Apple", "Banana", "Cherry"], epsilon=3.0)
    weekend = make_question(survey, text="Weekend?", kind="yes_no", options=["Yes", "No"], epsilon=3.0, mechanism="oue")
    hours = make_number_question(survey)
    actions.do_open_survey(survey)
    answers = joint_answers(4000, seed=1)
    make_joint_reports([fruit, weekend], answers, seed=10)
    only_fruit = np.column_stack([np.zeros(300, dtype=int), -np.ones(300, dtype=int)])
    make_joint_reports([fruit, weekend], only_fruit, seed=20)
    return survey, fruit, weekend, hours


def crosstab_url(survey, first, second):
    return reverse("survey_crosstab", args=[survey.pk]) + f"?first={first.pk}&second={second.pk}"


def pair_tally_of_stored_reports(first, second):
    """T recomputed in Python from the Report rows, matched by submission (the reference for the database)."""
    r1, r2 = first.current_randomization(), second.current_randomization()
    a = dict(Report.objects.filter(randomization=r1).values_list("submission_id", "packed"))
    b = dict(Report.objects.filter(randomization=r2).values_list("submission_id", "packed"))
    both = sorted(set(a) & set(b))
    m1, m2 = r1.build_mechanism(), r2.build_mechanism()
    packed1 = m1.unpack_many(b"".join(bytes(a[s]) for s in both))
    packed2 = m2.unpack_many(b"".join(bytes(b[s]) for s in both))
    return m1, m2, pair_tally(m1, m2, packed1, packed2)


def test_the_counted_pair_table_equals_the_table_of_the_stored_reports(crossed):
    survey, fruit, weekend, _hours = crossed
    _m1, _m2, expected = pair_tally_of_stored_reports(fruit, weekend)
    pair_counts.count_survey(survey)
    table = crosstabs.pair_table(fruit.current_randomization(), weekend.current_randomization())
    assert table.n == expected.n == 4000
    assert np.array_equal(table.table, expected.table)
    # OUE's tally has 2k cells (sampled and one-bits): the table is k1 x 2 k2.
    assert table.table.shape == (3, 4)
    # Asked the other way round, the same table transposed.
    back = crosstabs.pair_table(weekend.current_randomization(), fruit.current_randomization())
    assert back.n == 4000 and np.array_equal(back.table, expected.table.T)


def test_the_page_shows_ldps_joint_and_conditional_shares(organizer_client, crossed):
    survey, fruit, weekend, _hours = crossed
    m1, m2, tally = pair_tally_of_stored_reports(fruit, weekend)
    expected = posthoc_estimate(m1, m2, tally)
    response = organizer_client.get(crosstab_url(survey, fruit, weekend))
    assert response.status_code == 200
    crosstab = response.context["crosstab"]
    np.testing.assert_array_equal(crosstab.estimate.cells, expected.cells)
    np.testing.assert_array_equal(crosstab.estimate.bands.low, expected.bands.low)
    html = response.content.decode()
    cell = re.search(r'data-cell="2-1">\s*([\d.]+) %', html).group(1)
    assert float(cell) == pytest.approx(100 * expected.consistent_cells[2, 1], abs=0.051)
    conditional = expected.conditional("first")
    share = f"{100 * conditional.shares[0, 0]:.1f} %"
    assert "Of those who chose “Apple” in “Fruit?”" in html and f"{share} chose “Yes”" in html
    # And the other way round: of those who chose each answer of the columns' question.
    by_column = expected.conditional("second")
    first_row = html[html.index('data-conditional="1"') :]
    first_row = first_row[: first_row.index("</li>")]
    assert "Of those who chose “Yes” in “Weekend?”" in first_row
    assert f"{100 * by_column.shares[0, 0]:.1f} % chose “Apple”" in " ".join(first_row.split())
    assert "<svg" in html and "Apple" in html and "data-too-few" not in html
    # The estimate is near the truth: within 4 standard errors in every cell.
    assert np.all(np.abs(expected.cells - JOINT) < 4 * expected.standard_errors)


def test_a_table_too_noisy_to_read_gets_the_small_n_notice_and_no_numbers(organizer_client, organizer):
    survey = make_survey(organizer)
    first = make_question(survey, text="A?", epsilon=0.5)
    second = make_question(survey, text="B?", epsilon=0.5)
    actions.do_open_survey(survey)
    make_joint_reports([first, second], joint_answers(200, seed=3) % 2, seed=4)
    response = organizer_client.get(crosstab_url(survey, first, second))
    crosstab = response.context["crosstab"]
    assert not crosstab.enough and crosstab.expected_half_width > 1 / 9
    html = response.content.decode()
    assert "data-too-few" in html and "data-joint" not in html and "<svg" not in html
    assert f"About {crosstab.reports_needed:,} are needed" in html


def test_the_dashboard_offers_the_selector_as_a_real_form_beside_htmx(organizer_client, crossed):
    survey, fruit, weekend, hours = crossed
    html = organizer_client.get(reverse("survey_results", args=[survey.pk])).content.decode()
    url = reverse("survey_crosstab", args=[survey.pk])
    form = re.search(r"<form[^>]*data-crosstab-form[^>]*>", html).group(0)
    assert f'action="{url}"' in form and f'hx-get="{url}"' in form and 'method="get"' in form
    selector = html[html.index("crosstab-first") : html.index("crosstab-second")]
    assert f'value="{fruit.pk}"' in selector and f'value="{weekend.pk}"' in selector
    assert f'value="{hours.pk}"' not in selector  # a mean is not a choice


def test_htmx_gets_only_the_cross_tab_fragment(organizer_client, crossed, htmx_headers):
    survey, fruit, weekend, _hours = crossed
    html = organizer_client.get(crosstab_url(survey, fruit, weekend), **htmx_headers).content.decode()
    assert html.lstrip().startswith('<div id="crosstab-body"') and "<html" not in html


def test_a_question_crossed_with_itself_is_refused_with_a_sentence(organizer_client, crossed, htmx_headers):
    survey, fruit, _weekend, _hours = crossed
    response = organizer_client.get(crosstab_url(survey, fruit, fruit), **htmx_headers)
    assert response.status_code == 400 and "Choose two different questions." in response.content.decode()


@pytest.mark.parametrize("first", ["abc", "1.5", "-1", "١"])
def test_a_malformed_question_id_is_a_400_with_a_sentence(organizer_client, crossed, first):
    survey, _fruit, weekend, _hours = crossed
    query = f"?first={first}&second={weekend.pk}"
    response = organizer_client.get(reverse("survey_crosstab", args=[survey.pk]) + query, **KOREAN)
    assert response.status_code == 400 and "목록에서 두 문항을 고르세요" in response.content.decode()
    export = organizer_client.get(reverse("export_crosstab", args=[survey.pk]) + query)
    assert export.status_code == 400 and export.json() == {"error": "Choose two questions from the lists."}


def test_a_mean_or_another_surveys_question_is_not_found(organizer_client, organizer, crossed):
    survey, fruit, _weekend, hours = crossed
    elsewhere = make_question(make_survey(organizer), text="Elsewhere?")
    assert organizer_client.get(crosstab_url(survey, fruit, hours)).status_code == 404
    assert organizer_client.get(crosstab_url(survey, fruit, elsewhere)).status_code == 404


def test_other_organizers_get_404(client, other_organizer, crossed):
    survey, fruit, weekend, _hours = crossed
    client.force_login(other_organizer)
    assert client.get(crosstab_url(survey, fruit, weekend)).status_code == 404
    export = reverse("export_crosstab", args=[survey.pk]) + f"?first={fruit.pk}&second={weekend.pk}"
    assert client.get(export).status_code == 404


def test_anonymous_visitors_are_sent_to_log_in(client, crossed):
    survey, fruit, weekend, _hours = crossed
    query = f"?first={fruit.pk}&second={weekend.pk}"
    for name in ("survey_crosstab", "export_crosstab"):
        response = client.get(reverse(name, args=[survey.pk]) + query)
        assert response.status_code == 302 and response.url.startswith(reverse("login"))


def test_the_export_re_estimates_independently_from_its_pair_table(organizer_client, crossed):
    survey, fruit, weekend, _hours = crossed
    url = reverse("export_crosstab", args=[survey.pk]) + f"?first={fruit.pk}&second={weekend.pk}"
    record = json.loads(organizer_client.get(url).content)
    mechanisms = [
        ldp.make_mechanism(q["mechanism"], k=q["k"], epsilon=q["epsilon"], **q["params"])
        for q in (record["first"], record["second"])
    ]
    table = PairTally(record["n"], np.array(record["pair_table"]))
    again = posthoc_estimate(*mechanisms, table)
    np.testing.assert_allclose(again.cells, record["unbiased"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(again.bands.high, record["high"], rtol=0, atol=1e-12)
    assert record["first"]["options"] == ["Apple", "Banana", "Cherry"] and record["method"] == "post-hoc"


def test_the_export_without_two_questions_is_a_400_with_a_sentence(organizer_client, crossed):
    survey, *_ = crossed
    response = organizer_client.get(reverse("export_crosstab", args=[survey.pk]))
    assert response.status_code == 400 and "Choose two different questions." in response.json()["error"]


def test_the_cross_tab_page_speaks_korean(organizer_client, crossed):
    survey, fruit, weekend, _hours = crossed
    html = organizer_client.get(crosstab_url(survey, fruit, weekend), **KOREAN).content.decode()
    assert "교차표" in html and "조건부 비율" in html
    assert "Conditional shares" not in html and "Cross-tabulation" not in html


def test_crossable_questions_are_the_choice_questions_with_reports(crossed):
    survey, fruit, weekend, _hours = crossed
    assert set(crosstabs.crossable(SurveyState.read(survey))) == {fruit.pk, weekend.pk}


def test_a_sketch_question_is_not_offered_for_a_post_hoc_cross_tab(organizer):
    # Its statistic is affine in its counts: crossed post hoc, its cells would be biased.
    survey = make_survey(organizer, title="Sketched")
    fruit = make_question(survey, text="Fruit?", options=["Apple", "Banana", "Cherry"], epsilon=3.0)
    sketched = make_question(survey, text="Day?", options=["Mon", "Tue", "Wed"], epsilon=3.0, mechanism="cms")
    actions.do_open_survey(survey)
    make_joint_reports([fruit, sketched], joint_answers(200, seed=3) % 2, seed=5)
    assert set(crosstabs.crossable(SurveyState.read(survey))) == {fruit.pk}
