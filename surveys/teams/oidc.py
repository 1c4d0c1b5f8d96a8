"""OpenID Connect sign-on through mozilla-django-oidc, off unless ``OIDC_RP_CLIENT_ID`` is set.

The authorization-code flow (with PKCE and a nonce) of `OpenID Connect Core 1.0
<https://openid.net/specs/openid-connect-core-1_0.html>`_. On top of the library, the backend:

- checks the ID token's signature (RS256 from the provider's JWKS), ``aud`` (our client id),
  ``iss`` (``OIDC_OP_ISSUER``) and ``exp``; the library itself skips audience and issuer (§3.1.3.7);
- maps a provider subject (``iss``, ``sub``) to one account for good (:class:`OIDCIdentity`), so a
  changed address at the provider still reaches the same account;
- maps a new subject by its *verified* email (``email_verified`` true) to an existing account whose
  address Murmur trusts (confirmed, or made without sign-up), and refuses an unconfirmed one: a
  stranger who signed up with someone's address must not receive their sign-on; with no match it
  creates an account (``OIDC_CREATE_USER``);
- refuses any bad token with a failed login (back to the login page), never an error page.

Password login stays; the views answer 404 while sign-on is off.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import jwt
import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.views import View
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from surveys.models import Account
from surveys.teams.models import OIDCIdentity

log = logging.getLogger(__name__)

BACKEND = "surveys.teams.oidc.MurmurOIDCBackend"


def enabled() -> bool:
    return bool(getattr(settings, "OIDC_ENABLED", False))


class MurmurOIDCBackend(OIDCAuthenticationBackend):
    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> Any:
        if not enabled() or request is None or "nonce" not in kwargs:
            return None  # a password login, not ours
        try:
            return super().authenticate(request, **kwargs)
        except (SuspiciousOperation, requests.RequestException) as error:
            log.warning("OpenID Connect login refused: %s", error)
            return None

    def _verify_jws(self, payload: str, key: Any) -> dict[str, Any]:
        """The ID token's claims if its signature, audience, issuer and expiry are right."""
        try:
            return jwt.decode(
                payload,
                key,
                algorithms=[self.OIDC_RP_SIGN_ALGO],
                audience=self.OIDC_RP_CLIENT_ID,
                issuer=settings.OIDC_OP_ISSUER,
                options={"require": ["exp", "iat", "iss", "aud", "sub"]},
            )
        except jwt.InvalidTokenError as error:
            raise SuspiciousOperation(f"ID token refused: {error}") from error

    def retrieve_matching_jwk(self, token: str) -> Any:
        try:
            return super().retrieve_matching_jwk(token)
        except (jwt.InvalidTokenError, KeyError) as error:
            raise SuspiciousOperation(f"ID token refused: {error}") from error

    @transaction.atomic
    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        claims = self.get_userinfo(access_token, id_token, payload)
        issuer, subject = payload["iss"], str(payload["sub"])
        if str(claims.get("sub", subject)) != subject:
            raise SuspiciousOperation("userinfo is about another subject")  # OIDC Core §5.3.2
        identity = OIDCIdentity.objects.select_related("user").filter(issuer=issuer, subject=subject).first()
        if identity is not None:
            return identity.user
        email = claims.get("email")
        if not email or claims.get("email_verified") is not True:
            raise SuspiciousOperation("no verified email address to map the account by")
        users = list(get_user_model().objects.filter(email__iexact=email))
        if len(users) > 1:
            raise SuspiciousOperation("several accounts have this email address")
        if users:
            user = users[0]
            if Account.objects.filter(user=user, email_confirmed=False).exists():
                raise SuspiciousOperation("the account with this address never confirmed it")
        elif self.get_settings("OIDC_CREATE_USER", True):
            user = self.create_user(claims)
        else:
            return None
        OIDCIdentity.objects.create(user=user, issuer=issuer, subject=subject)
        return user

    def get_username(self, claims: dict[str, Any]) -> str:
        """The address's local part (letters, digits, ``.@+-_``), numbered if taken."""
        base = re.sub(r"[^\w.@+-]", "", str(claims.get("email", "")).split("@")[0])[:140] or "user"
        taken = get_user_model().objects.filter(username__startswith=base).values_list("username", flat=True)
        names = set(taken)
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base}-{n}"
        return name


class AuthenticateView(OIDCAuthenticationRequestView):
    """Sends the browser to the provider; 404 while sign-on is off."""

    def __init__(self, **kwargs: Any) -> None:
        if enabled():
            super().__init__(**kwargs)
        else:
            View.__init__(self, **kwargs)

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not enabled():
            raise Http404
        return super().dispatch(request, *args, **kwargs)


class CallbackView(OIDCAuthenticationCallbackView):
    """Where the provider sends the browser back; 404 while sign-on is off."""

    @property
    def failure_url(self) -> str:
        return settings.LOGIN_URL_FAILURE

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not enabled():
            raise Http404
        try:
            return super().dispatch(request, *args, **kwargs)
        except SuspiciousOperation as error:  # an unknown state: a replayed or forged callback
            log.warning("OpenID Connect callback refused: %s", error)
            return self.login_failure()
