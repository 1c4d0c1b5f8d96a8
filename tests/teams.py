"""A workspace with one member of each role, an outsider and staff, and an open survey with reports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from surveys.models import Matrix, Membership, Question, Survey, Workspace, WorkspaceInvitation
from surveys.teams.models import Role, hash_token
from tests.base import make_open_survey, make_reports, make_user


@dataclass
class Team:
    workspace: Workspace
    users: dict[str, Any]  # owner, editor, viewer, outsider, staff
    survey: Survey
    question: Question
    matrix: Matrix

    def membership(self, who: str) -> Membership:
        return Membership.objects.get(workspace=self.workspace, user=self.users[who])


def make_team() -> Team:
    users = {
        "owner": make_user("olivia", email="olivia@example.org"),
        "editor": make_user("eddie", email="eddie@example.org"),
        "viewer": make_user("vera", email="vera@example.org"),
        "outsider": make_user("oscar", email="oscar@example.org"),
        "staff": make_user("stella", is_staff=True, is_superuser=True),
    }
    workspace = Workspace.objects.create(name="Research team")
    for role in ("owner", "editor", "viewer"):
        Membership.objects.create(workspace=workspace, user=users[role], role=Role(role))
    survey = make_open_survey(users["owner"], title="Shared pulse", workspace=workspace)
    question = survey.questions.get()
    make_reports(question, [0, 1, 2, 0, 1] * 8, seed=1)
    matrix = Matrix.objects.create(survey=survey, title="Grid")
    return Team(workspace, users, survey, question, matrix)


def make_pending_invitation(team: Team, role: str = "editor") -> WorkspaceInvitation:
    """An invitation of later@example.org to the team's workspace, not accepted yet."""
    invitation = WorkspaceInvitation(workspace=team.workspace, email="later@example.org", role=role)
    invitation.token_hash = hash_token("a-pending-token")
    invitation.save()
    return invitation
