"""Pending tally increments: a submission appends one row, a fold moves it into the cells, and a
tally read at any moment in between is exactly the sum of the stored reports."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ldp import integrity
from surveys.jobs import loop
from surveys.models import Randomization, Report, TallyCell, TallyDelta
from surveys.responding import tallies
from tests.base import stored_tally, tally_of_reports
from tests.surveys.test_storage import submission_body, survey_with


@pytest.fixture(autouse=True)
def no_rate_limits(settings):
    settings.RATE_LIMITS_ENABLED = False


def submit(client, survey, count, seed=0):
    for i in range(count):
        body = submission_body(survey, seed=seed + i)
        response = client.post(reverse("submit", args=[survey.slug]), body, content_type="application/json")
        assert response.status_code == 201, response.content


def assert_exact(survey):
    for randomization in Randomization.objects.filter(question__survey=survey):
        stored, recomputed = stored_tally(randomization), tally_of_reports(randomization)
        assert stored.n == recomputed.n
        assert stored.counts.tolist() == recomputed.counts.tolist()
        mechanism = randomization.build_mechanism()
        packed = b"".join(
            bytes(p) for p in Report.objects.filter(randomization=randomization).values_list("packed", flat=True)
        )
        profile = integrity.weight_profile(mechanism, mechanism.unpack_many(packed))
        assert (stored.profile is None) == (profile is None)
        if profile is not None:
            assert stored.profile.tolist() == profile.tolist()


def test_a_submission_appends_one_pending_row_and_updates_no_cell(client, organizer):
    survey = survey_with(organizer, 5)
    submit(client, survey, 3)
    assert TallyDelta.objects.filter(survey=survey).count() == 3
    assert not TallyCell.objects.filter(randomization__question__survey=survey).exists()
    assert_exact(survey)


def test_tallies_stay_exact_before_between_and_after_folds(client, organizer):
    survey = survey_with(organizer, 5)
    submit(client, survey, 9)
    assert tallies.fold_deltas(survey, limit=4) == 4  # part folded: cells plus the rest pending
    assert TallyDelta.objects.filter(survey=survey).count() == 5
    assert TallyCell.objects.filter(randomization__question__survey=survey).exists()
    assert_exact(survey)
    submit(client, survey, 3, seed=100)
    assert tallies.fold_deltas(survey) == 8
    assert tallies.fold_deltas(survey) == 0  # folded once, never twice
    assert not TallyDelta.objects.exists()
    assert_exact(survey)
    n = {r.pk: stored_tally(r).n for r in Randomization.objects.filter(question__survey=survey)}
    assert set(n.values()) == {12}


def test_a_fold_takes_only_the_survey_it_is_given_and_the_sweep_takes_all(client, organizer):
    first, second = survey_with(organizer, 2), survey_with(organizer, 2)
    submit(client, first, 2)
    submit(client, second, 3, seed=10)
    assert tallies.fold_deltas(first) == 2
    assert TallyDelta.objects.filter(survey=second).count() == 3
    loop.sweep()
    assert not TallyDelta.objects.exists()
    assert_exact(first)
    assert_exact(second)


def test_a_payload_round_trips_and_a_pending_row_holds_nothing_that_orders_it():
    reports = [(2**62 + 5, b"\x00\x01"), (7, b""), (9, bytes(range(200)))]
    assert tallies.parse_payload(tallies.delta_payload(reports)) == reports
    # No time and no sequence: the survey, a random id, the shard and the reports' bytes.
    assert {f.name for f in TallyDelta._meta.concrete_fields} == {"survey", "id", "shard", "payload"}
