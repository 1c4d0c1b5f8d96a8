"""Django admin shows workspaces, memberships, invitations and the audit log; the log is read-only."""

from __future__ import annotations

import pytest
from django.urls import reverse

from surveys.models import AuditEntry, Membership
from tests.teams import make_pending_invitation, make_team


@pytest.fixture
def team(db):
    team = make_team()
    team.invitation = make_pending_invitation(team, role="viewer")
    AuditEntry.objects.create(
        workspace=team.workspace, survey=team.survey, survey_title="Shared pulse", actor=team.users["owner"],
        actor_name="olivia", action="closed", api_token="nightly sync",
    )  # fmt: skip
    return team


def admin_client(client, team):
    client.force_login(team.users["staff"])
    return client


def test_the_admin_lists_workspaces_with_members_memberships_and_invitations(client, team):
    admin = admin_client(client, team)
    workspaces = admin.get(reverse("admin:surveys_workspace_changelist")).content.decode()
    assert "Research team" in workspaces and '<td class="field-member_count">3</td>' in workspaces
    change = admin.get(reverse("admin:surveys_workspace_change", args=[team.workspace.pk])).content.decode()
    assert 'name="memberships-TOTAL_FORMS" value="3"' in change  # the three members, inlined
    memberships = admin.get(reverse("admin:surveys_membership_changelist")).content.decode()
    assert memberships.count("Research team") >= 3 and "vera" in memberships
    invitations = admin.get(reverse("admin:surveys_workspaceinvitation_changelist")).content.decode()
    assert "later@example.org" in invitations
    page = admin.get(reverse("admin:surveys_workspaceinvitation_change", args=[team.invitation.pk])).content.decode()
    assert team.invitation.token_hash not in page  # not even the token's hash is shown
    assert admin.get(reverse("admin:surveys_workspaceinvitation_add")).status_code == 403


def test_staff_change_a_role_in_the_admin(client, team):
    admin = admin_client(client, team)
    membership = team.membership("viewer")
    url = reverse("admin:surveys_membership_change", args=[membership.pk])
    data = {"user": membership.user_id, "workspace": team.workspace.pk, "role": "editor"}
    assert admin.post(url, data).status_code == 302
    assert Membership.objects.get(pk=membership.pk).role == "editor"


def test_the_audit_log_is_read_only_in_the_admin(client, team):
    admin = admin_client(client, team)
    entry = AuditEntry.objects.get()
    listing = admin.get(reverse("admin:surveys_auditentry_changelist")).content.decode()
    assert "olivia" in listing and "nightly sync" in listing
    change_url = reverse("admin:surveys_auditentry_change", args=[entry.pk])
    page = admin.get(change_url)
    assert page.status_code == 200 and 'name="_save"' not in page.content.decode()
    assert admin.post(change_url, {"actor_name": "mallory", "action": "opened"}).status_code == 403
    assert admin.get(reverse("admin:surveys_auditentry_add")).status_code == 403
    assert admin.post(reverse("admin:surveys_auditentry_delete", args=[entry.pk]), {"post": "yes"}).status_code == 403
    bulk = {"action": "delete_selected", "_selected_action": [entry.pk], "post": "yes"}
    admin.post(reverse("admin:surveys_auditentry_changelist"), bulk)
    assert list(AuditEntry.objects.values_list("actor_name", "action")) == [("olivia", "closed")]


def test_the_admin_names_the_workspace_models_in_korean(client, team):
    admin = admin_client(client, team)
    client.cookies["django_language"] = "ko"
    index = admin.get(reverse("admin:index"), HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    for name in ("워크스페이스", "워크스페이스 구성원", "워크스페이스 초대", "감사 기록"):
        assert name in index, name


def test_the_workspace_admin_is_for_staff_only(client, team):
    client.force_login(team.users["owner"])
    for name in ("workspace", "membership", "workspaceinvitation", "auditentry"):
        assert client.get(reverse(f"admin:surveys_{name}_changelist")).status_code == 302
