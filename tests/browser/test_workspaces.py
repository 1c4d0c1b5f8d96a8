"""Workspace pages, the invitation page and the single sign-on login, in Korean and English, on a
desktop and on a phone (390 px): axe-clean, no English on Korean pages, nothing wider than the window."""

from __future__ import annotations

import os

import pytest
from django.urls import reverse

from surveys.models import AuditEntry, Membership, Workspace, WorkspaceInvitation
from surveys.teams import audit
from surveys.teams.models import Role, hash_token
from tests.base import make_open_survey, make_user
from tests.browser.conftest import log_in
from tests.browser.test_walkthrough import AXE, WIDTHS, Checker


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("language", ["ko", "en"])
def test_workspace_pages_pass_axe(live_server, browser, db, settings, language, width):
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: npm ci --prefix tests/browser (make install-dev does it)")
    owner, viewer = make_user("민지"), make_user("지훈")
    workspace = Workspace.objects.create(name="연구팀")
    Membership.objects.create(workspace=workspace, user=owner, role=Role.OWNER)
    Membership.objects.create(workspace=workspace, user=viewer, role=Role.VIEWER)
    make_open_survey(owner, title="구내식당 만족도", workspace=workspace)
    pending = WorkspaceInvitation(workspace=workspace, email="m1@회사.한국", role=Role.EDITOR)
    pending.token_hash = hash_token("browser-token")
    pending.save()
    audit.record(owner, workspace, AuditEntry.Action.INVITED, "m1@회사.한국", role=Role.EDITOR)
    audit.record(owner, workspace, AuditEntry.Action.ROLE, "지훈", role=Role.VIEWER)
    AuditEntry.objects.create(
        workspace=workspace, actor=owner, actor_name="민지", action=AuditEntry.Action.CLOSED,
        survey_title="구내식당 만족도", api_token="야간 동기화",
    )  # fmt: skip
    settings.OIDC_ENABLED = True  # the login page's single sign-on button (not followed here)

    base = live_server.url
    context = browser.new_context(
        locale="ko-KR" if language == "ko" else "en-US",
        timezone_id="Asia/Seoul",
        viewport={"width": WIDTHS[width], "height": 900},
        bypass_csp=True,  # lets the test inject axe-core
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    checker = Checker(page, language, width, screenshots=bool(os.environ.get("MURMUR_SCREENSHOTS")))

    page.goto(f"{base}{reverse('login')}")
    assert page.locator("[data-sso]").count() == 1
    checker.check("login-sso")
    page.goto(f"{base}{reverse('login')}?sso=failed")
    checker.check("login-sso-failed")
    log_in(page, base, "민지")
    page.goto(f"{base}{reverse('workspace_list')}")
    checker.check("workspace-list")
    page.goto(f"{base}{workspace.get_absolute_url()}")
    assert page.locator("[data-audit-action]").count() == 3 and page.locator("[data-audit-token]").count() == 1
    checker.check("workspace-owner")
    page.click("[data-new-survey]")
    page.wait_for_url(f"{base}{reverse('workspace_survey_create', args=[workspace.pk])}")
    assert page.locator("[data-new-survey-workspace]").count() == 1
    checker.check("workspace-new-survey")
    page.goto(f"{base}{reverse('workspace_join', args=['browser-token'])}")
    checker.check("workspace-join")
    page.goto(f"{base}{reverse('workspace_join', args=['used-or-made-up'])}")
    checker.check("workspace-join-invalid")

    page.context.clear_cookies()
    log_in(page, base, "지훈")
    page.goto(f"{base}{workspace.get_absolute_url()}")
    assert page.locator("[data-audit]").count() == 0 and page.locator("[data-new-survey]").count() == 0
    checker.check("workspace-viewer")
    context.close()
    assert not checker.problems, "\n".join(checker.problems)
