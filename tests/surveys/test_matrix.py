"""Matrix questions: built as one block, stored and randomized per item, answered as a grid, shown as one card."""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pytest
from django.urls import reverse

import ldp
from surveys import actions
from surveys.models import Matrix, Question, Report, Submission, TallyCell
from surveys.responding.submissions import new_token
from surveys.results import charts
from tests.base import make_question, make_reports, make_survey

KOREAN = {"HTTP_ACCEPT_LANGUAGE": "ko"}
LIKERT = "Disagree\nNeutral\nAgree"


def add_matrix(client, survey, **fields):
    data = {
        "title": "How much do you agree?",
        "items_text": "The tools are good\nThe team is kind\nThe pay is fair",
        "options_text": LIKERT,
        "epsilon": "1.5",
        "mechanism": "auto",
        **fields,
    }
    return client.post(reverse("matrix_add", args=[survey.pk]), data)


@pytest.fixture
def survey(organizer):
    survey = make_survey(organizer, epsilon_cap=10.0)
    make_question(survey, text="Before the grid?")
    return survey


@pytest.fixture
def with_matrix(organizer_client, survey):
    assert add_matrix(organizer_client, survey).status_code == 302
    make_question(survey, text="After the grid?")
    return survey, Matrix.objects.get(survey=survey)


def test_a_matrix_is_stored_as_one_choice_question_per_item_on_the_shared_options(with_matrix):
    survey, matrix = with_matrix
    items = list(matrix.items.order_by("position"))
    assert [q.text for q in items] == ["The tools are good", "The team is kind", "The pay is fair"]
    assert {q.kind for q in items} == {Question.Kind.MATRIX}
    assert all(q.options == ["Disagree", "Neutral", "Agree"] and q.epsilon == 1.5 for q in items)
    assert all(q.mechanism_chosen_automatically and q.mechanism for q in items)
    assert [q.text for q in survey.questions.all()] == [
        "Before the grid?",
        "The tools are good",
        "The team is kind",
        "The pay is fair",
        "After the grid?",
    ]


def test_the_block_total_is_shown_and_counted_in_the_survey_budget(organizer_client, with_matrix):
    survey, _matrix = with_matrix
    assert survey.total_epsilon == pytest.approx(1.0 + 3 * 1.5 + 1.0)
    html = organizer_client.get(survey.get_absolute_url()).content.decode()
    block = re.search(r"data-matrix-epsilon>(.*?)</p>", html, re.S).group(1)
    assert "3 items" in block and "ε = 4.5 in all" in block
    assert re.search(r"data-total-epsilon>6.5<", html)


def test_a_matrix_over_the_cap_is_refused_and_nothing_is_stored(organizer_client, survey):
    response = add_matrix(organizer_client, survey, epsilon="4")
    assert response.status_code == 200
    assert "would bring the survey to ε = 13, over its total of 10" in response.content.decode()
    assert not Matrix.objects.exists() and survey.questions.count() == 1


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"items_text": "Only one"}, "Give between 2 and 30 items; you gave 1."),
        ({"items_text": "Same\nsame"}, "Each item may appear only once."),
        ({"options_text": "Alone"}, "Give between 2 and 64 options; you gave 1."),
        ({"title": ""}, "This field is required."),
    ],
)
def test_a_bad_matrix_is_refused_with_a_sentence(organizer_client, survey, fields, message):
    response = add_matrix(organizer_client, survey, **fields)
    assert message in response.content.decode()
    assert not Matrix.objects.exists()


def test_htmx_gets_only_the_matrix_form_back_on_an_error(organizer_client, survey, htmx_headers):
    data = {"title": "T", "items_text": "One", "options_text": LIKERT, "epsilon": "1", "mechanism": "auto"}
    response = organizer_client.post(reverse("matrix_add", args=[survey.pk]), data, **htmx_headers)
    html = response.content.decode()
    assert response["HX-Retarget"] == "#add-matrix" and html.lstrip().startswith('<details id="add-matrix"')


def test_an_item_is_edited_as_its_own_question_but_keeps_the_shared_options(organizer_client, with_matrix):
    survey, matrix = with_matrix
    item = matrix.items.order_by("position").first()
    data = {"text": "Tools?", "kind": "matrix", "options_text": "A\nB", "epsilon": "0.5", "mechanism": "krr"}
    response = organizer_client.post(reverse("question_edit", args=[survey.pk, item.pk]), data)
    assert response.status_code == 302
    item.refresh_from_db()
    assert (item.text, item.epsilon, item.mechanism, item.options) == (
        "Tools?",
        0.5,
        "krr",
        ["Disagree", "Neutral", "Agree"],
    )
    assert survey.total_epsilon == pytest.approx(1.0 + 0.5 + 3.0 + 1.0)


