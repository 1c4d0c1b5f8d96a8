"""OpenID Connect sign-on against a provider this test module starts (tests/oidc_provider.py)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
import requests
from django.contrib.auth import get_user_model
from django.urls import reverse

from surveys.models import Account, OIDCIdentity
from tests.base import make_user
from tests.oidc_provider import Provider


@pytest.fixture(scope="module")
def provider():
    with Provider() as running:
        yield running


@pytest.fixture
def sso(provider, settings, db):
    for name, value in provider.settings().items():
        setattr(settings, name, value)
    settings.AUTHENTICATION_BACKENDS = [*settings.AUTHENTICATION_BACKENDS, "surveys.teams.oidc.MurmurOIDCBackend"]
    provider.tamper = ""
    provider.claims = {"sub": "subject-1", "email": "sso@example.org", "email_verified": True}
    return provider


def sign_on(client, provider) -> str:
    """Walk the browser's way: Murmur → provider → Murmur's callback; the callback's redirect."""
    start = client.get(reverse("oidc_authentication_init"))
    assert start.status_code == 302 and start.url.startswith(provider.url + "/authorize?")
    assert "code_challenge=" in start.url and "nonce=" in start.url
    back = requests.get(start.url, allow_redirects=False, timeout=10)
    assert back.status_code == 302
    callback = urlsplit(back.headers["Location"])
    response = client.get(f"{callback.path}?{callback.query}")
    assert response.status_code == 302
    return response.url


def signed_in_user(client):
    user_id = client.session.get("_auth_user_id")
    return get_user_model().objects.get(pk=user_id) if user_id else None


def test_sign_on_is_off_without_settings(client, db):
    assert client.get(reverse("oidc_authentication_init")).status_code == 404
    assert client.get(reverse("oidc_authentication_callback") + "?code=x&state=y").status_code == 404
    assert b"data-sso" not in client.get(reverse("login")).content


def test_login_page_offers_sign_on_and_password(client, sso):
    content = client.get(reverse("login")).content
    assert b"data-sso" in content and b'name="password"' in content


def test_sign_on_creates_an_account_and_maps_the_subject(client, sso):
    assert sign_on(client, sso) == "/"
    user = signed_in_user(client)
    assert user is not None and user.email == "sso@example.org" and user.username == "sso"
    assert not user.has_usable_password()
    assert OIDCIdentity.objects.get(user=user).subject == "subject-1"


def test_sign_on_maps_an_existing_account_by_verified_email(client, sso):
    alice = make_user("alice", email="SSO@example.org")
    sign_on(client, sso)
    assert signed_in_user(client) == alice
    # Next time the subject decides, even after the address changed at the provider.
    client.logout()
    sso.claims = {"sub": "subject-1", "email": "new@example.org", "email_verified": True}
    sign_on(client, sso)
    assert signed_in_user(client) == alice
    assert get_user_model().objects.count() == 1


def test_an_unverified_email_maps_nothing(client, sso):
    make_user("alice", email="sso@example.org")
    sso.claims = {"sub": "subject-2", "email": "sso@example.org", "email_verified": False}
    assert sign_on(client, sso) == "/accounts/login/?sso=failed"
    assert signed_in_user(client) is None and not OIDCIdentity.objects.exists()


def test_an_unconfirmed_local_account_is_not_handed_over(client, sso):
    squatter = make_user("mallory", email="sso@example.org")
    Account.objects.create(user=squatter, email_confirmed=False)
    assert sign_on(client, sso) == "/accounts/login/?sso=failed"
    assert signed_in_user(client) is None


@pytest.mark.parametrize("tamper", ["signature", "audience", "issuer"])
def test_a_bad_token_is_refused(client, sso, tamper, caplog):
    sso.tamper = tamper
    assert sign_on(client, sso) == "/accounts/login/?sso=failed"
    reason = {"signature": "Signature verification failed", "audience": "Audience", "issuer": "issuer"}[tamper]
    assert "ID token refused" in caplog.text and reason in caplog.text
    assert signed_in_user(client) is None
    assert not get_user_model().objects.exists()
    assert b"data-sso-failed" in client.get("/accounts/login/?sso=failed").content


def test_a_forged_callback_is_refused(client, sso):
    client.get(reverse("oidc_authentication_init"))
    response = client.get(reverse("oidc_authentication_callback") + "?code=made-up&state=made-up")
    assert response.status_code == 302 and response.url == "/accounts/login/?sso=failed"
    assert signed_in_user(client) is None


def test_password_login_still_works_with_sign_on_on(client, sso):
    make_user("alice")
    response = client.post(reverse("login"), {"username": "alice", "password": "correct horse battery staple"})
    assert response.status_code == 302 and signed_in_user(client) is not None


def test_sign_up_still_logs_in_with_two_backends(client, sso):
    response = client.post(
        reverse("signup"),
        {
            "username": "newbie",
            "email": "newbie@example.org",
            "password1": "a long passphrase 42",
            "password2": "a long passphrase 42",
        },
    )
    assert response.status_code == 302 and signed_in_user(client).username == "newbie"
