"""What an API token changes or exports is in the audit log like the pages' changes: the token's owner
as actor, marked with the token's name and never its secret; reads and refused requests log nothing."""

from __future__ import annotations

import pytest
from django.urls import reverse

from surveys.integrations import ApiToken
from surveys.models import AuditEntry
from tests.surveys.test_api import call, make_token
from tests.teams import make_team


@pytest.fixture
def team(db):
    return make_team()


def logged(team) -> list[tuple[str, str, str, str]]:
    entries = AuditEntry.objects.filter(workspace=team.workspace).order_by("pk")
    return [(e.actor_name, e.action, e.detail, e.api_token) for e in entries]


def test_a_tokens_changes_and_exports_are_logged_as_its_owners_via_the_token(client, team):
    token = make_token(team.users["editor"], name="nightly sync")
    path = f"/api/v1/surveys/{team.survey.pk}"
    assert call(client, token, "patch", path, {"title": "Shared pulse 2"}).status_code == 200
    assert call(client, token, "post", f"{path}/close").status_code == 200
    assert call(client, token, "get", f"{path}/exports/estimates.csv").status_code == 200
    assert call(client, token, "get", f"{path}/exports/reports.csv").status_code == 200
    assert logged(team) == [
        ("eddie", "edited", "", "nightly sync"),
        ("eddie", "closed", "", "nightly sync"),
        ("eddie", "exported", "estimates.csv", "nightly sync"),
        ("eddie", "exported", "reports.csv", "nightly sync"),
    ]
    assert AuditEntry.objects.get(action="closed").actor == team.users["editor"]
    # The name only: neither the secret nor its shown prefix is kept anywhere in the entry.
    prefix = ApiToken.objects.get(name="nightly sync").prefix
    for values in AuditEntry.objects.values():
        assert not any(token in str(value) or prefix in str(value) for value in values.values())


def test_a_tokens_new_survey_and_questions_are_logged(client, team):
    token = make_token(team.users["owner"])
    survey_id = call(client, token, "post", "/api/v1/surveys", {"title": "Scripted"}).json()["id"]
    question = {"text": "Mood?", "kind": "single", "options": ["Good", "Bad"], "epsilon": 1.0}
    assert call(client, token, "post", f"/api/v1/surveys/{survey_id}/questions", question).status_code == 201
    entries = AuditEntry.objects.filter(survey_id=survey_id).order_by("pk")
    assert [(e.actor_name, e.action, e.detail, e.api_token) for e in entries] == [
        ("olivia", "created", "", "script"),
        ("olivia", "edited", "Mood?", "script"),
    ]


def test_reads_and_refused_requests_log_nothing(client, team, settings):
    settings.JOBS_QUEUE = "db"  # the raw reports' file is not written yet: 202, nothing served
    path = f"/api/v1/surveys/{team.survey.pk}"
    editor = make_token(team.users["editor"])
    assert call(client, editor, "get", f"{path}/exports/reports.csv").status_code == 202
    for read in ("", "/questions", "/estimates", "/transparency", "/rounds"):
        assert call(client, editor, "get", path + read).status_code == 200, read
    viewer = make_token(team.users["viewer"])
    assert call(client, viewer, "post", f"{path}/close").status_code == 404
    assert call(client, viewer, "get", f"{path}/exports/reports.csv").status_code == 404
    reader = make_token(team.users["owner"], scope="read")
    assert call(client, reader, "patch", path, {"title": "Read only"}).status_code == 403
    invalid = call(client, editor, "patch", path, {"title": ""})
    assert invalid.status_code == 422
    assert call(client, "mur_not-a-token", "post", f"{path}/close").status_code == 401
    assert logged(team) == []


def test_the_workspace_page_marks_what_a_token_did(client, team):
    token = make_token(team.users["editor"], name="nightly sync")
    call(client, token, "post", f"/api/v1/surveys/{team.survey.pk}/close")
    client.force_login(team.users["owner"])
    client.post(reverse("survey_settings", args=[team.survey.pk]), {"title": "By hand", "expected_respondents": "9"})
    url = reverse("workspace_detail", args=[team.workspace.pk])
    page = client.get(url).content.decode()
    assert page.count("data-audit-token") == 1 and "via the API token “nightly sync”" in page
    client.cookies["django_language"] = "ko"
    assert "API 토큰 “nightly sync”" in client.get(url).content.decode()
