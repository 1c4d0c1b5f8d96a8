"""Workspaces: creating one, inviting by email, accepting, roles, removing, moving surveys, the audit log."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from django.urls import reverse

from surveys.access import get_survey_for, needs_granted, surveys_for
from surveys.models import AuditEntry, Membership, Survey, Workspace, WorkspaceInvitation
from surveys.teams.models import Role
from tests.base import make_question, make_survey, make_user, read_body
from tests.teams import make_team


@pytest.fixture
def team(db):
    return make_team()


def invite(client, team, email, role="editor", language="en"):
    url = reverse("workspace_invite", args=[team.workspace.pk])
    return client.post(url, {"email": email, "role": role, "language": language})


def link_in(message) -> str:
    return re.search(r"http://testserver(/workspaces/join/[^/\s]+/)", message.body).group(1)


def test_creating_a_workspace_makes_its_creator_owner(client, organizer):
    client.force_login(organizer)
    response = client.post(reverse("workspace_list"), {"name": "Lab"})
    workspace = Workspace.objects.get(name="Lab")
    assert response.url == workspace.get_absolute_url()
    assert Membership.objects.get(workspace=workspace).role == Role.OWNER
    assert b"Lab" in client.get(reverse("workspace_list")).content


def test_an_invitation_is_mailed_accepted_once_and_logged(client, team):
    client.force_login(team.users["owner"])
    invite(client, team, "newcomer@example.org", "viewer")
    (message,) = mail.outbox
    assert message.to == ["newcomer@example.org"] and "Research team" in message.subject
    assert "olivia invites you" in message.body and "as Viewer" in message.body
    invitation = WorkspaceInvitation.objects.get()
    link = link_in(message)
    assert invitation.token_hash not in link  # only the token's hash is stored

    newcomer = make_user("nina", email="newcomer@example.org")
    client.force_login(newcomer)
    assert client.get(link).status_code == 200
    assert client.post(link).url == team.workspace.get_absolute_url()
    assert Membership.objects.get(user=newcomer).role == Role.VIEWER
    assert get_survey_for(newcomer, team.survey.pk, "view") == team.survey
    # Used once: the link is dead now, for anyone.
    client.force_login(team.users["outsider"])
    assert client.post(link).status_code == 404
    assert not Membership.objects.filter(user=team.users["outsider"]).exists()
    actions = list(AuditEntry.objects.filter(workspace=team.workspace).values_list("action", flat=True))
    assert actions[:2] == ["joined", "invited"]


def test_the_invitation_mail_speaks_korean(client, team):
    client.force_login(team.users["owner"])
    invite(client, team, "kim@example.org", "editor", "ko")
    (message,) = mail.outbox
    assert "Research team" in message.subject and "워크스페이스" in message.subject
    assert "편집자" in message.body


def test_only_owners_invite_change_roles_and_remove(client, team):
    victim = team.membership("viewer")
    for who in ("editor", "viewer", "outsider", "staff"):
        client.force_login(team.users[who])
        invited = invite(client, team, "x@example.org", "owner")
        role = client.post(reverse("workspace_member_role", args=[team.workspace.pk, victim.pk]), {"role": "owner"})
        remove = client.post(reverse("workspace_member_remove", args=[team.workspace.pk, victim.pk]))
        assert (invited.status_code, role.status_code, remove.status_code) == (404, 404, 404)
    assert not mail.outbox and not WorkspaceInvitation.objects.exists()
    assert Membership.objects.get(pk=victim.pk).role == Role.VIEWER


def test_a_removed_member_loses_access_at_once(client, team):
    editor = team.users["editor"]
    client.force_login(editor)
    assert client.get(reverse("survey_detail", args=[team.survey.pk])).status_code == 200
    owner_client = client.__class__()
    owner_client.force_login(team.users["owner"])
    owner_client.post(reverse("workspace_member_remove", args=[team.workspace.pk, team.membership("editor").pk]))
    # The same session, the very next request.
    for name in ("survey_detail", "survey_results"):
        assert client.get(reverse(name, args=[team.survey.pk])).status_code == 404
    assert client.get(reverse("workspace_detail", args=[team.workspace.pk])).status_code == 404
    assert not surveys_for(editor, "view").exists()
    assert AuditEntry.objects.filter(action="removed", detail="eddie").exists()


def test_the_last_owner_stays(client, team):
    client.force_login(team.users["owner"])
    own = team.membership("owner")
    client.post(reverse("workspace_member_remove", args=[team.workspace.pk, own.pk]))
    client.post(reverse("workspace_member_role", args=[team.workspace.pk, own.pk]), {"role": "viewer"})
    assert Membership.objects.get(pk=own.pk).role == Role.OWNER


def test_roles_grant_what_they_say(team):
    granted = {who: needs_granted(user, team.survey) for who, user in team.users.items()}
    assert granted["owner"] == {"view", "export", "edit", "manage"}
    assert granted["editor"] == {"view", "export", "edit"}
    assert granted["viewer"] == {"view"}
    assert granted["outsider"] == set()
    assert granted["staff"] == {"view", "export"}


def test_viewers_see_results_but_not_raw_reports(client, team):
    client.force_login(team.users["viewer"])
    pk = team.survey.pk
    assert client.get(reverse("survey_results", args=[pk])).status_code == 200
    assert client.get(reverse("export_estimates", args=[pk, "csv"])).status_code == 200
    assert client.get(reverse("export_reports", args=[pk, "csv"])).status_code == 404
    assert client.get(reverse("survey_detail", args=[pk])).status_code == 404
    page = client.get(reverse("workspace_detail", args=[team.workspace.pk])).content.decode()
    assert "Shared pulse" in page and team.survey.get_results_url() in page
    assert team.survey.get_absolute_url() + '"' not in page  # no builder link for viewers
    assert "Audit log" not in page and "Invite a member" not in page


def test_personal_surveys_stay_personal(client, team):
    personal = make_survey(team.users["editor"], title="Eddie's own")
    assert set(surveys_for(team.users["owner"], "view")) == {team.survey}
    assert set(surveys_for(team.users["editor"], "edit")) == {team.survey, personal}
    client.force_login(team.users["editor"])
    listing = client.get(reverse("survey_list")).content.decode()
    assert "Eddie&#x27;s own" in listing and "Shared pulse" in listing


def test_moving_a_personal_survey_into_the_workspace(client, team):
    personal = make_survey(team.users["editor"], title="Eddie's own")
    client.force_login(team.users["editor"])
    client.post(reverse("workspace_add_survey", args=[team.workspace.pk]), {"survey": personal.pk})
    personal.refresh_from_db()
    assert personal.workspace == team.workspace
    assert get_survey_for(team.users["viewer"], personal.pk, "view") == personal
    # Someone else's personal survey cannot be moved in.
    foreign = make_survey(team.users["outsider"], title="Oscar's")
    response = client.post(reverse("workspace_add_survey", args=[team.workspace.pk]), {"survey": foreign.pk})
    assert response.status_code == 400
    foreign.refresh_from_db()
    assert foreign.workspace is None


def test_viewers_cannot_move_surveys_in(client, team):
    personal = make_survey(team.users["viewer"], title="Vera's")
    client.force_login(team.users["viewer"])
    response = client.post(reverse("workspace_add_survey", args=[team.workspace.pk]), {"survey": personal.pk})
    assert response.status_code == 404
    assert Survey.objects.get(pk=personal.pk).workspace is None


def test_the_audit_log_records_builder_edits_transitions_and_exports(client, team):
    client.force_login(team.users["editor"])
    pk = team.survey.pk
    client.post(
        reverse("survey_settings", args=[pk]),
        {"title": "Shared pulse 2", "expected_respondents": "500", "description": ""},
    )
    client.post(reverse("survey_close", args=[pk]))
    read_body(client.get(reverse("export_reports", args=[pk, "csv"])))  # a file: read, which closes it
    client.post(reverse("survey_settings", args=[pk]), {"title": ""})  # invalid: nothing changes
    entries = list(AuditEntry.objects.filter(workspace=team.workspace).order_by("pk"))
    assert [(e.actor_name, e.action) for e in entries] == [
        ("eddie", "edited"),
        ("eddie", "closed"),
        ("eddie", "exported"),
    ]
    assert entries[2].detail == "reports.csv"
    client.force_login(team.users["owner"])
    page = client.get(reverse("workspace_detail", args=[team.workspace.pk])).content.decode()
    assert "Audit log" in page and page.count("data-audit-action") == 3


def test_refused_requests_log_nothing(client, team):
    client.force_login(team.users["viewer"])
    client.post(reverse("survey_close", args=[team.survey.pk]))
    read_body(client.get(reverse("export_reports", args=[team.survey.pk, "json"])))
    assert not AuditEntry.objects.exists()


def test_the_survey_page_names_its_workspace(client, team):
    client.force_login(team.users["owner"])
    page = client.get(reverse("survey_detail", args=[team.survey.pk])).content.decode()
    assert "data-workspace" in page and team.workspace.get_absolute_url() in page


def test_workspace_pages_speak_korean(client, team):
    client.force_login(team.users["owner"])
    client.cookies["django_language"] = "ko"
    page = client.get(reverse("workspace_detail", args=[team.workspace.pk])).content.decode()
    assert "감사 기록" in page and "구성원 초대" in page


def test_owners_and_editors_create_a_survey_inside_the_workspace(client, team):
    url = reverse("workspace_survey_create", args=[team.workspace.pk])
    for who in ("owner", "editor"):
        client.force_login(team.users[who])
        page = client.get(reverse("workspace_detail", args=[team.workspace.pk])).content.decode()
        assert f'href="{url}"' in page
        assert client.get(url).status_code == 200
        response = client.post(url, {"title": f"{who}'s team survey", "expected_respondents": "50"})
        survey = Survey.objects.get(title=f"{who}'s team survey")
        assert response.url == survey.get_absolute_url()
        assert survey.workspace == team.workspace and survey.owner == team.users[who]
        # Shared at once: the viewer sees its results, the other editor builds it.
        assert get_survey_for(team.users["viewer"], survey.pk, "view") == survey
        assert get_survey_for(team.users["editor"], survey.pk, "edit") == survey
    created = AuditEntry.objects.filter(workspace=team.workspace, action="created")
    assert sorted(created.values_list("actor_name", flat=True)) == ["eddie", "olivia"]


def test_viewers_and_outsiders_cannot_create_a_survey_in_the_workspace(client, team):
    url = reverse("workspace_survey_create", args=[team.workspace.pk])
    before = Survey.objects.count()
    for who in ("viewer", "outsider", "staff"):
        client.force_login(team.users[who])
        if who == "viewer":
            page = client.get(reverse("workspace_detail", args=[team.workspace.pk])).content.decode()
            assert url not in page and "data-new-survey" not in page
        assert client.get(url).status_code == 404
        assert client.post(url, {"title": "Sneaked in", "expected_respondents": "50"}).status_code == 404
    assert Survey.objects.count() == before and not AuditEntry.objects.exists()


def test_an_invalid_new_workspace_survey_is_not_stored(client, team):
    client.force_login(team.users["editor"])
    response = client.post(reverse("workspace_survey_create", args=[team.workspace.pk]), {"title": ""})
    assert response.status_code == 400 and Survey.objects.filter(workspace=team.workspace).count() == 1
    client.cookies["django_language"] = "ko"
    page = client.get(reverse("workspace_survey_create", args=[team.workspace.pk])).content.decode()
    assert "Research team" in page and "워크스페이스" in page


def test_invitations_are_limited_per_inviter_and_nothing_is_stored_when_refused(client, team, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "invite": [(2, 3600)], "invite_workspace": [(100, 3600)]}
    client.force_login(team.users["owner"])
    assert [invite(client, team, f"n{i}@example.org").status_code for i in range(2)] == [302, 302]
    client.cookies["django_language"] = "ko"
    refused = invite(client, team, "third@example.org")
    assert refused.status_code == 429 and 0 < int(refused["Retry-After"]) <= 3600
    page = refused.content.decode()
    assert "초대" in page and "60분" in page and "Too many" not in page
    assert len(mail.outbox) == 2 and WorkspaceInvitation.objects.count() == 2
    assert not WorkspaceInvitation.objects.filter(email="third@example.org").exists()
    assert AuditEntry.objects.filter(action="invited").count() == 2


def test_invitations_are_limited_per_workspace_across_its_owners(client, team, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "invite": [(100, 3600)], "invite_workspace": [(3, 3600)]}
    team.membership("editor").__class__.objects.filter(pk=team.membership("editor").pk).update(role=Role.OWNER)
    client.force_login(team.users["owner"])
    assert [invite(client, team, f"a{i}@example.org").status_code for i in range(2)] == [302, 302]
    client.force_login(team.users["editor"])
    assert invite(client, team, "b0@example.org").status_code == 302
    refused = invite(client, team, "b1@example.org")
    assert refused.status_code == 429 and "Nothing was sent" in refused.content.decode()
    assert WorkspaceInvitation.objects.count() == 3 and len(mail.outbox) == 3
    # Another workspace of the same owner is counted on its own.
    other = Workspace.objects.create(name="Other lab")
    Membership.objects.create(workspace=other, user=team.users["editor"], role=Role.OWNER)
    url = reverse("workspace_invite", args=[other.pk])
    assert client.post(url, {"email": "c@example.org", "role": "viewer", "language": "en"}).status_code == 302


def test_an_invalid_invitation_is_not_counted(client, team, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "invite": [(1, 3600)]}
    client.force_login(team.users["owner"])
    assert invite(client, team, "not an address").status_code == 400
    assert invite(client, team, "good@example.org").status_code == 302


def test_every_export_file_is_logged(client, team):
    client.force_login(team.users["editor"])
    pk = team.survey.pk
    for name in ("export_sav", "export_dta", "export_r", "export_workbook"):
        response = client.get(reverse(name, args=[pk]))
        read_body(response)  # a file: read, which closes it
        assert response.status_code in (200, 302), name
    # An analysis export without its choices is refused (400): nothing was exported.
    assert client.get(reverse("export_analysis", args=[pk])).status_code == 400
    files = AuditEntry.objects.filter(workspace=team.workspace, action="exported").values_list("detail", flat=True)
    assert sorted(files) == ["analysis.R", "reports.dta", "reports.sav", "survey.xlsx"]


def test_the_audit_log_records_opening_and_every_member_change_for_owners_only(client, team):
    pk = team.workspace.pk
    client.force_login(team.users["editor"])
    draft = make_survey(team.users["editor"], title="Next pulse", workspace=team.workspace)
    make_question(draft, text="Anything else?")
    assert client.post(reverse("survey_open", args=[draft.pk])).status_code == 302
    client.force_login(team.users["owner"])
    invite(client, team, "later@example.org", "viewer")
    pending = WorkspaceInvitation.objects.get(email="later@example.org")
    client.post(reverse("workspace_invitation_revoke", args=[pk, pending.pk]))
    client.post(reverse("workspace_member_role", args=[pk, team.membership("viewer").pk]), {"role": "editor"})
    client.post(reverse("workspace_member_remove", args=[pk, team.membership("viewer").pk]))
    entries = AuditEntry.objects.filter(workspace=team.workspace).order_by("pk")
    assert [(e.actor_name, e.action, e.detail, e.role) for e in entries] == [
        ("eddie", "opened", "", ""),
        ("olivia", "invited", "later@example.org", "viewer"),
        ("olivia", "withdrew", "later@example.org", "viewer"),
        ("olivia", "role", "vera", "editor"),
        ("olivia", "removed", "vera", ""),
    ]
    page = client.get(reverse("workspace_detail", args=[pk])).content.decode()
    assert page.count("data-audit-action") == 5 and "withdrew an invitation" in page
    client.force_login(team.users["editor"])  # editors change things but do not read the log
    page = client.get(reverse("workspace_detail", args=[pk])).content.decode()
    assert "data-audit-action" not in page and "Audit log" not in page


@pytest.mark.parametrize("who", ["owner", "editor", "viewer", "staff"])
def test_pages_offer_the_builder_and_deletion_only_to_who_may_use_them(client, team, who):
    """A link or form the route would refuse is not offered (the slow role walk checks every page)."""
    client.force_login(team.users[who])
    builder, delete = team.survey.get_absolute_url(), reverse("survey_delete", args=[team.survey.pk])
    results = client.get(reverse("survey_results", args=[team.survey.pk])).content.decode()
    assert (f'href="{builder}"' in results) is (who in ("owner", "editor"))
    if who in ("owner", "editor"):
        assert (f'action="{delete}"' in client.get(builder).content.decode()) is (who == "owner")
