from __future__ import annotations


def test_home_page_renders_in_chromium_with_htmx(live_server, page):
    page.goto(live_server.url)
    assert "local differential privacy" in page.text_content("main")
    assert page.evaluate("typeof window.htmx") == "object"
