"""Inviting, adding and removing workspace members; the rules the workspace views follow.

An invitation is a single-use link mailed to an address; only the SHA-256 of its token is stored,
and it expires after ``INVITATION_DAYS``. Whoever opens the link while signed in and accepts joins
in the invited role (holding the link is what the mail proves). A workspace always keeps at least
one owner.

Each invitation mails an address the inviter typed, so invitations are rate limited like the other
mail-sending forms (:mod:`surveys.responding.ratelimits`): per inviter (``RATE_LIMITS["invite"]``)
and per workspace (``RATE_LIMITS["invite_workspace"]``), so neither one account nor a workspace's
several owners together can turn Murmur into a mailer.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import transaction
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import ngettext_lazy

from surveys.models import Account
from surveys.responding.ratelimits import hit, keyed_hash, rates_for
from surveys.teams import audit
from surveys.teams.models import AuditEntry, Membership, Role, Workspace, WorkspaceInvitation, hash_token

INVITATION_DAYS = 14


class MemberError(Exception):
    """A member change that would leave a workspace without an owner."""


@transaction.atomic
def create_workspace(user: Any, name: str) -> Workspace:
    workspace = Workspace.objects.create(name=name)
    Membership.objects.create(workspace=workspace, user=user, role=Role.OWNER)
    return workspace


INVITE_WAIT = ngettext_lazy(
    "Too many invitations from you or to this workspace in a short time. Nothing was sent: please wait "
    "about %(minutes)s minute and invite again.",
    "Too many invitations from you or to this workspace in a short time. Nothing was sent: please wait "
    "about %(minutes)s minutes and invite again.",
    "minutes",
)


def invitation_wait(inviter: Any, workspace: Workspace) -> int | None:
    """Count one invitation by ``inviter`` to ``workspace``: the seconds to wait if over a limit, else None.

    The workspace's count is taken only when the inviter's allows, so one member refused again and
    again does not use up the workspace's invitations for the others.
    """
    if not settings.RATE_LIMITS_ENABLED:
        return None
    wait = hit("invite", keyed_hash("invite", str(inviter.pk)), rates_for("invite"))
    if wait is None:
        wait = hit("invite_workspace", keyed_hash("invite-workspace", str(workspace.pk)), rates_for("invite_workspace"))
    return wait


def invite(request: HttpRequest, workspace: Workspace, email: str, role: str, language: str) -> WorkspaceInvitation:
    """Store an invitation and mail its link, in the invitee's account language if they have one."""
    invitation = WorkspaceInvitation(workspace=workspace, email=email, role=role, invited_by_id=request.user.pk)
    token = invitation.new_token()
    invitation.save()
    existing = get_user_model().objects.filter(email__iexact=email, is_active=True).first()
    account = Account.objects.filter(user=existing).first() if existing else None
    link = request.build_absolute_uri(reverse("workspace_join", args=[token]))
    context = {
        "workspace": workspace,
        "inviter": request.user.get_username(),
        "role": role,
        "link": link,
        "days": INVITATION_DAYS,
    }
    with translation.override(account.language if account else language):
        context["role_name"] = Role(role).label
        subject = "".join(render_to_string("teams/email/invitation_subject.txt", context).splitlines())
        body = render_to_string("teams/email/invitation_body.txt", context)
    send_mail(subject, body, None, [email])
    audit.record(request.user, workspace, AuditEntry.Action.INVITED, email, role=role)
    return invitation


def pending_invitation(token: str) -> WorkspaceInvitation | None:
    """The unused, unexpired invitation behind ``token``, if any."""
    oldest = timezone.now() - timedelta(days=INVITATION_DAYS)
    return (
        WorkspaceInvitation.objects.select_related("workspace")
        .filter(token_hash=hash_token(token), accepted_at__isnull=True, created_at__gte=oldest)
        .first()
    )


@transaction.atomic
def accept(invitation: WorkspaceInvitation, user: Any) -> Membership:
    """Join the workspace in the invited role (an existing member keeps their role); use up the link."""
    invitation.accepted_at = timezone.now()
    invitation.save(update_fields=["accepted_at"])
    membership, created = Membership.objects.get_or_create(
        workspace=invitation.workspace, user=user, defaults={"role": invitation.role}
    )
    if created:
        audit.record(user, invitation.workspace, AuditEntry.Action.JOINED, role=invitation.role)
    return membership


def _other_owners(membership: Membership) -> bool:
    return (
        Membership.objects.filter(workspace_id=membership.workspace_id, role=Role.OWNER)
        .exclude(pk=membership.pk)
        .exists()
    )


@transaction.atomic
def change_role(actor: Any, membership: Membership, role: str) -> None:
    if membership.role == Role.OWNER and role != Role.OWNER and not _other_owners(membership):
        raise MemberError
    membership.role = role
    membership.save(update_fields=["role"])
    audit.record(actor, membership.workspace, AuditEntry.Action.ROLE, membership.user.get_username(), role=role)


@transaction.atomic
def remove(actor: Any, membership: Membership) -> None:
    """Remove a member; access is checked against memberships on every request, so it ends at once."""
    if membership.role == Role.OWNER and not _other_owners(membership):
        raise MemberError
    membership.delete()
    audit.record(actor, membership.workspace, AuditEntry.Action.REMOVED, membership.user.get_username())
