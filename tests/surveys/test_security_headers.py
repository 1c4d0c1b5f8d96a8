"""Content-Security-Policy, Permissions-Policy and the deploy headers with the production settings
(``check --deploy`` itself: tests/surveys/test_project.py); templates and charts free of inline
script and style; mail settings from the environment."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings as django_settings
from django.urls import reverse

from config.env import envemail
from surveys.results.charts import estimate_bars
from tests.base import make_open_survey

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "ALLOWED_HOSTS": "murmur.example",
    "EMAIL_URL": "smtp://murmur%40mail.example:app%3Apassword@mail.example:587",
}


def production(code: str, **extra: str) -> subprocess.CompletedProcess[str]:
    """Run Python in a fresh process configured only by the production environment."""
    env = {"PATH": os.environ["PATH"], "DJANGO_SETTINGS_MODULE": "config.settings", **PRODUCTION, **extra}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.slow  # a production process of its own: CI and make test-all
def test_check_deploy_warns_when_production_mail_would_go_to_the_log():
    result = production(
        "from django.core.management import execute_from_command_line; "
        "execute_from_command_line(['manage.py', 'check', '--deploy', '--fail-level', 'WARNING'])",
        EMAIL_URL="console://",
    )
    assert result.returncode != 0
    assert "murmur.W001" in result.stderr + result.stdout


PRODUCTION_HEADERS = """
import django, json
django.setup()
from django.conf import settings
from django.test import Client
# The manifest storage needs collectstatic's output; static URLs do not change any header.
plain = "django.contrib.staticfiles.storage.StaticFilesStorage"
settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": plain}}
client = Client(HTTP_HOST="murmur.example")
page = client.get("/", secure=True)
http = client.get("/")
print(json.dumps({"status": page.status_code, "headers": dict(page.headers),
                  "plain": [http.status_code, http.headers.get("Location")]}))
"""


def test_production_answers_with_every_security_header():
    result = production(PRODUCTION_HEADERS)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    headers = answer["headers"]
    assert answer["status"] == 200
    assert answer["plain"] == [301, "https://murmur.example/"]
    assert headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"
    assert headers["Content-Security-Policy"] == django_settings.CONTENT_SECURITY_POLICY
    assert headers["Permissions-Policy"].startswith("accelerometer=(), autoplay=(), camera=()")
    assert headers["Referrer-Policy"] == "same-origin"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["Cross-Origin-Opener-Policy"] == "same-origin"


def test_the_policy_allows_no_inline_code_and_nothing_from_elsewhere():
    directives = dict(d.split(" ", 1) for d in django_settings.CONTENT_SECURITY_POLICY.split("; "))
    assert directives["script-src"] == "'self'"
    assert directives["style-src"] == "'self'"
    assert directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    assert "unsafe" not in django_settings.CONTENT_SECURITY_POLICY
    assert "http" not in django_settings.CONTENT_SECURITY_POLICY


@pytest.mark.parametrize("name", ["home", "login", "signup", "password_reset"])
def test_every_page_carries_the_policy(client, db, name):
    response = client.get(reverse(name))
    assert response["Content-Security-Policy"] == django_settings.CONTENT_SECURITY_POLICY
    assert "camera=()" in response["Permissions-Policy"]


def test_answer_and_admin_pages_carry_the_policy(client, organizer, staff):
    survey = make_open_survey(organizer)
    assert client.get(survey.get_share_url())["Content-Security-Policy"] == django_settings.CONTENT_SECURITY_POLICY
    client.force_login(staff)
    assert client.get("/admin/")["Content-Security-Policy"] == django_settings.CONTENT_SECURITY_POLICY


INLINE = [
    (re.compile(r"<script\b(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>"), "an inline <script>"),
    (re.compile(r"\sstyle\s*="), "a style= attribute"),
    (re.compile(r"<style\b"), "a <style> element"),
    (re.compile(r"\son[a-z]+\s*=", re.IGNORECASE), "an on*= handler"),
    (re.compile(r"hx-on|javascript:|js:"), "code htmx or the browser would evaluate"),
]


@pytest.mark.parametrize("template", sorted((ROOT / "templates").rglob("*.html")), ids=lambda path: path.name)
def test_templates_hold_no_inline_script_or_style(template):
    text = template.read_text()
    for pattern, what in INLINE:
        assert not pattern.search(text), f"{template.name} has {what}"


def test_charts_carry_their_styles_as_presentation_attributes():
    svg = estimate_bars(["Yes", "No"], np.array([0.3, 0.7]), np.array([0.2, 0.6]), np.array([0.4, 0.8]))
    assert "style=" not in svg and "<style" not in svg
    assert 'fill="#3d5afe"' in svg
    assert '<svg stroke-linejoin="round" stroke-linecap="butt"' in svg
    assert re.search(r'<text font-size="10px" font-family="[^"]*DejaVu Sans', svg)


def test_htmx_injects_no_styles_and_evaluates_no_code(organizer_client):
    html = organizer_client.get(reverse("survey_list")).content.decode()
    config = json.loads(re.search(r"<meta name=\"htmx-config\"\s+content='([^']+)'", html).group(1))
    assert config["includeIndicatorStyles"] is False
    assert config["allowEval"] is False
    assert config["allowScriptTags"] is False


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("smtp://me%40x.org:p%3Ass@mail.example:2525", ("mail.example", 2525, "me@x.org", "p:ss", True, False)),
        ("smtp://mail.example?tls=false", ("mail.example", 587, "", "", False, False)),
        ("smtps://u:p@mail.example", ("mail.example", 465, "u", "p", False, True)),
    ],
)
def test_smtp_comes_from_email_url(monkeypatch, url, expected):
    monkeypatch.setenv("EMAIL_URL", url)
    email = envemail()
    assert email.backend == "django.core.mail.backends.smtp.EmailBackend"
    assert (email.host, email.port, email.user, email.password, email.use_tls, email.use_ssl) == expected


def test_smtp_comes_from_email_host_without_a_url(monkeypatch):
    monkeypatch.delenv("EMAIL_URL", raising=False)
    monkeypatch.setenv("EMAIL_HOST", "smtp.example")
    monkeypatch.setenv("EMAIL_HOST_USER", "murmur")
    monkeypatch.setenv("EMAIL_HOST_PASSWORD", "secret")
    email = envemail()
    assert (email.host, email.port, email.user, email.password, email.use_tls) == (
        "smtp.example",
        587,
        "murmur",
        "secret",
        True,
    )


def test_development_mail_goes_to_the_console(monkeypatch):
    for name in ("EMAIL_URL", "EMAIL_HOST", "EMAIL_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    assert envemail().backend == "django.core.mail.backends.console.EmailBackend"
