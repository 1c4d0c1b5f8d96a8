"""Real Chromium, driven by Playwright, against Django's live server.

Debian's /usr/bin/chromium is used (``playwright install`` cannot download here).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from django.core.servers.basehttp import ThreadedWSGIServer

CHROMIUM = Path(os.environ.get("MURMUR_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Playwright's sync API keeps an event loop running in this thread, which makes Django's
# ORM refuse calls from the test body unless told that this is deliberate.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


class _LiveServer(ThreadedWSGIServer):
    """Django's live server, with static files cached by the browser and, on in-memory SQLite, the
    application run one request at a time.

    Static files get ``Cache-Control: max-age`` as production's hashed, far-future files do
    (whitenoise), so a context loads each script once rather than once a page; a context that
    routes requests has no cache (Playwright), and a new context starts empty.

    On in-memory SQLite every request thread shares the test's one database connection, and
    Django's documentation warns that two threads querying it at once "may sometimes randomly
    cause the tests to fail" (the likely cause of a CI timeout: a builder's cost preview and its
    save, sent together by htmx). Connections are still accepted by threads (Chromium opens idle
    ones ahead of time, which would stall a server without threads); only running the
    application, body included, takes the lock; static files, which never touch the database, do
    not. PostgreSQL runs requests at once: one connection a thread, no sharing.
    """

    serial = False

    def set_app(self, application):
        from django.conf import settings

        static = "/" + settings.STATIC_URL.lstrip("/")
        lock = threading.Lock()

        def serve(environ, start_response):
            if environ.get("PATH_INFO", "").startswith(static):

                def cached(status, headers, exc_info=None):
                    return start_response(status, [*headers, ("Cache-Control", "max-age=3600")], exc_info)

                return application(environ, cached)
            if not self.serial:
                return application(environ, start_response)
            with lock:
                result = application(environ, start_response)
                try:
                    body = b"".join(result)  # a streaming body reads the database while it runs
                finally:
                    if hasattr(result, "close"):
                        result.close()
            return [body]

        super().set_app(serve)


@pytest.fixture(scope="session", autouse=True)
def _live_server_class():
    from django.db import connection
    from django.test.testcases import LiveServerThread

    _LiveServer.serial = connection.vendor == "sqlite"
    LiveServerThread.server_class = _LiveServer
    yield


#: The walkthrough (axe-core, English-word and overflow checks on every page of organizer ->
#: respondent -> results) runs in make test once, in Korean at the phone width: the stricter language
#: (no English may be left on it) and the harder layout. CI (make test-all) runs it in both languages
#: at both widths.
KOREAN_PHONE_ONLY_IN_MAKE_TEST = {"test_organizer_respondent_results_walkthrough"}

#: The page sweeps beyond it (axe-core on every other page, the phone-width tables) run in CI only
#: (make test-all), in every language and width they take: each costs 3-12 s on this 2-core
#: machine, and make test, the loop, keeps under 4 minutes. Every browser privacy test stays in
#: make test.
SWEEPS_IN_CI_ONLY = {
    "test_every_other_page_passes_axe",
    "test_workspace_pages_pass_axe",
    "test_the_new_pages_pass_axe_in_both_languages_at_both_widths",
    "test_the_sampling_panel_and_its_budget_comparison_pass_axe_at_390_px",
    "test_the_condition_editor_and_path_preview_pass_axe_at_390_px",
    "test_every_respondent_page_passes_axe_in_both_languages",
    "test_the_builders_language_pages_pass_axe",
    "test_results_tables_fit_a_phone",
    "test_the_matrix_charts_legend_shows_every_label_whole_at_both_widths",
}


def pytest_collection_modifyitems(items):
    for item in items:
        if Path(item.fspath).is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.browser)
            params = getattr(item, "callspec", None)
            params = params.params if params else {}
            korean_phone = params.get("language", "ko") == "ko" and params.get("width", "phone") == "phone"
            if item.originalname in SWEEPS_IN_CI_ONLY or (
                item.originalname in KOREAN_PHONE_ONLY_IN_MAKE_TEST and not korean_phone
            ):
                item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium (or run make test-fast)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.js_errors = errors
    # Anything the Content-Security-Policy blocked (an inline style or script, eval, another
    # origin) is reported on the console; every browser test fails on it.
    violations: list[str] = []
    page.on("console", lambda message: "Content Security Policy" in message.text and violations.append(message.text))
    yield page
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
    assert not violations, f"Content-Security-Policy violations: {violations}"


#: What one ledger entry holds (static/ldp/ledger.js): never an answer or a report.
LEDGER_FIELDS = {"survey", "title", "series", "round", "question", "epsilon", "memo", "day"}


def assert_only_the_ledger_is_stored(page) -> str:
    """The page's storage holds the privacy ledger and nothing else; returns the ledger's text."""
    import json

    storage = page.evaluate("({local: {...localStorage}, session: sessionStorage.length})")
    assert storage["session"] == 0
    assert set(storage["local"]) == {"murmur-epsilon-ledger-v1"}
    text = storage["local"]["murmur-epsilon-ledger-v1"]
    assert all(set(entry) == LEDGER_FIELDS for entry in json.loads(text))
    return text


def log_in(page, base: str, username: str) -> None:
    """Sign in through the login page as ``username`` (tests.base.PASSWORD) and wait for the home page."""
    from django.urls import reverse

    from tests.base import PASSWORD

    page.goto(f"{base}{reverse('login')}")
    page.fill("[name=username]", username)
    page.fill("[name=password]", PASSWORD)
    page.click("main form[action$='/login/'] button[type=submit]")
    page.wait_for_url(f"{base}/")


def open_answer_page(browser, live_server, survey):
    """A fresh context on the survey's answer page: (context, page, page errors, POST bodies), the last two
    filled as they happen."""
    from django.urls import reverse

    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    bodies: list[str] = []
    page.on("request", lambda r: r.method == "POST" and bodies.append(r.post_data or ""))
    page.goto(f"{live_server.url}{reverse('respond', args=[survey.slug])}")
    return context, page, errors, bodies
