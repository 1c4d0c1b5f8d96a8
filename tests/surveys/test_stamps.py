"""Polls and 304s in O(1): the session, the user, the survey and one cache read, whatever the questions."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from surveys import access, actions
from surveys.models import Matrix, Survey
from surveys.results import snapshots, stamps
from tests.base import make_reports
from tests.surveys.test_freshness import cache_reads, signature
from tests.surveys.test_storage import survey_with
from tests.teams import make_team

#: Tables a poll or a 304 must not read: the questions, their randomizations, the sample, the version.
STRUCTURE_TABLES = ("surveys_question", "surveys_randomization", "surveys_questionsample", "surveys_matrix")


def tables_read(queries):
    tables = (*STRUCTURE_TABLES, "surveys_surveyversion")
    return {table for q in queries for table in tables if f'"{table}"' in q["sql"]}


def poll_and_304(client, url, htmx_headers=None):
    """(queries of a poll answered 204, queries of a conditional GET answered 304), the page drawn first
    (no poll without ``htmx_headers``)."""
    client.get(url)  # sets the CSRF cookie, which the ETag covers
    first = client.get(url)
    with CaptureQueriesContext(connection) as poll:
        if htmx_headers is not None:
            assert client.get(url, {"since": signature(first)}, **htmx_headers).status_code == 204
    with CaptureQueriesContext(connection) as conditional:
        assert client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    return poll.captured_queries, conditional.captured_queries


def test_a_poll_and_a_304_cost_the_same_queries_for_3_and_30_questions(
    organizer_client, organizer, htmx_headers, settings
):
    settings.RESULTS_REFRESH_SECONDS = 60  # production's interval is 5 s; tests' 0 reads the version each time
    counts = {}
    for questions in (3, 30):
        survey = survey_with(organizer, questions)
        make_reports(survey.questions.first(), [0, 1, 2, 3], seed=1)
        poll, conditional = poll_and_304(organizer_client, reverse("survey_results", args=[survey.pk]), htmx_headers)
        assert tables_read(poll) == tables_read(conditional) == set()
        counts[questions] = (len(poll), len(conditional))
    assert counts[3] == counts[30] == (1, 1)  # the user (the session and the survey come from the cache)


def test_the_public_page_and_a_question_page_answer_304_without_reading_the_questions(
    organizer_client, organizer, htmx_headers, settings
):
    settings.RESULTS_REFRESH_SECONDS = 60
    counts = {}
    for questions in (3, 30):
        survey = survey_with(organizer, questions)
        survey.public_results = True
        survey.save(update_fields=["public_results"])
        question = survey.questions.first()
        make_reports(question, [0, 1, 2, 3], seed=1)
        _, public = poll_and_304(Client(), reverse("public_results", args=[survey.slug]))
        url = reverse("question_results", args=[survey.pk, question.pk])
        poll, own = poll_and_304(organizer_client, url, htmx_headers)
        assert tables_read(public) == set()
        assert tables_read(poll) == tables_read(own) == {"surveys_question"}  # the one asked for (or 404)
        counts[questions] = (len(public), len(poll), len(own))
    assert counts[3] == counts[30]


def test_a_304_reads_its_access_the_snapshot_head_and_the_structure_in_one_cache_read(
    organizer_client, organizer, htmx_headers, settings, monkeypatch
):
    settings.RESULTS_REFRESH_SECONDS = 60
    survey = survey_with(organizer, 3)
    url = reverse("survey_results", args=[survey.pk])
    organizer_client.get(url)
    first = organizer_client.get(url)
    trips = []
    cache_reads(monkeypatch, trips)
    assert organizer_client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    survey.refresh_from_db()  # its revision names its structure's entry
    murmur = [keys for keys in trips if any(key.startswith("murmur:") for key in keys)]
    entry = [
        access.MEMBERSHIPS_TOKEN,
        f"murmur:access-token:survey:{survey.pk}",
        f"murmur:access:{survey.pk}:{organizer.pk}",
    ]
    assert murmur == [[*entry, *snapshots.keys(survey), stamps._key(survey)]]


def revision(survey):
    return Survey.objects.values_list("revision", flat=True).get(pk=survey.pk)


def test_the_etag_changes_when_a_question_or_a_matrix_is_edited(organizer_client, organizer, settings):
    settings.RESULTS_REFRESH_SECONDS = 60  # no new snapshot: the structure alone changes the ETag
    survey = survey_with(organizer, 3)
    question = survey.questions.first()
    make_reports(question, [0, 1, 2, 3], seed=1)
    url = reverse("survey_results", args=[survey.pk])
    organizer_client.get(url)
    etag = organizer_client.get(url)["ETag"]
    before = revision(survey)
    question.text = "How are you, really?"
    question.save(update_fields=["text"])
    assert revision(survey) == before + 1
    page = organizer_client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert page.status_code == 200 and "How are you, really?" in page.content.decode()
    assert page["ETag"] != etag
    etag = page["ETag"]
    actions.do_set_candidates(question, ["spam"])  # a field the old ETag did not name
    assert organizer_client.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 200
    etag = organizer_client.get(url)["ETag"]
    Matrix.objects.create(survey=survey, title="Grid")
    assert organizer_client.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 200


def test_the_etag_and_the_signature_change_after_new_reports(organizer_client, organizer, htmx_headers):
    survey = survey_with(organizer, 3)
    url = reverse("survey_results", args=[survey.pk])
    organizer_client.get(url)
    first = organizer_client.get(url)
    assert organizer_client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    make_reports(survey.questions.last(), [0, 1, 2], seed=4)
    page = organizer_client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert page.status_code == 200 and page["ETag"] != first["ETag"]
    assert signature(page) != signature(first)
    assert organizer_client.get(url, {"since": signature(first)}, **htmx_headers).status_code == 200


def test_a_full_save_of_a_survey_read_before_an_edit_keeps_the_edits_revision(organizer):
    survey = survey_with(organizer, 2)
    stale = Survey.objects.get(pk=survey.pk)
    question = survey.questions.first()
    question.text = "Edited"
    question.save()
    edited = revision(survey)
    stale.title = "Renamed"
    stale.save()
    assert revision(survey) == edited and Survey.objects.get(pk=survey.pk).title == "Renamed"


def test_a_copy_of_a_survey_has_its_own_revision(organizer):
    survey = survey_with(organizer, 2)
    copy = actions.do_duplicate_survey(survey)
    assert revision(copy) > 0 and copy.questions.count() == 2


def test_a_version_unchanged_is_read_once_per_interval_once_the_snapshot_is_old(organizer_client, organizer, settings):
    settings.RESULTS_REFRESH_SECONDS = 60
    survey = survey_with(organizer, 3)
    url = reverse("survey_results", args=[survey.pk])
    organizer_client.get(url)
    etag = organizer_client.get(url)["ETag"]
    head = cache.get(snapshots._key(survey))
    head.computed_at -= 120  # two intervals old
    cache.set(snapshots._key(survey), head)
    with CaptureQueriesContext(connection) as queries:
        for _ in range(3):
            assert organizer_client.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304
    assert sum("surveys_surveyversion" in q["sql"] for q in queries) == 1


@pytest.mark.parametrize("who", ["outsider", "editor"])
def test_a_poll_or_a_304_still_checks_who_may_read(db, client, htmx_headers, who, settings):
    settings.RESULTS_REFRESH_SECONDS = 60
    team = make_team()
    url = reverse("survey_results", args=[team.survey.pk])
    client.force_login(team.users["viewer"])
    client.get(url)
    first = client.get(url)
    assert client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    client.force_login(team.users[who])
    expected = 404 if who == "outsider" else 200  # another viewer: the ETag names its reader
    assert client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == expected
    assert client.get(url, {"since": signature(first)}, **htmx_headers).status_code == (404 if expected == 404 else 204)
    team.membership("viewer").delete()
    client.force_login(team.users["viewer"])
    assert client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 404
