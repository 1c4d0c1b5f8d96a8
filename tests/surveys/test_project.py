"""Project-level checks: migrations, settings, the home page."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_no_model_change_lacks_a_migration():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_home_page_explains_the_product(client):
    response = client.get("/")
    assert response.status_code == 200
    assert b"local differential privacy" in response.content
    assert b"htmx" in response.content  # django-htmx's script tag


def test_ldp_imports_without_django():
    code = "import sys, ldp; assert not any(m.split('.')[0] == 'django' for m in sys.modules), 'django imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def run_check_deploy(env_overrides):
    env = {"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "config.settings", **env_overrides}
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        env=env,
        capture_output=True,
        text=True,
    )


@pytest.mark.slow  # a production process of its own: CI and make test-all
def test_deploy_check_is_clean_with_production_settings():
    result = run_check_deploy(
        {
            "DEBUG": "false",
            "SECRET_KEY": "x" * 60 + "production-only-Zq9",
            "ALLOWED_HOSTS": "murmur.example",
            "EMAIL_URL": "smtp://murmur:secret@mail.example:587",
        }
    )
    assert result.returncode == 0, result.stderr


def test_production_refuses_the_development_secret_key():
    result = run_check_deploy({"DEBUG": "false", "ALLOWED_HOSTS": "murmur.example"})
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def test_bad_boolean_settings_are_refused():
    result = run_check_deploy({"DEBUG": "maybe"})
    assert result.returncode != 0
    assert "DEBUG must be a boolean" in result.stderr
