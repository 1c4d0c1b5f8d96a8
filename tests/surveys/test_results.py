"""The results dashboard: numbers equal ldp's for the stored reports, access, exports, live polling."""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pytest
from django.urls import reverse

from surveys import actions
from surveys.models import Report
from surveys.results.estimates import ADJUSTMENT_LABELS, MIN_REPORTS, SurveyState
from tests.base import make_question, make_reports, make_survey, stored_tally

SHARES = [0.5, 0.3, 0.2]


@pytest.fixture
def survey(organizer):
    survey = make_survey(organizer, title="Results survey")
    make_question(survey, text="Fruit?", options=["Apple", "Banana", "Cherry"], epsilon=2.0)
    make_question(
        survey,
        text="Day?",
        options=["Mon", "Tue", "Wed"],
        epsilon=3.0,
        mechanism="cms",
        mechanism_params={"hash_count": 32, "width": 32, "hash_seed": 0},
    )
    make_question(
        survey, text="Cycle?", kind="yes_no", options=["Yes", "No"], mechanism="dbitflip", mechanism_params={"d": 2}
    )
    actions.do_open_survey(survey)
    rng = np.random.default_rng(5)
    for index, question in enumerate(survey.questions.all()):
        shares = SHARES if question.k == 3 else [0.6, 0.4]
        make_reports(question, list(rng.choice(question.k, size=600, p=shares)), seed=index)
    return survey


def ldp_estimate_from_reports(question):
    """The estimate recomputed from the Report rows themselves (not the tally)."""
    randomization = question.current_randomization()
    mechanism = randomization.build_mechanism()
    packed = b"".join(bytes(r.packed) for r in Report.objects.filter(randomization=randomization).order_by("pk"))
    tally = mechanism.tally(mechanism.unpack_many(packed))
    return mechanism, mechanism.estimate(tally), mechanism.consistent_estimate(tally, "auto")


def test_the_tallies_equal_the_stored_reports(survey):
    for question in survey.questions.all():
        mechanism, _, _ = ldp_estimate_from_reports(question)
        packed = b"".join(bytes(r.packed) for r in question.reports.all())
        tally = stored_tally(question.current_randomization())
        assert np.array_equal(tally.counts, mechanism.tally(mechanism.unpack_many(packed)).counts)
        assert tally.n == 600


@pytest.mark.parametrize("kind", ["unbiased", "consistent"])
def test_displayed_estimates_and_intervals_are_ldps(organizer_client, survey, kind):
    html = organizer_client.get(reverse("survey_results", args=[survey.pk]), {"estimate": kind}).content.decode()
    for question in survey.questions.all():
        _, unbiased, consistent = ldp_estimate_from_reports(question)
        estimate = unbiased if kind == "unbiased" else consistent
        low, high = estimate.confidence_interval(0.95)
        card = html[html.index(f'id="result-{question.pk}"') :]
        card = card[: card.index("</article>")]
        shown = re.findall(r"<td data-estimate>([-0-9.]+) %</td>", card)
        intervals = re.findall(r"<td data-interval>([-0-9.]+) % – ([-0-9.]+) %</td>", card)
        assert shown == [f"{100 * p:.1f}" for p in estimate.proportions]
        assert intervals == [(f"{100 * a:.1f}", f"{100 * b:.1f}") for a, b in zip(low, high, strict=True)]
        assert "<svg" in card
        assert "<span data-n>600</span>" in card
        if kind == "consistent":
            label = {"norm-sub": "Norm-Sub", "clip": "clipping and rescaling", "eb": "empirical-Bayes shrinkage"}[
                consistent.method
            ]
            assert f"<span data-adjustment>adjusted by {label} (chosen automatically)</span>" in card
        else:
            assert "data-adjustment" not in card


def test_the_question_page_shows_its_chart_table_and_parameters(organizer_client, survey):
    question = survey.questions.get(text="Day?")
    html = organizer_client.get(reverse("question_results", args=[survey.pk, question.pk])).content.decode()
    assert "<svg" in html
    assert "Reports with +1 at its cell" in html
    assert "hash_count = 32, width = 32, hash_seed = 0" in html  # folded, as stored
    assert "<li>Hash functions: 32</li><li>Columns of the sketch: 32</li>" in html
    assert "ε = 3" in html


