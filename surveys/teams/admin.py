"""Django admin for workspaces, their members and invitations, and the audit log (imported by
``surveys/admin.py``).

The audit log is read-only here as everywhere: staff may read entries, never add, change or delete
one. Invitations are made from the workspace page, which mails the link; staff may withdraw one.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from surveys.teams.models import AuditEntry, Membership, Workspace, WorkspaceInvitation


class MembershipInline(admin.TabularInline):
    model = Membership
    fields = ("user", "role", "joined_at")
    readonly_fields = ("joined_at",)
    raw_id_fields = ("user",)
    extra = 0


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ("name", "member_count", "created_at")
    search_fields = ("name",)
    readonly_fields = ("created_at",)
    inlines = [MembershipInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Workspace]:
        return super().get_queryset(request).annotate(n_members=Count("memberships"))

    @admin.display(description=_("members"), ordering="n_members")
    def member_count(self, workspace: Workspace) -> int:
        return workspace.n_members  # type: ignore[attr-defined]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ("user", "workspace", "role", "joined_at")
    list_filter = ("role",)
    search_fields = ("user__username", "user__email", "workspace__name")
    list_select_related = ("user", "workspace")
    raw_id_fields = ("user", "workspace")
    readonly_fields = ("joined_at",)


@admin.register(WorkspaceInvitation)
class WorkspaceInvitationAdmin(admin.ModelAdmin):
    """Invitations, without their token (only its hash is stored, and it is not shown either)."""

    list_display = ("email", "workspace", "role", "invited_by", "created_at", "accepted_at")
    list_filter = ("role",)
    search_fields = ("email", "workspace__name")
    list_select_related = ("workspace", "invited_by")
    fields = ("workspace", "email", "role", "invited_by", "created_at", "accepted_at")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # the workspace page invites: it mails the link, which only exists then


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    list_display = ("at", "actor_name", "action", "survey_title", "workspace", "detail", "api_token")
    list_filter = ("action",)
    search_fields = ("actor_name", "survey_title", "detail", "api_token", "workspace__name")
    list_select_related = ("workspace",)
    date_hierarchy = "at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