def test_an_item_cannot_leave_its_matrix_nor_a_question_become_an_item(organizer_client, with_matrix):
    survey, matrix = with_matrix
    item = matrix.items.first()
    data = {"text": "Tools?", "kind": "single", "options_text": LIKERT, "epsilon": "1", "mechanism": "krr"}
    response = organizer_client.post(reverse("question_edit", args=[survey.pk, item.pk]), data)
    assert response.status_code == 200 and Question.objects.get(pk=item.pk).kind == "matrix"
    data = {"text": "New?", "kind": "matrix", "options_text": LIKERT, "epsilon": "1", "mechanism": "krr"}
    response = organizer_client.post(reverse("question_add", args=[survey.pk]), data)
    assert response.status_code == 200 and not survey.questions.filter(text="New?").exists()


def test_a_matrix_moves_as_a_block_and_its_items_among_themselves(organizer_client, with_matrix):
    survey, matrix = with_matrix
    organizer_client.post(reverse("matrix_move", args=[survey.pk, matrix.pk]), {"direction": "down"})
    order = [q.text for q in survey.questions.all()]
    assert order == ["Before the grid?", "After the grid?", "The tools are good", "The team is kind", "The pay is fair"]
    kind = matrix.items.get(text="The team is kind")
    organizer_client.post(reverse("question_move", args=[survey.pk, kind.pk]), {"direction": "up"})
    order = [q.text for q in survey.questions.all()]
    assert order[2:] == ["The team is kind", "The tools are good", "The pay is fair"]
    # An item at the top of its block does not leave it.
    organizer_client.post(reverse("question_move", args=[survey.pk, kind.pk]), {"direction": "up"})
    assert [q.text for q in survey.questions.all()] == order


def test_a_matrix_is_deleted_whole_unless_it_has_reports(organizer_client, with_matrix):
    survey, matrix = with_matrix
    actions.do_open_survey(survey)
    make_reports(matrix.items.first(), [0, 1, 2])
    organizer_client.post(reverse("matrix_delete", args=[survey.pk, matrix.pk]))
    assert matrix.items.count() == 3
    Report.objects.all().delete()
    organizer_client.post(reverse("matrix_delete", args=[survey.pk, matrix.pk]))
    assert not Matrix.objects.exists() and survey.questions.count() == 2


def test_other_organizers_get_404(client, other_organizer, with_matrix):
    survey, matrix = with_matrix
    client.force_login(other_organizer)
    assert add_matrix(client, survey).status_code == 404
    assert client.post(reverse("matrix_delete", args=[survey.pk, matrix.pk])).status_code == 404
    assert client.post(reverse("matrix_move", args=[survey.pk, matrix.pk]), {"direction": "up"}).status_code == 404
    assert Matrix.objects.filter(pk=matrix.pk).exists()


def test_the_answer_page_shows_one_accessible_grid(client, with_matrix):
    survey, matrix = with_matrix
    actions.do_open_survey(survey)
    html = client.get(survey.get_share_url()).content.decode()
    grid = html[html.index("data-matrix-grid") : html.index("</fieldset>", html.index("data-matrix-grid"))]
    items = list(matrix.items.order_by("position"))
    assert grid.count("<tr data-question-id=") == 3 and grid.count('<th scope="row"') == 3
    assert grid.count('<th scope="col"') == 3 and grid.count('type="radio"') == 9
    assert f'aria-labelledby="item-{items[0].pk} matrix-{matrix.pk}-option-0"' in grid
    assert "name=" not in grid  # nameless inputs: never serialized
    assert "2. How much do you agree?" in html and "3. After the grid?" in html
    assert html.count(f'data-question-id="{items[1].pk}"') == 1


