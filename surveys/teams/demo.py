"""The demo workspace: the demo organizer owns it, a second demo account views it, and the demo
surveys belong to it, so `make run` shows roles and the audit log as well as results."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from surveys.access import access_changed
from surveys.models import Survey
from surveys.teams.models import Membership, Role, Workspace

DEMO_WORKSPACE = "Demo team"
DEMO_VIEWER = "demo-viewer"


@transaction.atomic
def load_demo_workspace(owner: Any, password: str, surveys: list[Survey]) -> Workspace:
    """Create the workspace and its viewer once; move the demo surveys into it."""
    workspace = Workspace.objects.filter(memberships__user=owner, name=DEMO_WORKSPACE).first()
    if workspace is None:
        workspace = Workspace.objects.create(name=DEMO_WORKSPACE)
        Membership.objects.create(workspace=workspace, user=owner, role=Role.OWNER)
    viewer, created = get_user_model().objects.get_or_create(username=DEMO_VIEWER)
    if created:
        viewer.set_password(password)
        viewer.save(update_fields=["password"])
    Membership.objects.get_or_create(workspace=workspace, user=viewer, defaults={"role": Role.VIEWER})
    Survey.objects.filter(pk__in=[survey.pk for survey in surveys], workspace__isnull=True).update(workspace=workspace)
    access_changed()
    return workspace
