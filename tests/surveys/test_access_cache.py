"""The results pages' access entries in the cache: every change that could refuse a reader retires them."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.http import Http404
from django.test import Client
from django.urls import reverse

from surveys import access
from surveys.access import get_survey_to_read
from surveys.models import Survey
from tests.surveys.test_freshness import signature
from tests.teams import make_team


@pytest.fixture
def team(db):
    return make_team()


def reader(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def poll_and_304(client, url, first, htmx_headers):
    """(status of a poll with the page's signature, status of a conditional GET with its ETag)."""
    poll = client.get(url, {"since": signature(first)}, **htmx_headers).status_code
    return poll, client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code


def drawn(client, url):
    client.get(url)  # sets the CSRF cookie, which the ETag covers
    return client.get(url)


def test_a_removed_member_is_refused_at_the_next_poll_and_304(team, htmx_headers):
    url = reverse("survey_results", args=[team.survey.pk])
    viewer = reader(team.users["viewer"])
    first = drawn(viewer, url)
    assert poll_and_304(viewer, url, first, htmx_headers) == (204, 304)  # the entry is cached now
    owner = reader(team.users["owner"])
    owner.post(reverse("workspace_member_remove", args=[team.workspace.pk, team.membership("viewer").pk]))
    assert poll_and_304(viewer, url, first, htmx_headers) == (404, 404)
    assert poll_and_304(owner, url, drawn(owner, url), htmx_headers) == (204, 304)


def test_a_survey_moved_out_of_reach_is_refused_at_once(team, htmx_headers):
    url = reverse("survey_results", args=[team.survey.pk])
    viewer = reader(team.users["viewer"])
    first = drawn(viewer, url)
    assert poll_and_304(viewer, url, first, htmx_headers) == (204, 304)
    team.survey.workspace = None  # back to its owner alone
    team.survey.save(update_fields=["workspace"])
    assert poll_and_304(viewer, url, first, htmx_headers) == (404, 404)


def test_staff_who_lose_the_flag_lose_access_at_once(team, htmx_headers):
    url = reverse("survey_results", args=[team.survey.pk])
    staff = team.users["staff"]
    client = reader(staff)
    first = drawn(client, url)
    assert poll_and_304(client, url, first, htmx_headers) == (204, 304)
    staff.is_staff = False
    staff.save(update_fields=["is_staff"])
    assert poll_and_304(client, url, first, htmx_headers) == (404, 404)


def test_an_entry_read_before_the_change_committed_is_retired_at_the_commit(team, django_capture_on_commit_callbacks):
    viewer = team.users["viewer"]
    assert get_survey_to_read(viewer, team.survey.pk)[0] == team.survey
    entry_key = f"murmur:access:{team.survey.pk}:{viewer.pk}"
    with django_capture_on_commit_callbacks(execute=True):
        team.membership("viewer").delete()
        # Another server's reader read the membership before this transaction committed, and
        # keeps what it read under the tokens it finds now.
        tokens = (cache.get(access.MEMBERSHIPS_TOKEN), cache.get(f"murmur:access-token:survey:{team.survey.pk}"))
        cache.set(entry_key, (tokens, team.survey, "viewer"), access.ACCESS_SECONDS)
        assert get_survey_to_read(viewer, team.survey.pk)[0] == team.survey  # before the commit
    with pytest.raises(Http404):
        get_survey_to_read(viewer, team.survey.pk)


def test_a_bulk_update_of_the_revision_is_not_served_stale(team):
    owner = team.users["owner"]
    get_survey_to_read(owner, team.survey.pk)  # makes the tokens; the next read keeps the entry
    before = get_survey_to_read(owner, team.survey.pk)[0].revision
    team.question.text = "Reworded"
    team.question.save(update_fields=["text"])  # adds 1 to the revision in SQL
    assert get_survey_to_read(owner, team.survey.pk)[0].revision == before + 1 == Survey.objects.get().revision


def test_outsiders_and_anonymous_readers_get_404(team):
    from django.contrib.auth.models import AnonymousUser

    for user in (team.users["outsider"], AnonymousUser()):
        for _ in range(2):  # the second time from the cache
            with pytest.raises(Http404):
                get_survey_to_read(user, team.survey.pk)
    with pytest.raises(Http404):
        get_survey_to_read(team.users["owner"], team.survey.pk + 1000)


def test_deleting_a_series_is_not_served_stale(team):
    from surveys.models import Series

    series = Series.objects.create()
    team.survey.series = series
    team.survey.round_number = 1
    team.survey.save(update_fields=["series", "round_number"])
    owner = team.users["owner"]
    get_survey_to_read(owner, team.survey.pk)
    assert get_survey_to_read(owner, team.survey.pk)[0].series_id == series.pk  # cached now
    series.delete()  # sets the round's series to null in bulk
    assert get_survey_to_read(owner, team.survey.pk)[0].series_id is None


def test_a_role_change_is_never_answered_304_with_the_old_roles_page(team, htmx_headers):
    """A results page's ETag names what its reader's role lets the page offer (the builder link, the raw
    exports): an editor made a viewer gets the viewer's page at the next request, never a 304 that
    keeps the editor's links; made an editor again, the editor's page. The ETag names its reader too,
    so no one else's page is ever theirs, and a removed member gets 404 (above)."""
    pages = [
        reverse("survey_results", args=[team.survey.pk]),
        reverse("question_results", args=[team.survey.pk, team.question.pk]),
    ]
    raw = reverse("export_reports", args=[team.survey.pk, "csv"])
    editor = reader(team.users["editor"])
    first = [drawn(editor, url) for url in pages]
    assert raw in first[0].content.decode()
    for url, page in zip(pages, first, strict=True):
        assert editor.get(url, HTTP_IF_NONE_MATCH=page["ETag"]).status_code == 304
    owner = reader(team.users["owner"])
    membership = team.membership("editor")
    change = reverse("workspace_member_role", args=[team.workspace.pk, membership.pk])
    owner.post(change, {"role": "viewer"})
    membership.refresh_from_db()
    assert membership.role == "viewer"
    demoted = [editor.get(url, HTTP_IF_NONE_MATCH=page["ETag"]) for url, page in zip(pages, first, strict=True)]
    assert [response.status_code for response in demoted] == [200, 200]
    assert raw not in demoted[0].content.decode()
    for url, page in zip(pages, demoted, strict=True):
        assert editor.get(url, HTTP_IF_NONE_MATCH=page["ETag"]).status_code == 304
    owner.post(change, {"role": "editor"})
    promoted = editor.get(pages[0], HTTP_IF_NONE_MATCH=demoted[0]["ETag"])
    assert promoted.status_code == 200 and raw in promoted.content.decode()