def test_the_dashboard_shows_one_compact_card_with_ldps_numbers(organizer_client, with_matrix):
    survey, matrix = with_matrix
    actions.do_open_survey(survey)
    rng = np.random.default_rng(2)
    items = list(matrix.items.order_by("position"))
    for i, item in enumerate(items):
        make_reports(item, list(rng.choice(3, size=800, p=[0.2, 0.3, 0.5])), seed=i)
    response = organizer_client.get(reverse("survey_results", args=[survey.pk]))
    html = response.content.decode()
    card = html[html.index("data-matrix-result") : html.index("</article>", html.index("data-matrix-result"))]
    assert "<svg" in card and "How much do you agree?" in card and card.count("data-matrix-item=") == 3
    # The chart's legend: every option's full label beside its bars' colour, as a list that wraps.
    legend = card[card.index("data-chart-legend") : card.index("</ul>", card.index("data-chart-legend"))]
    options = items[0].options
    colours = charts.matrix_colors(len(options))
    for option, colour in zip(options, colours, strict=True):
        assert f'fill="{colour}"' in legend and f"{option}</li>" in legend
    mechanism = items[2].current_randomization().build_mechanism()
    packed = b"".join(bytes(p) for p in Report.objects.filter(question=items[2]).values_list("packed", flat=True))
    expected = mechanism.consistent_estimate(mechanism.tally(mechanism.unpack_many(packed)), "auto")
    row = card[card.index(f'data-matrix-item="{items[2].pk}"') :]
    shown = re.search(r'data-option="2">([\d.]+) %', row).group(1)
    assert float(shown) == pytest.approx(100 * expected.proportions[2], abs=0.051)
    # The items have no separate cards on the dashboard.
    assert f'id="result-{items[0].pk}"' not in html


def test_a_copy_of_the_survey_has_its_own_matrix(with_matrix):
    survey, _matrix = with_matrix
    copy = actions.do_duplicate_survey(survey)
    copied = Matrix.objects.get(survey=copy)
    assert copied.items.count() == 3 and set(copied.items.values_list("survey", flat=True)) == {copy.pk}


def test_the_builder_speaks_korean_about_matrices(organizer_client, with_matrix):
    survey, _matrix = with_matrix
    html = organizer_client.get(survey.get_absolute_url(), **KOREAN).content.decode()
    assert "행렬형 문항 추가" in html and "Add a matrix" not in html


def test_the_next_round_of_a_recurring_survey_has_its_own_matrix(with_matrix):
    from surveys.series import rounds

    survey, matrix = with_matrix
    actions.do_open_survey(survey)
    rounds.do_make_recurring(survey, "manual")
    after = rounds.do_open_next_round(survey)
    copied = Matrix.objects.get(survey=after)
    assert [q.text for q in copied.items.order_by("position")] == [q.text for q in matrix.items.order_by("position")]
    assert matrix.items.count() == 3 and copied.items.first().current_randomization() is not None


def test_a_matrix_is_retitled_and_its_options_reworded_on_every_item_even_after_reports(organizer_client, with_matrix):
    survey, matrix = with_matrix
    actions.do_open_survey(survey)
    first = matrix.items.order_by("position").first()
    make_reports(first, [0, 1, 2])
    version = first.current_randomization().version
    prefix = f"matrix-{matrix.pk}"
    url = reverse("matrix_edit", args=[survey.pk, matrix.pk])
    data = {f"{prefix}-title": "Agreement", f"{prefix}-options_text": "No\nMaybe\nYes"}
    assert organizer_client.post(url, data).status_code == 302
    matrix.refresh_from_db()
    assert matrix.title == "Agreement"
    assert {tuple(q.options) for q in matrix.items.all()} == {("No", "Maybe", "Yes")}
    assert first.current_randomization().version == version  # wording only: nothing re-randomized
    data[f"{prefix}-options_text"] = "No\nYes"
    response = organizer_client.post(url, data, follow=True)
    assert "Keep the 3 options" in response.content.decode()
    assert {tuple(q.options) for q in matrix.items.all()} == {("No", "Maybe", "Yes")}


def test_a_matrix_with_reports_keeps_the_order_of_its_options(organizer_client, with_matrix):
    # Reports are kept by option position: the same labels in a new order would swap their meaning.
    survey, matrix = with_matrix
    actions.do_open_survey(survey)
    make_reports(matrix.items.order_by("position").first(), [0, 1, 2])
    before = matrix.items.first().options
    prefix = f"matrix-{matrix.pk}"
    url = reverse("matrix_edit", args=[survey.pk, matrix.pk])
    data = {f"{prefix}-title": "Agreement", f"{prefix}-options_text": "\n".join(reversed(before))}
    response = organizer_client.post(url, data, follow=True, HTTP_ACCEPT_LANGUAGE="ko")
    assert "순서" in response.content.decode()
    assert {tuple(q.options) for q in matrix.items.all()} == {tuple(before)}


def post_reports(client, survey, reports, **headers):
    body = json.dumps({"token": new_token(survey), "reports": reports})
    return client.post(reverse("submit", args=[survey.slug]), body, content_type="application/json", **headers)


