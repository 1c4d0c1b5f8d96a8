"""Declared pairs: two choice questions randomized as one answer over their combinations, with one epsilon."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from django.urls import reverse

import ldp
from ldp.crosstab import declared_estimate, encode_pair, expected_errors
from surveys import actions
from surveys.models import Question, Randomization, Report, Submission
from surveys.responding.submissions import new_token
from surveys.results.estimates import SurveyState
from tests.base import make_number_question, make_question, make_reports, make_survey, with_stand_ins

KOREAN = {"HTTP_ACCEPT_LANGUAGE": "ko"}


@pytest.fixture
def survey(organizer):
    survey = make_survey(organizer, epsilon_cap=5.0, expected_respondents=2000)
    make_question(survey, text="Fruit?", options=["Apple", "Banana", "Cherry"], epsilon=1.0)
    make_question(survey, text="Weekend?", kind="yes_no", options=["Yes", "No"], epsilon=1.0, mechanism="oue")
    make_question(survey, text="Mood?", options=["Good", "Bad"], epsilon=0.5)
    return survey


def questions(survey):
    return {q.text: q for q in survey.questions.all()}


def declare(client, survey, first, second, **fields):
    data = {"first": first.pk, "second": second.pk, "epsilon": "2", "mechanism": "krr", **fields}
    return client.post(reverse("pair_add", args=[survey.pk]), data)


@pytest.fixture
def paired(organizer_client, survey):
    q = questions(survey)
    assert declare(organizer_client, survey, q["Fruit?"], q["Weekend?"]).status_code == 302
    return survey, q["Fruit?"], q["Weekend?"], survey.questions.get(kind="pair")


def test_a_pair_is_one_choice_question_over_the_combinations_after_its_two_questions(paired):
    survey, fruit, weekend, pair = paired
    assert (pair.pair_first, pair.pair_second, pair.epsilon, pair.mechanism) == (fruit, weekend, 2.0, "krr")
    assert pair.options == [f"{a} × {b}" for a in ["Apple", "Banana", "Cherry"] for b in ["Yes", "No"]]
    assert [q.text for q in survey.questions.all()] == ["Fruit?", "Weekend?", pair.text, "Mood?"]


def test_the_pairs_epsilon_replaces_its_two_questions_in_the_survey_total(organizer_client, paired):
    survey, _fruit, _weekend, _pair = paired
    assert survey.total_epsilon == pytest.approx(2.0 + 0.5)
    html = organizer_client.get(survey.get_absolute_url()).content.decode()
    assert re.search(r"data-total-epsilon>2.5<", html) and html.count("data-asked-jointly") == 2


def test_a_pair_over_the_cap_is_refused_and_nothing_is_stored(organizer_client, survey):
    q = questions(survey)
    response = declare(organizer_client, survey, q["Fruit?"], q["Weekend?"], epsilon="4.6")
    assert "This would bring the survey to ε = 5.1, over its total of 5," in response.content.decode()
    assert not survey.questions.filter(kind="pair").exists()


def test_the_builder_shows_both_expected_errors_as_ldp_computes_them(organizer_client, paired):
    survey, fruit, weekend, pair = paired
    expected = expected_errors(fruit.build_mechanism(), weekend.build_mechanism(), pair.build_mechanism(), 2000)
    html = organizer_client.get(survey.get_absolute_url()).content.decode()
    table = html[html.index("data-pair-errors") :]
    declared = re.search(r"data-declared>.*?± ([\d.]+)", table, re.S).group(1)
    posthoc = re.search(r"data-posthoc>.*?± ([\d.]+)", table, re.S).group(1)
    assert float(declared) == pytest.approx(100 * expected.declared, abs=0.051)
    assert float(posthoc) == pytest.approx(100 * expected.posthoc, abs=0.051)
    assert expected.declared < expected.posthoc and "ε = 2" in table


@pytest.mark.parametrize("case", ["same", "too many", "mean", "answered", "already paired"])
def test_what_cannot_be_paired_is_refused_with_a_sentence(organizer_client, organizer, survey, case):
    q = questions(survey)
    first, second = q["Fruit?"], q["Mood?"]
    if case == "same":
        second, message = first, "Choose two different questions."
    elif case == "too many":
        first = make_question(survey, text="Many?", options=[str(i) for i in range(9)])
        second = make_question(survey, text="More?", options=[str(i) for i in range(8)])
        message = "A pair has at most 64 combinations of answers; these two have 72."
    elif case == "mean":
        second, message = make_number_question(survey), "Select a valid choice."
    elif case == "answered":
        actions.do_open_survey(survey)
        make_reports(second, [0, 1])
        message = "Select a valid choice."
    else:
        declare(organizer_client, survey, q["Fruit?"], q["Weekend?"])
        message = "Select a valid choice."
    pairs = survey.questions.filter(kind="pair").count()
    response = declare(organizer_client, survey, first, second)
    assert response.status_code == 200 and message in response.content.decode()
    assert survey.questions.filter(kind="pair").count() == pairs


def test_the_builder_offers_the_pair_form_in_korean(organizer_client, survey):
    html = organizer_client.get(survey.get_absolute_url(), **KOREAN).content.decode()
    assert "두 문항을 함께 묻기" in html and "Ask two questions jointly" not in html


def test_htmx_gets_only_the_pair_form_back_on_an_error(organizer_client, survey, htmx_headers):
    q = questions(survey)
    data = {"first": q["Fruit?"].pk, "second": q["Fruit?"].pk, "epsilon": "1", "mechanism": "krr"}
    response = organizer_client.post(reverse("pair_add", args=[survey.pk]), data, **htmx_headers)
    assert response["HX-Retarget"] == "#add-pair" and response.content.decode().lstrip().startswith("<details")


def test_other_organizers_get_404(client, other_organizer, survey):
    q = questions(survey)
    client.force_login(other_organizer)
    assert declare(client, survey, q["Fruit?"], q["Weekend?"]).status_code == 404
    assert not survey.questions.filter(kind="pair").exists()


def open_with_pair(paired):
    survey, fruit, weekend, pair = paired
    actions.do_open_survey(survey)
    return survey, fruit, weekend, pair


def post(client, survey, reports):
    body = json.dumps({"token": new_token(survey), "reports": reports})
    return client.post(reverse("submit", args=[survey.slug]), body, content_type="application/json")


def test_opening_gives_the_pair_a_randomization_and_its_questions_none(paired):
    survey, fruit, weekend, pair = open_with_pair(paired)
    assert pair.current_randomization().k == 6
    assert not Randomization.objects.filter(question__in=[fruit, weekend], retired=False).exists()


def test_a_joint_report_is_stored_against_the_pair(client, paired):
    survey, _fruit, _weekend, pair = open_with_pair(paired)
    version = pair.current_randomization().version
    sent = with_stand_ins(survey, [{"question": pair.pk, "version": version, "report": {"value": 5}}])
    response = post(client, survey, sent)
    assert response.status_code == 201, response.content
    assert Report.objects.get(question=pair).question == pair
    assert response.json()["receipt"][0]["epsilon"] == 2.0


@pytest.mark.parametrize(
    ("report", "message"),
    [
        ({"value": 6}, "is malformed"),
        ({"value": -1}, "is malformed"),
        ({"value": "5"}, "is malformed"),
        ({"first": 1, "second": 0}, "is malformed"),
    ],
)
def test_a_bad_joint_report_is_a_400_and_nothing_is_stored(client, paired, report, message):
    survey, _fruit, _weekend, pair = open_with_pair(paired)
    version = pair.current_randomization().version
    response = post(client, survey, [{"question": pair.pk, "version": version, "report": report}])
    assert response.status_code == 400 and message in response.json()["error"]
    assert not Submission.objects.exists() and not Report.objects.exists()


def test_a_report_for_a_question_of_the_pair_alone_is_a_400_and_nothing_is_stored(client, paired):
    survey, fruit, _weekend, _pair = open_with_pair(paired)
    response = post(client, survey, [{"question": fruit.pk, "version": 1, "report": {"value": 0}}])
    assert response.status_code == 400 and "names a question this survey does not have" in response.json()["error"]
    assert not Submission.objects.exists()


def test_the_answer_page_asks_both_questions_and_sends_only_the_pair(client, paired):
    survey, fruit, weekend, pair = open_with_pair(paired)
    html = client.get(survey.get_share_url()).content.decode()
    specs = json.loads(re.search(r'id="murmur-specs"[^>]*>(.*?)</script>', html, re.S).group(1))
    assert [s["question"] for s in specs] == [pair.pk, questions(survey)["Mood?"].pk]
    assert specs[0]["spec"]["k"] == 6
    first = re.search(rf'<fieldset[^>]*data-question-id="{fruit.pk}"[^>]*>', html).group(0)
    assert f'data-pair="{pair.pk}"' in first and 'data-pair-role="first"' in first and 'data-options="3"' in first
    assert 'data-pair-role="second"' in re.search(rf'<fieldset[^>]*data-question-id="{weekend.pk}"[^>]*>', html).group(
        0
    )
    assert f'data-question-id="{pair.pk}"' not in html
    promise = json.loads(re.search(r'id="murmur-promise"[^>]*>(.*?)</script>', html, re.S).group(1))
    assert promise["total"] == 2.5 and set(promise["questions"]) == {str(pair.pk), str(specs[1]["question"])}


@pytest.fixture
def answered(paired):
    survey, fruit, weekend, pair = open_with_pair(paired)
    rng = np.random.default_rng(4)
    joint = np.array([[0.3, 0.1], [0.05, 0.25], [0.2, 0.1]])
    cells = rng.choice(6, size=3000, p=joint.ravel())
    make_reports(pair, list(encode_pair(cells // 2, cells % 2, 2)), seed=7)
    return survey, fruit, weekend, pair


def estimate_from_reports(pair):
    randomization = pair.current_randomization()
    mechanism = randomization.build_mechanism()
    packed = b"".join(bytes(p) for p in Report.objects.filter(question=pair).values_list("packed", flat=True))
    return declared_estimate(mechanism, mechanism.tally(mechanism.unpack_many(packed)), 3, 2)


def test_the_dashboard_shows_the_pairs_cross_tab_and_marginals_as_ldp_computes_them(organizer_client, answered):
    survey, _fruit, _weekend, pair = answered
    expected = estimate_from_reports(pair)
    html = organizer_client.get(reverse("survey_results", args=[survey.pk])).content.decode()
    card = html[html.index(f'id="result-{pair.pk}"') :]
    card = card[: card.index("</article>")]
    assert "<svg" in card and "data-joint" in card and 'data-conditional="0"' in card and 'data-conditional="1"' in card
    cell = re.search(r'data-cell="1-1">\s*([\d.]+) %', card).group(1)
    assert float(cell) == pytest.approx(100 * expected.consistent_cells[1, 1], abs=0.051)
    marginal = card[card.index('data-marginal="0"') :]
    shown = re.search(r'data-option="2">\s*<th[^>]*>Cherry</th>\s*<td>([\d.]+) %', marginal).group(1)
    assert float(shown) == pytest.approx(100 * expected.marginal("first").shares[2], abs=0.051)


def test_the_exports_carry_the_pair_tally_and_re_estimate_independently(organizer_client, answered):
    survey, fruit, weekend, pair = answered
    payload = organizer_client.get(reverse("export_estimates", args=[survey.pk, "json"])).json()
    (record,) = payload["declared_pairs"]
    assert (record["first_question_id"], record["second_question_id"], record["k1"], record["k2"]) == (
        fruit.pk,
        weekend.pk,
        3,
        2,
    )
    mechanism = ldp.make_mechanism(record["mechanism"], k=record["k"], epsilon=record["epsilon"], **record["params"])
    again = declared_estimate(mechanism, ldp.Tally(record["n"], np.array(record["counts"])), 3, 2)
    rows = [r for r in payload["estimates"] if r["question_id"] == pair.pk]
    shares = [r["unbiased"] for r in rows if r["statistic"] == "share"]
    first = [r["unbiased"] for r in rows if r["statistic"] == "first_share"]
    np.testing.assert_allclose(shares, again.cells.ravel(), atol=1e-12)
    np.testing.assert_allclose(first, again.marginal("first").shares, atol=1e-12)
    csv = organizer_client.get(reverse("export_estimates", args=[survey.pk, "csv"])).content.decode("utf-8-sig")
    assert "second_share" in csv and "Apple × Yes" in csv


def test_a_question_of_a_pair_keeps_its_kind_and_option_count_but_may_be_reworded(organizer_client, paired):
    survey, fruit, _weekend, pair = paired
    url = reverse("question_edit", args=[survey.pk, fruit.pk])
    data = {"text": "Fruit?", "kind": "single", "options_text": "Apple\nBanana", "epsilon": "1", "mechanism": "krr"}
    response = organizer_client.post(url, data)
    assert "keep its kind and number of options" in response.content.decode()
    data["options_text"] = "Apfel\nBanane\nKirsche"
    assert organizer_client.post(url, data).status_code == 302
    pair.refresh_from_db()
    assert pair.options[0] == "Apfel × Yes" and pair.k == 6


def test_deleting_the_pair_gives_its_questions_their_own_budgets_back(organizer_client, paired):
    survey, fruit, _weekend, pair = paired
    organizer_client.post(reverse("question_delete", args=[survey.pk, pair.pk]))
    assert not Question.objects.filter(pk=pair.pk).exists()
    assert survey.total_epsilon == pytest.approx(1.0 + 1.0 + 0.5)
    actions.do_open_survey(survey)
    assert fruit.current_randomization() is not None


def test_the_preview_checks_a_joint_report_as_the_server_would(organizer_client, paired):
    survey, _fruit, _weekend, pair = paired
    body = json.dumps({"reports": [{"question": pair.pk, "version": 0, "report": {"value": 9}}]})
    response = organizer_client.post(
        reverse("survey_preview_check", args=[survey.pk]), body, content_type="application/json"
    )
    assert response.status_code == 400 and "is malformed" in response.json()["error"]


def test_the_builder_speaks_korean_about_pairs(organizer_client, paired):
    survey, *_ = paired
    html = organizer_client.get(survey.get_absolute_url(), **KOREAN).content.decode()
    assert "함께 묻는 문항 쌍 “" in html and "사후 교차(각 문항을 따로 물을 때)" in html
    assert "Asked jointly" not in html and "Post hoc" not in html


def test_a_copy_of_the_survey_pairs_the_copies_of_its_questions(paired):
    survey, _fruit, _weekend, _pair = paired
    copy = actions.do_duplicate_survey(survey)
    pair = copy.questions.get(kind="pair")
    assert pair.pair_first.survey == copy and pair.pair_second.survey == copy
    assert (pair.pair_first.text, pair.pair_second.text) == ("Fruit?", "Weekend?")
    assert copy.total_epsilon == survey.total_epsilon


def test_the_next_round_of_a_recurring_survey_pairs_its_own_questions(paired):
    from surveys.series import rounds

    survey, _fruit, _weekend, _pair = open_with_pair(paired)
    rounds.do_make_recurring(survey, "manual")
    after = rounds.do_open_next_round(survey)
    pair = after.questions.get(kind="pair")
    assert pair.pair_first.survey == after and pair.pair_second.survey == after
    assert pair.current_randomization().k == 6 and pair.pair_first.current_randomization() is None
    assert after.total_epsilon == survey.total_epsilon == 2.5


def test_the_transparency_page_states_the_total_a_pair_survey_spends(client, paired):
    survey, _fruit, _weekend, pair = open_with_pair(paired)
    response = client.get(reverse("transparency", args=[survey.slug]))
    assert response.context["total_epsilon"] == pytest.approx(survey.total_epsilon) == 2.5
    assert pair.text in response.content.decode()


def test_a_question_of_a_pair_keeps_an_epsilon_that_fits_the_cap_without_the_pair(organizer_client, paired):
    # Deleting the pair gives the question its own epsilon back: with 4.5 here, the survey (cap 5)
    # would spend 4.5 + 1 + 0.5 once the pair is gone, so the raise is refused while still paired.
    survey, fruit, _weekend, _pair = paired
    url = reverse("question_edit", args=[survey.pk, fruit.pk])
    data = {"text": "Fruit?", "kind": "single", "options_text": "Apple\nBanana\nCherry", "epsilon": "4.5"}
    response = organizer_client.post(url, data | {"mechanism": "krr"})
    assert response.status_code == 200 and "over its total of 5" in response.content.decode()
    fruit.refresh_from_db()
    assert fruit.epsilon == 1.0
    assert organizer_client.post(url, data | {"epsilon": "3.5", "mechanism": "krr"}).status_code == 302


def test_a_paired_questions_results_page_points_to_the_pair(organizer_client, answered):
    survey, fruit, _weekend, pair = answered
    page = organizer_client.get(reverse("question_results", args=[survey.pk, fruit.pk]), **KOREAN).content.decode()
    assert "data-asked-in-pair" in page and f'href="{reverse("question_results", args=[survey.pk, pair.pk])}"' in page
    assert "함께 묻는 문항 쌍에 속합니다" in page and "아직 보고값이 없습니다" not in page


def test_the_pairs_card_is_made_from_the_tally_its_result_was_read_with(answered, monkeypatch):
    # Reading the tally again could take in reports that arrived since: the card's cells would then
    # not match its n, and its chart would be cached under the older tally's digest.
    from surveys.responding import tallies
    from surveys.results import cards
    from surveys.results.estimates import SurveyState

    survey, _fruit, _weekend, pair = answered
    (result,) = SurveyState.read(survey).results(pair)

    def refuse(*args, **kwargs):
        raise AssertionError("the pair's tally was read again")

    monkeypatch.setattr(tallies, "read_tallies", refuse)
    view = cards.result_view(result, "consistent")
    expected = estimate_from_reports(pair)
    assert view["rows"][1]["cells"][1]["unbiased"] == pytest.approx(expected.cells[1, 1], abs=1e-12)


def test_the_builder_shows_no_post_hoc_error_for_a_sketched_question(organizer_client, survey):
    # A count-mean sketch cannot be crossed post hoc: the trade-off table must not offer a number for it.
    q = questions(survey)
    q["Fruit?"].mechanism, q["Fruit?"].mechanism_params = "cms", {"hash_count": 4, "width": 16, "hash_seed": 1}
    q["Fruit?"].save(update_fields=["mechanism", "mechanism_params"])
    assert declare(organizer_client, survey, q["Fruit?"], q["Weekend?"]).status_code == 302
    html = organizer_client.get(survey.get_absolute_url(), **KOREAN).content.decode()
    row = html[html.index("data-posthoc>") :]
    row = row[: row.index("</tr>")]
    assert "data-posthoc-unavailable" in row and "사후 교차할 수 없습니다" in row and "±" not in row


def test_a_pair_with_too_few_reports_shows_the_small_n_notice_and_no_numbers(organizer_client, paired):
    survey, _fruit, _weekend, pair = open_with_pair(paired)
    make_reports(pair, [0, 3, 5, 1, 2, 4] * 5, seed=3)  # 30 joint reports over 6 combinations at epsilon 2
    (result,) = SurveyState.read(survey).results(pair)
    assert result.n == 30 and not result.enough and result.expected_half_width > 1 / 6
    for url in (reverse("survey_results", args=[survey.pk]), reverse("question_results", args=[survey.pk, pair.pk])):
        html = organizer_client.get(url).content.decode()
        card = html[html.index(f'id="result-{pair.pk}"') :]
        card = " ".join(card[: card.index("</article>")].split())
        assert "data-too-few" in card and "Too few responses to read this table" in card
        assert f"About {result.reports_needed:,} reports are needed" in card
        assert "data-joint" not in card and "data-marginal" not in card and "data-conditional" not in card
        assert "<svg" not in card and set(re.findall(r"([\d.]+) ?%", card)) == {"95"}  # no share, only "95 %"
