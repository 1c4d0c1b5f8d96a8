"""Freshness without rework: an O(1) version for polls and 304s, snapshots re-read once per interval."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from surveys import access
from surveys.responding.versions import survey_version
from surveys.results import snapshots, stamps
from tests.base import make_reports
from tests.surveys import test_storage
from tests.surveys.test_storage import post, submission_body, survey_with

answered = test_storage.answered  # the fixture: a 3-question survey with 400 reports each


def tally_reads(queries):
    return [q["sql"] for q in queries if "surveys_tallycell" in q["sql"]]


def signature(page):
    """The signature the page polls with (a shared rendering has no template context to read it from)."""
    return page.content.decode().split("since=")[1].split('"')[0]


@pytest.mark.django_db(transaction=True)  # the production path: the submit statement in autocommit
def test_each_submission_adds_one_to_the_version_in_its_own_statement(client, organizer):
    survey = survey_with(organizer, 3)
    assert survey_version(survey) == 0
    for seed in range(3):
        assert post(client, survey, submission_body(survey, seed=seed)).status_code == 201
    assert survey_version(survey) == 3
    assert post(client, survey, submission_body(survey, seed=0)).status_code == 201
    assert survey_version(survey) == 4


def test_polls_and_304s_read_no_tally_cell_while_nothing_changed(organizer_client, answered, htmx_headers):
    url = reverse("survey_results", args=[answered.pk])
    organizer_client.get(url)  # sets the CSRF cookie, which the ETag covers
    first = organizer_client.get(url)
    since = signature(first)
    with CaptureQueriesContext(connection) as queries:
        assert organizer_client.get(url, {"since": since}, **htmx_headers).status_code == 204
        assert organizer_client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    assert tally_reads(queries) == []
    assert any("surveys_surveyversion" in q["sql"] for q in queries)
    make_reports(answered.questions.first(), [0, 1, 2], seed=9)
    with CaptureQueriesContext(connection) as queries:
        assert organizer_client.get(url, {"since": since}, **htmx_headers).status_code == 200
    assert len(tally_reads(queries)) == 1  # a new version: the snapshot is read again, once


def test_within_the_interval_a_new_report_waits_for_the_next_update_with_its_age_shown(
    organizer_client, answered, settings
):
    settings.RESULTS_REFRESH_SECONDS = 60
    url = reverse("survey_results", args=[answered.pk])
    before = organizer_client.get(url)
    make_reports(answered.questions.first(), [0, 1], seed=9)
    with CaptureQueriesContext(connection) as queries:
        page = organizer_client.get(url)
    assert tally_reads(queries) == []
    assert signature(page) == signature(before)
    assert "2 newer responses are counted at the next update" in page.content.decode()


def test_a_job_re_reads_once_while_every_page_serves_the_previous_snapshot(organizer_client, answered, settings):
    from surveys.jobs import worker
    from surveys.jobs.records import Job

    url = reverse("survey_results", args=[answered.pk])
    before = signature(organizer_client.get(url))
    settings.JOBS_QUEUE = "db"  # a worker elsewhere: pages only queue
    make_reports(answered.questions.first(), [3], seed=9)
    with CaptureQueriesContext(connection) as queries:
        pages = [organizer_client.get(url) for _ in range(3)]
    assert tally_reads(queries) == [] and {signature(page) for page in pages} == {before}
    assert "1 newer response is counted at the next update" in pages[-1].content.decode()
    assert Job.objects.filter(task="refresh_results").count() == 1  # one re-read, however many readers
    assert worker.run_pending() == 1
    page = organizer_client.get(url)
    assert signature(page) != before and "data-freshness" not in page.content.decode()


def test_a_snapshot_holds_exactly_the_tallies_read_now(answered):
    from surveys.results.estimates import SurveyState

    live = SurveyState.read(answered, live=True)
    exact = SurveyState.read(answered)
    assert live.signature == exact.signature and live.snapshot is not None and exact.snapshot is None
    assert live.snapshot.pending and cache.get(snapshots._key(answered)) is None  # drawn first, then shared
    snapshots.publish(answered, live.snapshot)
    assert cache.get(snapshots._key(answered)).version == survey_version(answered) == 1200
    assert not SurveyState.read(answered, live=True).snapshot.pending


def test_the_public_page_is_rendered_once_per_snapshot_with_each_readers_own_csrf_token(
    client, answered, monkeypatch, settings
):
    from django.middleware.csrf import _unmask_cipher_token
    from django.test import Client

    from surveys.views import dashboard
    from surveys.views.reading import CSRF_PLACEHOLDER

    answered.public_results = True
    answered.save(update_fields=["public_results"])
    real, renders = dashboard.dashboard_context, []
    monkeypatch.setattr(dashboard, "dashboard_context", lambda *a, **k: renders.append(1) or real(*a, **k))
    url = reverse("public_results", args=[answered.slug])
    tokens = []
    for reader in (client, Client(), Client()):
        response = reader.get(url)
        html = response.content.decode()
        assert response.status_code == 200 and "<svg" in html and CSRF_PLACEHOLDER not in html
        token = html.split('name="csrfmiddlewaretoken" value="')[1].split('"')[0]
        assert _unmask_cipher_token(token) == reader.cookies[settings.CSRF_COOKIE_NAME].value
        tokens.append(token)
    assert len(renders) == 1 and len(set(tokens)) == 3
    assert client.get(url, HTTP_ACCEPT_LANGUAGE="ko").status_code == 200
    assert len(renders) == 2  # another language: another rendering
    make_reports(answered.questions.first(), [0, 1], seed=9)
    assert client.get(url).status_code == 200
    assert len(renders) == 3  # a new snapshot: rendered again, once


def cache_reads(monkeypatch, trips=None):
    """Every cache key read from now on (``get`` and ``get_many``); each read's keys in ``trips``."""
    from django.core.cache import caches

    backend, keys, inside = caches["default"], [], []
    trips = [] if trips is None else trips
    real_get, real_many = backend.get, backend.get_many

    def get(key, *args, **kwargs):
        if not inside:  # a get_many of the local-memory cache calls get for each of its keys
            keys.append(key)
            trips.append([key])
        return real_get(key, *args, **kwargs)

    def get_many(found, *args, **kwargs):
        keys.extend(found)
        trips.append(list(found))
        inside.append(1)
        try:
            return real_many(found, *args, **kwargs)
        finally:
            inside.pop()

    monkeypatch.setattr(backend, "get", get)
    monkeypatch.setattr(backend, "get_many", get_many)
    return keys