@pytest.mark.parametrize(
    ("report", "reason"),
    [
        ({"value": 3}, "value must lie in [0, 2]"),
        ({"value": -1}, "value must lie"),
        ({"value": "1"}, "value must be an integer"),
        ({"value": True}, "value must be an integer"),
        ({"value": 1, "item": 0}, "exactly the fields"),
        ([1], "must be an object"),
    ],
)
def test_a_malformed_item_report_is_a_400_and_nothing_is_stored(client, organizer_client, survey, report, reason):
    assert add_matrix(organizer_client, survey, mechanism="krr").status_code == 302
    actions.do_open_survey(survey)
    items = list(Matrix.objects.get(survey=survey).items.order_by("position"))
    reports = [{"question": q.pk, "version": q.current_randomization().version, "report": {"value": 0}} for q in items]
    reports[1]["report"] = report
    response = post_reports(client, survey, reports)
    assert response.status_code == 400
    message = response.json()["error"]
    assert "Report 2 (question “The team is kind”) is malformed" in message and reason in message, message
    assert not (Submission.objects.exists() or Report.objects.exists() or TallyCell.objects.exists())


def test_the_refusal_of_a_malformed_item_report_speaks_korean(client, organizer_client, survey):
    assert add_matrix(organizer_client, survey, mechanism="krr").status_code == 302
    actions.do_open_survey(survey)
    items = list(Matrix.objects.get(survey=survey).items.order_by("position"))
    reports = [{"question": q.pk, "version": q.current_randomization().version, "report": {"value": 0}} for q in items]
    reports[2]["report"] = {"value": 7}
    response = post_reports(client, survey, reports, **KOREAN)
    assert response.status_code == 400
    assert "보고값 3(문항 “The pay is fair”)의 형식이 잘못되었습니다" in response.json()["error"]
    assert not Report.objects.exists()


def test_the_exports_name_each_items_block_and_place_and_re_estimate_it(organizer_client, with_matrix):
    survey, matrix = with_matrix
    items = list(matrix.items.order_by("position"))
    organizer_client.post(reverse("question_move", args=[survey.pk, items[2].pk]), {"direction": "up"})
    items = list(matrix.items.order_by("position"))  # tools, pay, team: the block's order, not creation's
    actions.do_open_survey(survey)
    rng = np.random.default_rng(8)
    for i, item in enumerate(items):
        make_reports(item, list(rng.choice(3, size=300, p=[0.2, 0.3, 0.5])), seed=i)
    before = survey.questions.get(text="Before the grid?")
    make_reports(before, [0, 1, 2] * 100, seed=9)
    block = {item.pk: (matrix.pk, "How much do you agree?", i) for i, item in enumerate(items)}

    payload = organizer_client.get(reverse("export_estimates", args=[survey.pk, "json"])).json()
    for row in payload["estimates"]:
        if row["question_id"] == before.pk:
            assert "matrix_id" not in row
        else:
            assert (row["matrix_id"], row["matrix_title"], row["matrix_item_index"]) == block[row["question_id"]]
    table = list(
        csv.DictReader(
            io.StringIO(
                organizer_client.get(reverse("export_estimates", args=[survey.pk, "csv"])).content.decode("utf-8-sig")
            )
        )
    )
    for row in table:
        fields = (row["matrix_id"], row["matrix_title"], row["matrix_item_index"])
        if int(row["question_id"]) == before.pk:
            assert fields == ("", "", "")
        else:
            assert (int(fields[0]), fields[1], int(fields[2])) == block[int(row["question_id"])]

    # The raw reports say the same, and re-estimating each item from them gives the exported shares.
    response = organizer_client.get(reverse("export_reports", args=[survey.pk, "json"]))
    export = json.loads(b"".join(response.streaming_content))
    records = {r["question_id"]: r for r in export["randomizations"]}
    assert records[before.pk]["matrix_id"] is None and records[before.pk]["matrix_item_index"] is None
    for item in items:
        record = records[item.pk]
        assert (record["matrix_id"], record["matrix_title"], record["matrix_item_index"]) == block[item.pk]
        mechanism = ldp.make_mechanism(
            record["mechanism"], k=record["k"], epsilon=record["epsilon"], **record["params"]
        )
        packed = b"".join(mechanism.parse_report(r["report"]) for r in export["reports"] if r["question_id"] == item.pk)
        estimate = mechanism.estimate(mechanism.tally(mechanism.unpack_many(packed)))
        shown = [
            r["unbiased"] for r in payload["estimates"] if r["question_id"] == item.pk and r["statistic"] == "share"
        ]
        np.testing.assert_allclose(estimate.proportions, shown, rtol=0, atol=1e-12)
    response = organizer_client.get(reverse("export_reports", args=[survey.pk, "csv"]))
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert len(rows) == 4 * 300
    for row in rows:
        if int(row["question_id"]) != before.pk:
            fields = (int(row["matrix_id"]), row["matrix_title"], int(row["matrix_item_index"]))
            assert fields == block[int(row["question_id"])]
