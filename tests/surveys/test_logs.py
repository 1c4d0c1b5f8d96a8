"""The server's log lines carry no CSRF token, page token, share slug, reset token or form text.

A real HTTP server with runserver's own request handler (which logs every request line) serves
the app on a loopback port; a browser-like client logs in, previews a draft question, loads the
answer page, submits (accepted and refused), and follows a password-reset link. Everything the
configured handlers write is captured and searched for each secret the requests carried.
"""

from __future__ import annotations

import contextlib
import http.cookiejar
import io
import json
import logging
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator

import numpy as np
import pytest
from django.contrib.auth.tokens import default_token_generator
from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.servers.basehttp import WSGIRequestHandler, WSGIServer
from django.db import connections
from django.test.testcases import LiveServerThread
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from surveys.logs import redact
from tests.base import PASSWORD, make_open_survey, make_survey, make_user

DRAFT_TEXT = "Would you report your manager (draft 7f3a)?"


class RunserverThread(LiveServerThread):
    """Django's live server with runserver's request handler, which logs each request line.

    One thread serves one request at a time (the thread holds the shared in-memory database), so
    when a request is answered, every earlier request's line has been written.
    """

    def _create_server(self, connections_override=None):
        return WSGIServer((self.host, self.port), WSGIRequestHandler, allow_reuse_address=False)


@pytest.fixture
def server(transactional_db, settings):
    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    shared = {c.alias: c for c in connections.all() if c.vendor == "sqlite" and c.is_in_memory_db()}
    thread = RunserverThread("127.0.0.1", StaticFilesHandler, connections_override=shared)
    thread.daemon = True
    for connection in shared.values():
        connection.inc_thread_sharing()
    thread.start()
    thread.is_ready.wait()
    yield f"http://127.0.0.1:{thread.port}"
    thread.terminate()
    for connection in shared.values():
        connection.dec_thread_sharing()


@contextlib.contextmanager
def log_output() -> Iterator[io.StringIO]:
    """Everything Murmur's configured handlers write (the root's and runserver's), as text."""
    buffer = io.StringIO()
    handlers = [
        handler
        for name in ("", "django.server")
        for handler in logging.getLogger(name).handlers
        if type(handler) is logging.StreamHandler
    ]
    assert len(handlers) == 2
    previous = [handler.setStream(buffer) for handler in handlers]
    try:
        yield buffer
    finally:
        for handler, stream in zip(handlers, previous, strict=True):
            handler.setStream(stream)


class Browser:
    def __init__(self, base: str) -> None:
        self.base = base
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))

    def cookie(self, name: str) -> str:
        return next(cookie.value for cookie in self.cookies if cookie.name == name)

    def request(self, path: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, str]:
        request = urllib.request.Request(self.base + path, data=data, headers=headers or {})
        try:
            with self.opener.open(request) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def post_form(self, path: str, fields: dict[str, str], headers: dict[str, str] | None = None) -> tuple[int, str]:
        fields = {"csrfmiddlewaretoken": self.cookie("csrftoken"), **fields}
        body = urllib.parse.urlencode(fields).encode()
        return self.request(path, body, {"Content-Type": "application/x-www-form-urlencoded", **(headers or {})})


def test_no_secret_or_form_text_reaches_a_log_line(server):
    organizer = make_user("alice", email="alice@example.org")
    draft = make_survey(organizer)
    survey = make_open_survey(organizer, allow_repeat_responses=True, public_results=True)
    browser = Browser(server)
    with log_output() as output:
        browser.request("/accounts/login/")
        csrf = browser.cookie("csrftoken")
        assert browser.post_form("/accounts/login/", {"username": "alice", "password": PASSWORD})[0] == 200
        browser.request(f"/surveys/{draft.pk}/")
        status, _ = browser.post_form(
            f"/surveys/{draft.pk}/questions/cost/",
            {"text": DRAFT_TEXT, "kind": "single", "options_text": "Yes\nNo", "epsilon": "1", "mechanism": "krr"},
            {"HX-Request": "true"},
        )
        assert status == 200
        # A GET form's fields (as the preview used to send them) stay out of the log too.
        browser.request(f"/surveys/{draft.pk}/?" + urllib.parse.urlencode({"text": DRAFT_TEXT, "t": csrf}))

        page = browser.request(f"/s/{survey.slug}/")[1]
        token = re.search(r'data-token="([^"]+)"', page).group(1)
        randomization = survey.questions.get().current_randomization()
        mechanism = randomization.build_mechanism()
        report = mechanism.unpack_report(mechanism.randomize(np.array([1]), rng=0)[0].tobytes())
        item = {"question": randomization.question_id, "version": randomization.version, "report": report}
        headers = {"Content-Type": "application/json", "X-CSRFToken": browser.cookie("csrftoken")}
        submit = f"/s/{survey.slug}/submit/"
        assert browser.request(submit, json.dumps({"token": token, "reports": [item]}).encode(), headers)[0] == 201
        assert browser.request(submit, json.dumps({"token": token, "reports": [item]}).encode(), headers)[0] == 409
        assert browser.request(submit, b'{"token": "' + token.encode() + b'x"}', headers)[0] == 400
        browser.request(f"/r/{survey.slug}/")

        uid = urlsafe_base64_encode(force_bytes(organizer.pk))
        organizer.refresh_from_db()  # the login above changed last_login, which the token covers
        reset_token = default_token_generator.make_token(organizer)
        Browser(server).request(f"/accounts/reset/{uid}/{reset_token}/")
        browser.request("/")  # served after every line above was written
    lines = output.getvalue()

    # The test can fail: the requests were logged, with their paths.
    assert '"POST /s/[slug]/submit/ HTTP/1.1" 201' in lines
    assert '"POST /s/[slug]/submit/ HTTP/1.1" 409' in lines
    assert f'"POST /surveys/{draft.pk}/questions/cost/ HTTP/1.1" 200' in lines
    assert "Bad Request: /s/[slug]/submit/" in lines
    assert '"GET /accounts/reset/[token] HTTP/1.1" 302' in lines
    nonce_part = token.split(":")[0]
    for secret in [csrf, browser.cookie("csrftoken"), token, nonce_part, survey.slug, reset_token, "7f3a", "manager"]:
        assert secret not in lines, secret
    assert "sessionid" not in lines


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('"GET /surveys/3/?text=a+b&csrfmiddlewaretoken=xyz HTTP/1.1" 200 5', '"GET /surveys/3/?[…] HTTP/1.1" 200 5'),
        ("Not Found: /s/AbC-_9/", "Not Found: /s/[slug]/"),
        ("Bad Request: /r/AbC-_9/", "Bad Request: /r/[slug]/"),
        ('"GET /accounts/reset/MQ/abc-123/ HTTP/1.1" 302 0', '"GET /accounts/reset/[token] HTTP/1.1" 302 0'),
        ('"GET /accounts/confirm/e30:1v:sig/ HTTP/1.1" 302 0', '"GET /accounts/confirm/[token] HTTP/1.1" 302 0'),
        ('"GET /surveys/3/results/ HTTP/1.1" 200 5', '"GET /surveys/3/results/ HTTP/1.1" 200 5'),
    ],
)
def test_redaction(line, expected):
    assert redact(line) == expected