def test_too_few_responses_say_so_instead_of_drawing_noise(organizer_client, organizer):
    survey = make_survey(organizer)
    question = make_question(survey, options=["A", "B", "C", "D", "E"], epsilon=0.5)
    actions.do_open_survey(survey)
    make_reports(question, [0] * 40)
    result = question_result(question)
    assert not result.enough
    html = organizer_client.get(reverse("survey_results", args=[survey.pk])).content.decode()
    assert "Too few responses for a meaningful estimate" in html
    # A share's band cut to [0, 1] is never wider than 100 points: the notice says no more.
    assert f"uncertain by about ± {100 * min(result.expected_half_width, 1.0):.1f} percentage points" in html
    assert f"About {result.reports_needed:,} reports are needed" in html  # grouped digits
    assert "data-estimate" not in html
    # The stated need is where the expected error reaches an even share (1/k = 20 %).
    needed = type(result.mechanism)(k=5, epsilon=0.5)
    from ldp.advisor import expected_half_width

    assert (
        expected_half_width(needed, result.reports_needed)
        <= 0.2
        < expected_half_width(needed, result.reports_needed - 1)
    )


def test_fewer_than_the_minimum_reports_are_never_estimated(organizer):
    survey = make_survey(organizer)
    question = make_question(survey, kind="yes_no", options=["Yes", "No"], epsilon=10.0)
    actions.do_open_survey(survey)
    make_reports(question, [0] * (MIN_REPORTS - 1))
    assert not question_result(question).enough


class TestLive:
    def test_polling_gets_204_until_a_tally_changes(self, organizer_client, survey, htmx_headers):
        page = organizer_client.get(reverse("survey_results", args=[survey.pk])).content.decode()
        signature = re.search(r"since=([^\"&]+)", page).group(1)
        url = reverse("survey_results", args=[survey.pk])
        assert organizer_client.get(url, {"since": signature}, **htmx_headers).status_code == 204
        make_reports(survey.questions.first(), [0, 1])
        response = organizer_client.get(url, {"since": signature}, **htmx_headers)
        assert response.status_code == 200
        html = response.content.decode()
        assert html.lstrip().startswith("<!--") or html.lstrip().startswith("<div")
        assert "<html" not in html
        assert "<span data-n>602</span>" in html

    @pytest.mark.parametrize("page", ["survey", "question"])
    def test_a_submission_during_a_render_is_shown_by_the_next_poll(self, organizer_client, survey, monkeypatch, page):
        # A page's signature must never run ahead of its data, or the next poll would answer 204
        # forever over a stale page: both come from one read of the tallies, so a submission
        # that commits while the page is being built is shown by the next poll.
        from surveys.views import dashboard as views

        question = survey.questions.first()
        url = (
            reverse("survey_results", args=[survey.pk])
            if page == "survey"
            else reverse("question_results", args=[survey.pk, question.pk])
        )
        original = views.result_view

        def with_a_submission_first(*args):
            make_reports(question, [1], seed=9)
            monkeypatch.undo()
            return original(*args)

        monkeypatch.setattr(views, "result_view", with_a_submission_first)
        html = organizer_client.get(url).content.decode()
        signature = re.search(r"since=([^\"&]+)", html).group(1)
        assert "<span data-n>600</span>" in html  # the page shows the data it read ...
        poll = organizer_client.get(url, {"since": signature}, HTTP_HX_REQUEST="true")
        assert poll.status_code == 200  # ... and its signature is as old, so the next poll renders
        assert "<span data-n>601</span>" in poll.content.decode()

    def test_a_closed_survey_does_not_poll(self, organizer_client, survey):
        actions.do_close_survey(survey)
        html = organizer_client.get(reverse("survey_results", args=[survey.pk])).content.decode()
        assert 'hx-trigger="every' not in html

    def test_a_poll_reads_only_tallies(self, organizer_client, survey, htmx_headers, django_assert_max_num_queries):
        # O(options), not O(reports): a fixed number of queries whatever the number of reports.
        url = reverse("survey_results", args=[survey.pk])
        with django_assert_max_num_queries(20):
            organizer_client.get(url, {"since": "stale"}, **htmx_headers)


