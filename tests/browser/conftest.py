"""Real Chromium, driven by Playwright, against Django's live server.

Debian's /usr/bin/chromium is used (``playwright install`` cannot download here).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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


def pytest_collection_modifyitems(items):
    for item in items:
        if Path(item.fspath).is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.browser)


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
