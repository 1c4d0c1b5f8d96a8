"""The submission endpoint: valid submissions are stored whole; everything else gets a clear 4xx
and stores nothing."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.db import IntegrityError
from django.test import Client
from django.urls import reverse

from surveys import actions
from surveys.models import HourlyResponses, Report, Submission, TallyCell
from surveys.responding.submissions import new_token
from tests.base import make_question, make_survey, stored_tally


@pytest.fixture
def survey(organizer):
    survey = make_survey(organizer)
    make_question(survey, text="Fruit?", options=["Apple", "Banana", "Cherry", "Durian", "Elder"])
    make_question(
        survey, text="Cycle?", kind="yes_no", options=["Yes", "No"], mechanism="dbitflip", mechanism_params={"d": 2}
    )
    make_question(
        survey,
        text="Day?",
        options=["Mon", "Tue", "Wed"],
        mechanism="cms",
        mechanism_params={"hash_count": 8, "width": 16, "hash_seed": 0},
    )
    actions.do_open_survey(survey)
    return survey


def valid_reports(survey, answers=(0, 1, 2), seed=0):
    items = []
    for question, answer in zip(survey.questions.all(), answers, strict=True):
        randomization = question.current_randomization()
        mechanism = randomization.build_mechanism()
        packed = mechanism.randomize(np.array([answer]), rng=seed)[0].tobytes()
        items.append(
            {"question": question.pk, "version": randomization.version, "report": mechanism.unpack_report(packed)}
        )
    return items


def post(client, survey, payload, content_type="application/json"):
    body = payload if isinstance(payload, (str, bytes)) else json.dumps(payload)
    return client.post(reverse("submit", args=[survey.slug]), body, content_type=content_type)


def submission(survey, reports=None):
    return {"token": new_token(survey), "reports": valid_reports(survey) if reports is None else reports}


def assert_nothing_stored():
    assert not Submission.objects.exists()
    assert not Report.objects.exists()
    assert not TallyCell.objects.exists()
    assert not HourlyResponses.objects.exists()


def test_a_valid_submission_is_stored_whole_with_its_tallies(client, survey):
    payload = submission(survey)
    response = post(client, survey, payload)
    assert response.status_code == 201
    stored = Report.objects.order_by("question__position")
    assert stored.count() == 3
    for report, sent in zip(stored, payload["reports"], strict=True):
        mechanism = report.randomization.build_mechanism()
        assert mechanism.unpack_report(bytes(report.packed)) == sent["report"]
        assert report.randomization.version == sent["version"]
        tally = stored_tally(report.randomization)
        expected = mechanism.tally(mechanism.unpack_many(bytes(report.packed)))
        assert (tally.n, tally.counts.tolist()) == (1, expected.counts.tolist())
    receipt = response.json()["receipt"]
    assert [r["stored"] for r in receipt] == [r["report"] for r in payload["reports"]]


def test_a_submission_without_a_report_for_every_question_is_refused(client, survey):
    """A skipped question sends a stand-in report (ldp.branching): the wire never shows a skip."""
    payload = submission(survey)
    payload["reports"] = payload["reports"][1:]
    response = post(client, survey, payload)
    assert response.status_code == 400 and "one report for every question" in response.json()["error"]
    assert not Report.objects.exists()


@pytest.mark.parametrize(
    ("mutate", "status", "message"),
    [
        (lambda p: "{not json", 400, "not valid JSON"),
        (lambda p: [], 400, "the fields “token” and “reports”"),
        (lambda p: {**p, "extra": 1}, 400, "the fields “token” and “reports”"),
        (lambda p: {**p, "reports": []}, 400, "at least one question"),
        (lambda p: {**p, "reports": {}}, 400, "must be a list"),
        (lambda p: {**p, "reports": p["reports"] * 2}, 400, "more reports than questions"),
        (lambda p: {**p, "reports": [p["reports"][0], p["reports"][0]]}, 400, "repeats a question"),
        (lambda p: {**p, "token": "forged"}, 400, "page token is not valid"),
        (lambda p: {**p, "token": None}, 400, "no page token"),
    ],
)
def test_malformed_submissions_are_refused(client, survey, mutate, status, message):
    response = post(client, survey, mutate(submission(survey)))
    assert response.status_code == status
    assert message in response.json()["error"]
    assert_nothing_stored()


@pytest.mark.parametrize(
    ("index", "mutate_item", "status", "message"),
    [
        (2, lambda i: {**i, "question": 999_999}, 400, "names a question this survey does not have"),
        (2, lambda i: {**i, "question": True}, 400, "names a question"),
        (2, lambda i: {**i, "version": 2}, 409, "changed since this page was loaded"),
        (2, lambda i: {**i, "version": "1"}, 409, "changed since this page was loaded"),
        (2, lambda i: {"question": i["question"], "report": i["report"]}, 400, "exactly the fields"),
        (0, lambda i: {**i, "report": {"value": 5}}, 400, "value must lie in [0, 4]"),
        (0, lambda i: {**i, "report": {"value": "Apple"}}, 400, "value must be an integer"),
        (1, lambda i: {**i, "report": {"buckets": [0, 0], "bits": [1, 1]}}, 400, "must not repeat"),
        (2, lambda i: {**i, "report": {"hash_index": 0, "bits": [1] * 3}}, 400, "bits must have 16 entries"),
        (2, lambda i: {**i, "report": {"hash_index": 8, "bits": [1] * 16}}, 400, "hash_index must lie in [0, 7]"),
        (2, lambda i: {**i, "report": None}, 400, "must be an object"),
    ],
)
def test_a_bad_report_refuses_the_whole_submission(client, survey, index, mutate_item, status, message):
    payload = submission(survey)
    payload["reports"][index] = mutate_item(payload["reports"][index])
    response = post(client, survey, payload)
    assert response.status_code == status, response.json()
    assert message in response.json()["error"]
    assert_nothing_stored()


def test_an_item_that_is_not_an_object_is_refused(client, survey):
    payload = submission(survey)
    payload["reports"][0] = "Apple"
    response = post(client, survey, payload)
    assert response.status_code == 400
    assert_nothing_stored()


def test_a_report_from_another_surveys_question_is_refused(client, survey, organizer):
    other = make_survey(organizer, title="Other")
    foreign = make_question(other)
    actions.do_open_survey(other)
    payload = submission(survey)
    payload["reports"][0]["question"] = foreign.pk
    assert post(client, survey, payload).status_code == 400
    assert_nothing_stored()


def test_a_token_for_another_survey_is_refused(client, survey, organizer):
    other = make_survey(organizer, title="Other")
    make_question(other)
    actions.do_open_survey(other)
    payload = submission(survey)
    payload["token"] = new_token(other)
    response = post(client, survey, payload)
    assert response.status_code == 400
    assert "another survey" in response.json()["error"]


def test_a_replayed_submission_is_refused(survey):
    survey.allow_repeat_responses = True
    survey.save()
    payload = submission(survey)
    assert post(Client(), survey, payload).status_code == 201
    response = post(Client(), survey, payload)  # same body, even from a "new browser"
    assert response.status_code == 409
    assert "already sent" in response.json()["error"]
    assert Submission.objects.count() == 1
    assert [stored_tally(q.current_randomization()).n for q in survey.questions.all()] == [1, 1, 1]


def test_one_response_per_browser_by_default(client, survey):
    assert post(client, survey, submission(survey)).status_code == 201
    response = post(client, survey, submission(survey))
    assert response.status_code == 409
    assert "already answered" in response.json()["error"]
    page = client.get(reverse("respond", args=[survey.slug])).content.decode()
    assert "already answered this survey" in page
    assert "data-respond-form" not in page


def test_organizers_may_allow_several_responses(client, survey):
    survey.allow_repeat_responses = True
    survey.save()
    assert post(client, survey, submission(survey)).status_code == 201
    assert post(client, survey, submission(survey)).status_code == 201
    assert Submission.objects.count() == 2


def test_a_forged_responded_cookie_is_ignored(client, survey):
    client.cookies[f"murmur-responded-{survey.pk}"] = "1"
    assert post(client, survey, submission(survey)).status_code == 201


def test_a_closed_survey_refuses_submissions(client, survey):
    actions.do_close_survey(survey)
    response = post(client, survey, submission(survey))
    assert response.status_code == 403
    assert "not accepting responses" in response.json()["error"]
    assert_nothing_stored()


def test_the_response_limit_is_enforced(survey):
    survey.response_limit = 1
    survey.allow_repeat_responses = True
    survey.save()
    assert post(Client(), survey, submission(survey)).status_code == 201
    assert post(Client(), survey, submission(survey)).status_code == 403
    assert Submission.objects.count() == 1


def test_drafts_and_unknown_links_are_not_found(client, survey, organizer):
    draft = make_survey(organizer, title="Draft")
    make_question(draft)
    assert post(client, draft, {"token": "x", "reports": []}).status_code == 404
    assert client.post("/s/no-such-survey/submit/", "{}", content_type="application/json").status_code == 404


def test_only_json_is_accepted(client, survey):
    response = client.post(reverse("submit", args=[survey.slug]), {"reports": "x"})
    assert response.status_code == 415
    assert_nothing_stored()


def test_oversized_bodies_are_refused(client, survey, settings):
    payload = submission(survey)
    payload["padding"] = "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
    response = post(client, survey, payload)
    assert response.status_code == 413
    assert "too large" in response.json()["error"]
    assert_nothing_stored()


def test_csrf_protection_stays_on(survey):
    client = Client(enforce_csrf_checks=True)
    response = post(client, survey, submission(survey))
    assert response.status_code == 403
    assert_nothing_stored()
    page = client.get(reverse("respond", args=[survey.slug]))
    token = page.cookies["csrftoken"].value
    response = client.post(
        reverse("submit", args=[survey.slug]),
        json.dumps(submission(survey)),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert response.status_code == 201


def test_only_get_and_post_where_they_belong(client, survey):
    assert client.get(reverse("submit", args=[survey.slug])).status_code == 405
    assert client.post(reverse("respond", args=[survey.slug])).status_code == 405


def test_a_submission_stores_nothing_that_identifies_the_respondent(client, survey):
    post(client, survey, submission(survey), content_type="application/json")
    stored = Submission.objects.get()
    fields = {f.name for f in Submission._meta.get_fields() if f.concrete}
    assert fields == {"id", "survey", "received_hour", "nonce"}
    assert stored.received_hour.minute == stored.received_hour.second == 0


def test_a_failure_while_writing_rolls_everything_back(client, survey, monkeypatch):
    from surveys.responding import writes

    # Two reports with one id: the second report's insert fails after the submission row was
    # written (and, on PostgreSQL, inside the one statement that also writes the tallies).
    calls = []

    def clashing_ids(count):
        calls.append(count)
        return [12345678901] * count

    monkeypatch.setattr(writes, "report_ids", clashing_ids)
    with pytest.raises(IntegrityError):
        post(client, survey, submission(survey))
    assert calls == [3]
    assert_nothing_stored()


@pytest.fixture
def korean_survey(organizer):
    """Four questions worded in Korean: RAPPOR free text, multi-select (set-OUE), a number, a choice."""
    from tests.base import make_multi_question, make_number_question, make_text_question

    survey = make_survey(organizer, title="주간 설문")
    rappor = {"bits": 32, "hash_count": 2, "cohorts": 64, "f": 0.5}
    make_text_question(survey, "rappor", epsilon=2.0, text="한 단어로?", mechanism_params=rappor)
    make_multi_question(survey, text="도움이 된 것은?")
    make_number_question(survey, lo=0, hi=10, text="수면 시간은?", mechanism="1bitmean", epsilon=0.5)
    make_question(survey, text="과일은?", options=["사과", "배", "감"])
    actions.do_open_survey(survey)
    return survey


def one_report(survey, position, report):
    question = list(survey.questions.all())[position]
    randomization = question.current_randomization()
    return [{"question": question.pk, "version": randomization.version, "report": report}]


@pytest.mark.parametrize(
    ("position", "report", "english", "korean"),
    [
        # A Bloom filter of the wrong length, and a cohort out of range (RAPPOR, 32 bits, 64 cohorts).
        (0, {"cohort": 0, "bits": [0] * 31}, "bits must have 32 entries, got 31", "“비트 목록”에는 항목이 32개"),
        (0, {"cohort": 64, "bits": [0] * 32}, "cohort must lie in [0, 63], got 64", "“코호트”은(는) 0 이상 63 이하"),
        # A multi-select report with a bit out of its domain {0, 1}.
        (1, {"bits": [0, 1, 2, 0, 0]}, "bits[2] must be 0 or 1", "“비트 목록[2]”은(는) 0 또는 1이어야"),
        # A number report outside the output grid (1BitMean reports an index 0 or 1).
        (2, {"index": 2}, "index must lie in [0, 1], got 2", "“인덱스”은(는) 0 이상 1 이하"),
        (3, {"value": [1]}, "value must be an integer", "“값”은(는) 정수여야"),
        (3, {"value": 1, "extra": 0}, "exactly the fields value", "정확히 다음 필드만 있어야 합니다: 값"),
    ],
)
def test_a_malformed_report_is_refused_in_korean_with_no_english_left(
    client, korean_survey, position, report, english, korean
):
    """ldp's InvalidReport carries a code and parameters, translated here; its English message is not shown."""
    import re

    body = {"token": new_token(korean_survey), "reports": one_report(korean_survey, position, report)}
    response = client.post(
        reverse("submit", args=[korean_survey.slug]),
        json.dumps(body),
        content_type="application/json",
        HTTP_ACCEPT_LANGUAGE="ko",
    )
    assert response.status_code == 400
    message = response.json()["error"]
    assert "형식이 잘못되었습니다" in message and korean in message, message
    assert re.search(r"[A-Za-z]", message) is None, message
    assert_nothing_stored()
    body["token"] = new_token(korean_survey)
    english_response = post(client, korean_survey, body)
    assert english_response.status_code == 400 and english in english_response.json()["error"]
    assert_nothing_stored()
