"""The admin works under the site's Content-Security-Policy (the page fixture fails on any violation)."""

from __future__ import annotations

from tests.base import PASSWORD, make_open_survey, make_user


def test_staff_log_in_to_the_admin_and_browse_without_a_policy_violation(live_server, page):
    staff = make_user("charlie", is_staff=True, is_superuser=True)
    survey = make_open_survey(staff)
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("[name=username]", "charlie")
    page.fill("[name=password]", PASSWORD)
    page.click("[type=submit]")
    page.wait_for_url(f"{live_server.url}/admin/")
    for path in ("surveys/survey/", f"surveys/survey/{survey.pk}/change/", "surveys/account/", "auth/user/add/"):
        page.goto(f"{live_server.url}/admin/{path}")
        assert page.locator("#content").count() == 1