class TestExports:
    def test_estimates_json_matches_ldp(self, organizer_client, survey):
        data = organizer_client.get(reverse("export_estimates", args=[survey.pk, "json"])).json()
        for question in survey.questions.all():
            _, unbiased, consistent = ldp_estimate_from_reports(question)
            rows = [r for r in data["estimates"] if r["question_id"] == question.pk]
            assert [r["unbiased"] for r in rows] == pytest.approx(unbiased.proportions.tolist(), abs=1e-12)
            assert [r["consistent"] for r in rows] == pytest.approx(consistent.proportions.tolist(), abs=1e-12)
            assert {r["consistent_method"] for r in rows} == {consistent.method}
            assert [r["standard_error"] for r in rows] == pytest.approx(unbiased.standard_errors.tolist(), abs=1e-12)
            assert {r["n"] for r in rows} == {600}

    def test_estimates_csv_has_the_same_numbers(self, organizer_client, survey):
        as_json = organizer_client.get(reverse("export_estimates", args=[survey.pk, "json"])).json()["estimates"]
        response = organizer_client.get(reverse("export_estimates", args=[survey.pk, "csv"]))
        assert response["Content-Type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(response.content.decode())))
        assert len(rows) == len(as_json) == 8
        for row, expected in zip(rows, as_json, strict=True):
            assert float(row["unbiased_low"]) == pytest.approx(expected["unbiased_low"], abs=1e-12)
            assert json.loads(row["params"]) == expected["params"]

    @pytest.mark.parametrize("fmt", ["json", "csv"])
    def test_raw_reports_round_trip_to_the_shown_estimates(self, organizer_client, survey, fmt):
        import ldp

        estimates = organizer_client.get(reverse("export_estimates", args=[survey.pk, "json"])).json()["estimates"]
        response = organizer_client.get(reverse("export_reports", args=[survey.pk, fmt]))
        body = b"".join(response.streaming_content).decode()
        if fmt == "json":
            export = json.loads(body)
            versions = {(r["question_id"], r["version"]): r for r in export["randomizations"]}
            reports = [(r["question_id"], r["version"], r["report"]) for r in export["reports"]]
        else:
            rows = list(csv.DictReader(io.StringIO(body)))
            versions = {
                (int(r["question_id"]), int(r["version"])): {
                    "mechanism": r["mechanism"],
                    "k": int(r["k"]),
                    "epsilon": float(r["epsilon"]),
                    "params": json.loads(r["params"]),
                }
                for r in rows
            }
            reports = [(int(r["question_id"]), int(r["version"]), json.loads(r["report"])) for r in rows]
        assert len(reports) == 3 * 600
        for (question_id, version), spec in versions.items():
            # Anyone can re-run the reconstruction from the export alone.
            mechanism = ldp.make_mechanism(spec["mechanism"], k=spec["k"], epsilon=spec["epsilon"], **spec["params"])
            packed = b"".join(mechanism.parse_report(r) for q, v, r in reports if (q, v) == (question_id, version))
            estimate = mechanism.estimate(mechanism.tally(mechanism.unpack_many(packed)))
            shown = [e["unbiased"] for e in estimates if e["question_id"] == question_id]
            assert estimate.proportions.tolist() == pytest.approx(shown, abs=1e-12)

    def test_the_json_export_carries_each_client_spec(self, organizer_client, survey):
        body = b"".join(organizer_client.get(reverse("export_reports", args=[survey.pk, "json"])).streaming_content)
        export = json.loads(body)
        cms = next(r for r in export["randomizations"] if r["mechanism"] == "cms")
        assert len(cms["client_spec"]["hashes"]) == 32
        assert export["reports"][0].keys() == {
            "round",
            "submission",
            "received_hour",
            "question_id",
            "version",
            "report",
        }
        assert export["round"] is None and export["reports"][0]["round"] is None  # a one-off survey has no rounds

    def test_unknown_formats_are_not_found(self, organizer_client, survey):
        assert organizer_client.get(f"/surveys/{survey.pk}/export/estimates.xml").status_code == 404


RESULTS_URLS = ["survey_results", "question_results", "export_estimates", "export_reports"]


def results_url(name, survey):
    if name == "question_results":
        return reverse(name, args=[survey.pk, survey.questions.first().pk])
    if name.startswith("export"):
        return reverse(name, args=[survey.pk, "json"])
    return reverse(name, args=[survey.pk])


class TestAccess:
    @pytest.mark.parametrize("name", RESULTS_URLS)
    def test_the_owner_and_staff_see_results(self, client, survey, organizer, staff, name):
        for user in (organizer, staff):
            client.force_login(user)
            response = client.get(results_url(name, survey))
            if response.streaming:  # an export is a file: read to its end, which closes it
                b"".join(response.streaming_content)
            assert response.status_code == 200

    @pytest.mark.parametrize("name", RESULTS_URLS)
    def test_other_organizers_get_404(self, client, survey, other_organizer, name):
        client.force_login(other_organizer)
        assert client.get(results_url(name, survey)).status_code == 404

    @pytest.mark.parametrize("name", RESULTS_URLS)
    def test_anonymous_visitors_are_sent_to_log_in(self, client, survey, name):
        response = client.get(results_url(name, survey))
        assert response.status_code == 302
        assert response.url.startswith(reverse("login"))

    def test_a_question_of_another_survey_is_not_found(self, organizer_client, survey, organizer):
        other = make_survey(organizer, title="Other")
        foreign = make_question(other)
        assert organizer_client.get(reverse("question_results", args=[survey.pk, foreign.pk])).status_code == 404

    def test_public_results_only_when_published(self, client, survey):
        url = reverse("public_results", args=[survey.slug])
        assert client.get(url).status_code == 404
        survey.public_results = True
        survey.save()
        html = client.get(url).content.decode()
        assert "Fruit?" in html and "<svg" in html
        assert "export" not in html


def question_result(question):
    [result] = SurveyState.read(question.survey, [question]).results(question)
    return result


@pytest.mark.parametrize("kind", ["unbiased", "consistent"])
def test_exports_and_pages_agree_on_every_estimate_flag_and_band(organizer_client, organizer, kind):
    survey = make_survey(organizer)
    plenty = make_question(survey, text="Plenty", options=["A", "B", "C"], epsilon=2.0)
    scarce = make_question(survey, text="Scarce", options=["A", "B", "C", "D", "E"], epsilon=0.5)
    actions.do_open_survey(survey)
    make_reports(plenty, [i % 3 for i in range(500)], seed=1)
    make_reports(scarce, [0] * 40, seed=2)
    rows = organizer_client.get(reverse("export_estimates", args=[survey.pk, "json"])).json()["estimates"]
    html = organizer_client.get(reverse("survey_results", args=[survey.pk]), {"estimate": kind}).content.decode()
    for question in (plenty, scarce):
        exported = [r for r in rows if r["question_id"] == question.pk]
        card = html[html.index(f'id="result-{question.pk}"') :]
        card = card[: card.index("</article>")]
        assert len({r["enough"] for r in exported}) == 1
        if not exported[0]["enough"]:  # withheld on the page, flagged in the export
            assert question == scarce and "data-too-few" in card and "data-estimate" not in card
            needed = exported[0]["reports_needed"]
            assert f"About {needed:,} reports are needed" in card
            continue
        assert question == plenty and "data-too-few" not in card
        shown = re.findall(r"<td data-estimate>([-0-9.]+) %</td>", card)
        intervals = re.findall(r"<td data-interval>([-0-9.]+) % – ([-0-9.]+) %</td>", card)
        assert shown == [f"{100 * r[kind]:.1f}" for r in exported]
        assert intervals == [(f"{100 * r[f'{kind}_low']:.1f}", f"{100 * r[f'{kind}_high']:.1f}") for r in exported]
        assert {r[f"{kind}_band"] for r in exported} == {"normal" if kind == "unbiased" else "unified"}
        [method] = {r["consistent_method"] for r in exported}  # the estimator "auto" chose for the tally
        if kind == "consistent":
            label = str(ADJUSTMENT_LABELS[method])
            assert f"<span data-adjustment>adjusted by {label} (chosen automatically)</span>" in card