def test_polls_and_304s_read_the_snapshots_head_alone(organizer_client, answered, htmx_headers, monkeypatch):
    url = reverse("survey_results", args=[answered.pk])
    organizer_client.get(url)
    first = organizer_client.get(url)
    keys = cache_reads(monkeypatch)
    with CaptureQueriesContext(connection) as queries:
        assert organizer_client.get(url, {"since": signature(first)}, **htmx_headers).status_code == 204
        assert organizer_client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    assert tally_reads(queries) == []
    assert keys.count(snapshots._key(answered)) == 2
    answered.refresh_from_db()  # its revision names its structure's entry
    entries = {access.MEMBERSHIPS_TOKEN, f"murmur:access-token:survey:{answered.pk}"}
    entries.add(f"murmur:access:{answered.pk}:{answered.owner_id}")  # the reader's access entry
    murmur_keys = {key for key in keys if key.startswith("murmur:")}
    assert murmur_keys == {*snapshots.keys(answered), stamps._key(answered), *entries}
    head = cache.get(snapshots._key(answered))
    assert head.loaded is None and set(head.digests) == set(cache.get(head.tallies_key))
    organizer_client.get(url, HTTP_IF_NONE_MATCH='"another"')  # a page drawn: now the tallies are read
    assert head.tallies_key in keys


def test_the_owners_page_is_rendered_once_per_snapshot_and_language(organizer_client, answered, monkeypatch):
    from surveys.views import dashboard

    real, renders = dashboard.dashboard_context, []
    monkeypatch.setattr(dashboard, "dashboard_context", lambda *a, **k: renders.append(1) or real(*a, **k))
    url = reverse("survey_results", args=[answered.pk])
    pages = [organizer_client.get(url) for _ in range(3)]
    assert len(renders) == 1 and {signature(page) for page in pages} == {signature(pages[0])}
    assert organizer_client.get(url, HTTP_ACCEPT_LANGUAGE="ko").status_code == 200
    assert organizer_client.get(url, {"estimate": "unbiased"}).status_code == 200
    assert len(renders) == 3
    make_reports(answered.questions.first(), [0, 1], seed=9)
    assert signature(organizer_client.get(url)) != signature(pages[0]) and len(renders) == 4


def test_a_snapshot_whose_tallies_left_the_cache_is_read_again_and_shared(organizer_client, answered):
    url = reverse("survey_results", args=[answered.pk])
    before = organizer_client.get(url, {"estimate": "unbiased"})
    head = cache.get(snapshots._key(answered))
    cache.delete(head.tallies_key)
    with CaptureQueriesContext(connection) as queries:
        page = organizer_client.get(url)  # another page: drawn from the tallies, read again
    assert len(tally_reads(queries)) == 1 and signature(page) == signature(before)
    assert cache.get(head.tallies_key) is not None


def test_a_submission_landing_between_the_reads_leaves_the_snapshot_consistent(answered, client, monkeypatch):
    # The tallies are read, then a submission lands before the hourly counts are read (as CI once saw:
    # "53 responses" above a card of n = 52): the snapshot reads the tallies again, so its response
    # count and every question's n agree.
    from surveys.responding import tallies

    read_tallies, landed = tallies.read_tallies, []

    def then_a_submission(randomizations):
        read = read_tallies(randomizations)
        if not landed:
            landed.append(post(client, answered, submission_body(answered)).status_code)
        return read

    monkeypatch.setattr(tallies, "read_tallies", then_a_submission)
    randomizations = [question.current_randomization() for question in answered.questions.all()]
    snapshot = snapshots.read_now(answered, randomizations, 0)
    assert landed == [201]
    # The fixture's 1200 submissions each answered one question (400 a question); the landed one all three.
    assert sum(count for _hour, count in snapshot.hourly) == 1201
    assert {tally.n for tally in snapshot.tallies.values()} == {401}
