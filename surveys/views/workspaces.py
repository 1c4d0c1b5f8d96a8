"""Workspace pages: create a workspace, invite and remove members, see its surveys and audit log.

Every page loads its workspace through :func:`surveys.access.get_workspace_for` with the role it
needs (any member views; owners manage members and read the log), and surveys through
:func:`surveys.access.get_survey_for`; anything else is a 404.
"""

from __future__ import annotations

from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from surveys.access import GRANTS, access_changed, get_survey_for, get_workspace_for, surveys_for
from surveys.forms.survey import SurveyForm
from surveys.models import Survey
from surveys.responding.ratelimits import in_minutes
from surveys.teams import audit, members
from surveys.teams.forms import InviteForm, MoveSurveyForm, RoleForm, WorkspaceForm
from surveys.teams.models import AuditEntry, Membership, Workspace, WorkspaceInvitation

#: The audit entries the workspace page shows, newest first.
AUDIT_SHOWN = 100


@login_required
@require_http_methods(["GET", "POST"])
def workspace_list(request: HttpRequest) -> HttpResponse:
    form = WorkspaceForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        workspace = members.create_workspace(request.user, form.cleaned_data["name"])
        messages.success(request, _("Workspace created. Invite its members below."))
        return redirect(workspace)
    memberships = Membership.objects.filter(user=cast(User, request.user)).select_related("workspace")
    return render(
        request,
        "teams/workspace_list.html",
        {"memberships": memberships, "form": form},
        status=400 if form.errors else 200,
    )


def _movable(user: Any) -> Any:
    """Personal surveys ``user`` may move into a workspace: their own."""
    return surveys_for(user, "manage").filter(workspace__isnull=True)


def detail_context(request: HttpRequest, workspace: Workspace, membership: Membership, **forms: Any) -> dict[str, Any]:
    grants = GRANTS[membership.role]
    context: dict[str, Any] = {
        "workspace": workspace,
        "membership": membership,
        "may_edit": "edit" in grants,
        "may_manage": "manage" in grants,
        "surveys": Survey.objects.filter(workspace=workspace).prefetch_related("questions"),
        "memberships": workspace.memberships.select_related("user"),
    }
    if "edit" in grants:
        context["move_form"] = forms.get("move_form") or MoveSurveyForm(surveys=_movable(request.user))
    if "manage" in grants:
        context["invite_form"] = forms.get("invite_form") or InviteForm(
            initial={"language": translation.get_language()}
        )
        context["role_form"] = RoleForm()
        context["invitations"] = workspace.invitations.filter(accepted_at__isnull=True)
        context["audit"] = AuditEntry.objects.filter(workspace=workspace).select_related("survey")[:AUDIT_SHOWN]
    return context


@login_required
@require_GET
def workspace_detail(request: HttpRequest, workspace_id: int) -> HttpResponse:
    workspace, membership = get_workspace_for(request.user, workspace_id, "view")
    return render(request, "teams/workspace_detail.html", detail_context(request, workspace, membership))


@login_required
@require_POST
def workspace_invite(request: HttpRequest, workspace_id: int) -> HttpResponse:
    workspace, membership = get_workspace_for(request.user, workspace_id, "manage")
    form = InviteForm(request.POST)
    if not form.is_valid():
        context = detail_context(request, workspace, membership, invite_form=form)
        return render(request, "teams/workspace_detail.html", context, status=400)
    wait = members.invitation_wait(request.user, workspace)
    if wait is not None:
        form.add_error(None, in_minutes(members.INVITE_WAIT, wait))
        context = detail_context(request, workspace, membership, invite_form=form)
        response = render(request, "teams/workspace_detail.html", context, status=429)
        response["Retry-After"] = str(wait)
        return response
    data = form.cleaned_data
    members.invite(request, workspace, data["email"], data["role"], data["language"])
    messages.success(request, _("Invitation sent to %(email)s.") % {"email": data["email"]})
    return redirect(workspace)


