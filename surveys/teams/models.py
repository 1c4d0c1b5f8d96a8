"""Workspaces, their members and invitations, the audit log, and OpenID Connect identities.

A survey whose ``workspace`` is empty is *personal*: only its owner reaches it, as before workspaces
existed (so existing surveys and accounts keep working unchanged). A survey in a workspace is reached
through membership only; its ``owner`` then just records who created it.
"""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Workspace(models.Model):
    name = models.CharField(_("name"), max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "pk"]
        verbose_name = _("workspace")
        verbose_name_plural = _("workspaces")

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        from django.urls import reverse

        return reverse("workspace_detail", args=[self.pk])


class Role(models.TextChoices):
    OWNER = "owner", _("Owner")
    EDITOR = "editor", _("Editor")
    VIEWER = "viewer", _("Viewer")


class Membership(models.Model):
    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="memberships", verbose_name=_("workspace")
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships", verbose_name=_("member")
    )
    role = models.CharField(_("role"), max_length=10, choices=Role.choices)
    joined_at = models.DateTimeField(_("joined"), auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "user"], name="one_membership_per_user")]
        ordering = ["joined_at", "pk"]
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace} ({self.role})"


def hash_token(token: str) -> str:
    """Only the SHA-256 of an invitation token is stored: the database alone cannot accept invitations."""
    return hashlib.sha256(token.encode()).hexdigest()


class WorkspaceInvitation(models.Model):
    """An emailed, single-use invitation to join a workspace in a role."""

    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="invitations", verbose_name=_("workspace")
    )
    email = models.EmailField(_("email address"))
    role = models.CharField(_("role"), max_length=10, choices=Role.choices, default=Role.EDITOR)
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+", verbose_name=_("invited by")
    )
    created_at = models.DateTimeField(_("sent"), auto_now_add=True)
    accepted_at = models.DateTimeField(_("accepted"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = _("workspace invitation")
        verbose_name_plural = _("workspace invitations")

    def __str__(self) -> str:
        return f"invitation of {self.email} to {self.workspace}"

    def new_token(self) -> str:
        """Set a fresh token and return it (it is shown once, in the mail)."""
        token = secrets.token_urlsafe(24)
        self.token_hash = hash_token(token)
        return token


class AuditEntry(models.Model):
    """Who changed what: builder edits, opening, closing, exports and member changes.

    Organizer actions only; nothing about respondents is logged here.
    """

    class Action(models.TextChoices):
        CREATED = "created", _("created the survey")
        EDITED = "edited", _("edited the survey")
        OPENED = "opened", _("opened the survey")
        CLOSED = "closed", _("closed the survey")
        DELETED = "deleted", _("deleted the survey")
        EXPORTED = "exported", _("exported")
        MOVED = "moved", _("moved the survey into the workspace")
        INVITED = "invited", _("invited a member")
        WITHDREW = "withdrew", _("withdrew an invitation")
        JOINED = "joined", _("joined the workspace")
        ROLE = "role", _("changed a member's role")
        REMOVED = "removed", _("removed a member")

    workspace = models.ForeignKey(
        Workspace, null=True, on_delete=models.CASCADE, related_name="audit_entries", verbose_name=_("workspace")
    )
    survey = models.ForeignKey(
        "surveys.Survey", null=True, on_delete=models.SET_NULL, related_name="+", verbose_name=_("survey")
    )
    survey_title = models.CharField(_("survey title"), max_length=200, blank=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+", verbose_name=_("account")
    )
    actor_name = models.CharField(_("who"), max_length=150)
    action = models.CharField(_("action"), max_length=10, choices=Action.choices)
    detail = models.CharField(_("detail"), max_length=300, blank=True)
    #: The role a member was invited to, joined in or given (shown translated).
    role = models.CharField(_("role"), max_length=10, choices=Role.choices, blank=True)
    #: The name of the API token the change was made with; empty for the pages. Never the token itself.
    api_token = models.CharField(_("API token"), max_length=100, blank=True)
    at = models.DateTimeField(_("logged at"), auto_now_add=True)

    class Meta:
        ordering = ["-at", "-pk"]
        indexes = [models.Index(fields=["workspace", "-at"], name="audit_by_workspace")]
        verbose_name = _("audit entry")
        verbose_name_plural = _("audit entries")

    def __str__(self) -> str:
        return f"{self.actor_name} {self.action} {self.survey_title}"


class OIDCIdentity(models.Model):
    """The account an OpenID Connect subject (``iss``, ``sub``) signs in to, once mapped."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oidc_identities")
    issuer = models.CharField(max_length=300)
    subject = models.CharField(max_length=255)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"], name="one_account_per_subject")]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"
