"""The dashboard's manipulation check: stuffed fake reports raise a warning, honest reports do not."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from django.db import transaction
from django.urls import reverse

from ldp import integrity
from ldp.experiments import poisoning
from surveys import actions
from surveys.responding.writes import add_to_tally, record_submissions
from tests.base import bulk_reports, make_question, make_reports, make_survey, stored_tally

OPTIONS = ["Alpha", "Bravo", "Charlie", "Delta"]


@transaction.atomic
def store_packed(question, packed: np.ndarray) -> None:
    """Store already-built reports (here: fakes) the way a submission does: reports and tally cells."""
    randomization = actions.sync_randomization(question)
    submissions = record_submissions(question.survey, [None] * len(packed))
    bulk_reports(question, randomization, submissions, [row.tobytes() for row in packed])
    add_to_tally(randomization, [row.tobytes() for row in packed])


@pytest.fixture
def survey(organizer):
    survey = make_survey(organizer, title="Integrity survey")
    make_question(survey, text="Pick one", options=OPTIONS, epsilon=1.0, mechanism="oue")
    actions.do_open_survey(survey)
    question = survey.questions.get()
    make_reports(question, list(np.repeat(np.arange(4), [600, 500, 300, 100])), seed=3)
    return survey


def dashboard(client, survey) -> str:
    return client.get(reverse("survey_results", args=[survey.pk])).content.decode()


def test_the_stored_weight_histogram_equals_the_stored_reports(survey):
    question = survey.questions.get()
    randomization = question.current_randomization()
    mechanism = randomization.build_mechanism()
    packed = mechanism.unpack_many(b"".join(bytes(r.packed) for r in question.reports.all()))
    assert stored_tally(randomization).profile.tolist() == integrity.weight_profile(mechanism, packed).tolist()


def test_honest_reports_show_no_warning(organizer_client, survey):
    html = dashboard(organizer_client, survey)
    assert "data-manipulation-check" in html
    assert "data-manipulation>" not in html and "Possible manipulation" not in html


def test_stuffed_fake_reports_show_the_warning_with_share_favored_option_and_recovered_estimate(
    organizer_client, survey
):
    question = survey.questions.get()
    mechanism = question.current_randomization().build_mechanism()
    fakes = poisoning.fake_reports(mechanism, "maximal gain", 300, np.random.default_rng(1))  # pushes "Delta"
    store_packed(question, fakes)
    html = dashboard(organizer_client, survey)
    assert "Possible manipulation" in html
    assert "<span data-favored>Delta</span>" in html
    assert "Recovered estimate" in html and "data-recovered" in html
    assert "whose number of one-bits the fakes did not crowd" in html

    rows = list(
        csv.DictReader(
            io.StringIO(
                organizer_client.get(reverse("export_estimates", args=[survey.pk, "csv"])).content.decode("utf-8-sig")
            )
        )
    )
    delta = next(r for r in rows if r["option"] == "Delta")
    assert delta["manipulation_significant"] == "True" and delta["favored_by_fakes"] == "True"
    assert 0.0 < float(delta["recovered"]) < float(delta["consistent"])
    low, high = float(delta["fake_share_low"]), float(delta["fake_share_high"])
    assert low <= 300 / 1800 <= high


def test_the_warning_is_translated(organizer_client, survey):
    question = survey.questions.get()
    mechanism = question.current_randomization().build_mechanism()
    store_packed(question, poisoning.fake_reports(mechanism, "maximal gain", 300, np.random.default_rng(1)))
    html = organizer_client.get(reverse("survey_results", args=[survey.pk]), HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert "data-manipulation" in html and "Possible manipulation" not in html


@pytest.mark.parametrize(
    ("value", "shown"), [(0.5, "p = 0.50"), (0.034, "p = 0.034"), (0.00012, "p = 0.00012"), (1e-9, "p < 0.0001")]
)
def test_p_values_are_shown_with_two_significant_digits(value, shown):
    from surveys.templatetags.murmur import pvalue

    assert pvalue(value) == shown


@pytest.fixture
def krr_survey(organizer):
    survey = make_survey(organizer, title="k-RR integrity survey")
    make_question(survey, text="Pick one", options=OPTIONS, epsilon=1.0, mechanism="krr")
    actions.do_open_survey(survey)
    question = survey.questions.get()
    make_reports(question, list(np.repeat(np.arange(3), [600, 600, 800])), seed=3)  # nobody chose Delta
    return survey


def test_a_mechanism_that_cannot_detect_the_attack_says_so_when_nothing_is_flagged(organizer_client, krr_survey):
    html = dashboard(organizer_client, krr_survey)
    assert "data-manipulation-check" in html and "data-cannot-detect" in html
    assert "cannot detect fake reports that all push one option" in html
    ko = organizer_client.get(reverse("survey_results", args=[krr_survey.pk]), HTTP_ACCEPT_LANGUAGE="ko")
    assert "data-cannot-detect" in ko.content.decode() and "cannot detect" not in ko.content.decode()


def test_a_mechanism_whose_recovery_was_not_measured_to_work_shows_no_recovered_estimate(organizer_client, krr_survey):
    # k-RR fakes pushing Alpha while nobody chose Delta: the below-zero test flags them, but k-RR's
    # recovery did not beat the plain estimate in the experiment, so the page shows none.
    question = krr_survey.questions.get()
    store_packed(question, np.zeros((400, 1), dtype=np.uint8))
    html = dashboard(organizer_client, krr_survey)
    assert "Possible manipulation" in html and "data-no-recovery" in html
    assert "data-recovered" not in html and "Recovered estimate" not in html and "data-favored" not in html
    export = organizer_client.get(reverse("export_estimates", args=[krr_survey.pk, "csv"])).content.decode()
    rows = list(csv.DictReader(io.StringIO(export)))
    assert rows and all(r["manipulation_significant"] == "True" and r["recovered"] == "" for r in rows)


def test_the_page_follows_the_measured_capability_not_the_mechanism_name():
    from surveys.results.integrity import labeled

    mechanism = integrity.KRandomizedResponse(k=3, epsilon=1.0)
    genuine = mechanism.randomize(np.repeat([0, 1], [500, 500]), rng=1)
    result = integrity.assess(mechanism, mechanism.tally(np.vstack([genuine, np.zeros((300, 1), dtype=np.uint8)])))
    assert result.significant and result.recovery == "concentrated"
    shown = labeled(result, ["a", "b", "c"], integrity.Capability(True, ((0.1, 1.0),)))
    hidden = labeled(result, ["a", "b", "c"], integrity.capability(mechanism))
    assert shown.recovers and shown.detects and [r.recovered for r in shown.rows] == result.recovered.tolist()
    assert not hidden.recovers and not hidden.detects and [r.recovered for r in hidden.rows] == result.plain.tolist()
    assert hidden.favored == [] and all(r.low is None for r in hidden.rows)