@login_required
@require_POST
def workspace_invitation_revoke(request: HttpRequest, workspace_id: int, invitation_id: int) -> HttpResponse:
    workspace, _membership = get_workspace_for(request.user, workspace_id, "manage")
    invitation = get_object_or_404(WorkspaceInvitation, pk=invitation_id, workspace=workspace, accepted_at__isnull=True)
    invitation.delete()
    audit.record(request.user, workspace, AuditEntry.Action.WITHDREW, invitation.email, role=invitation.role)
    messages.success(request, _("Invitation withdrawn."))
    return redirect(workspace)


def _change_member(request: HttpRequest, workspace_id: int, membership_id: int, change: Any, done: str) -> HttpResponse:
    """Apply ``change(actor, membership)`` to a member of a workspace the user owns; keep an owner."""
    workspace, _membership = get_workspace_for(request.user, workspace_id, "manage")
    target = get_object_or_404(
        Membership.objects.select_related("user", "workspace"), pk=membership_id, workspace=workspace
    )
    try:
        change(request.user, target)
    except members.MemberError:
        messages.error(request, _("A workspace needs at least one owner."))
    else:
        messages.success(request, done)
    return redirect(workspace)


@login_required
@require_POST
def workspace_member_role(request: HttpRequest, workspace_id: int, membership_id: int) -> HttpResponse:
    form = RoleForm(request.POST)
    role = form.cleaned_data["role"] if form.is_valid() else None

    def change(actor: Any, target: Membership) -> None:
        if role is not None:
            members.change_role(actor, target, role)

    return _change_member(request, workspace_id, membership_id, change, _("Role changed."))


@login_required
@require_POST
def workspace_member_remove(request: HttpRequest, workspace_id: int, membership_id: int) -> HttpResponse:
    message = _("Member removed: they no longer see this workspace's surveys.")
    return _change_member(request, workspace_id, membership_id, members.remove, message)


@login_required
@require_POST
def workspace_add_survey(request: HttpRequest, workspace_id: int) -> HttpResponse:
    """Move one of the user's personal surveys into the workspace (its members then share it)."""
    workspace, membership = get_workspace_for(request.user, workspace_id, "edit")
    form = MoveSurveyForm(request.POST, surveys=_movable(request.user))
    if not form.is_valid():
        context = detail_context(request, workspace, membership, move_form=form)
        return render(request, "teams/workspace_detail.html", context, status=400)
    with transaction.atomic():
        survey = get_survey_for(request.user, form.cleaned_data["survey"].pk, "manage")
        # A recurring survey's rounds move together: they share one series.
        moved = (
            Survey.objects.filter(pk=survey.pk)
            if survey.series_id is None
            else _movable(request.user).filter(series_id=survey.series_id)
        )
        moved.update(workspace=workspace)
        access_changed()
        audit.record(request.user, workspace, AuditEntry.Action.MOVED, survey=survey)
    messages.success(request, _("The survey is now in this workspace."))
    return redirect(workspace)


@login_required
@require_http_methods(["GET", "POST"])
def workspace_survey_create(request: HttpRequest, workspace_id: int) -> HttpResponse:
    """A new survey created inside the workspace (owners and editors): its members share it at once."""
    workspace, _membership = get_workspace_for(request.user, workspace_id, "edit")
    form = SurveyForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        survey = form.save(commit=False)
        survey.owner = request.user
        survey.workspace = workspace
        survey.save()
        return redirect(survey)
    context = {"form": form, "workspace": workspace}
    return render(request, "surveys/survey_create.html", context, status=400 if form.errors else 200)


@login_required
@require_http_methods(["GET", "POST"])
def workspace_join(request: HttpRequest, token: str) -> HttpResponse:
    invitation = members.pending_invitation(token)
    if invitation is None:
        return render(request, "teams/join_invalid.html", status=404)
    if request.method == "POST":
        members.accept(invitation, request.user)
        messages.success(request, _("You joined %(name)s.") % {"name": invitation.workspace.name})
        return redirect(invitation.workspace)
    return render(request, "teams/join.html", {"invitation": invitation})
