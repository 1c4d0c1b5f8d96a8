"""A tiny OpenID Connect provider for the tests: a WSGI app on a local port in a thread.

It serves discovery, JWKS, authorize (signs nobody in: it issues a code for :attr:`Provider.claims`
at once), token and userinfo, signing ID tokens with an RSA key made when it starts. ``tamper``
makes the next tokens wrong in one way: ``"signature"`` (signed with another key), ``"audience"``
or ``"issuer"``.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs, urlencode
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

CLIENT_ID = "murmur-test"
CLIENT_SECRET = "murmur-test-secret"


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


class Provider:
    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = "test-key"
        self.claims: dict[str, Any] = {"sub": "subject-1", "email": "sso@example.org", "email_verified": True}
        self.tamper = ""
        self.codes: dict[str, dict[str, Any]] = {}
        self.tokens: dict[str, dict[str, Any]] = {}
        self.server: WSGIServer = make_server("127.0.0.1", 0, self.app, handler_class=_Quiet)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Provider:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def settings(self) -> dict[str, Any]:
        """The Murmur settings (OIDC_*) that point at this provider."""
        return {
            "OIDC_ENABLED": True,
            "OIDC_RP_CLIENT_ID": CLIENT_ID,
            "OIDC_RP_CLIENT_SECRET": CLIENT_SECRET,
            "OIDC_OP_ISSUER": self.url,
            "OIDC_OP_AUTHORIZATION_ENDPOINT": f"{self.url}/authorize",
            "OIDC_OP_TOKEN_ENDPOINT": f"{self.url}/token",
            "OIDC_OP_USER_ENDPOINT": f"{self.url}/userinfo",
            "OIDC_OP_JWKS_ENDPOINT": f"{self.url}/jwks",
        }

    # -- the endpoints ------------------------------------------------------------------------

    def app(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ["PATH_INFO"]
        query = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
        if environ["REQUEST_METHOD"] == "POST":
            size = int(environ.get("CONTENT_LENGTH") or 0)
            query.update({k: v[0] for k, v in parse_qs(environ["wsgi.input"].read(size).decode()).items()})
        if path == "/.well-known/openid-configuration":
            return self._json(start_response, self._discovery())
        if path == "/jwks":
            jwk = RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
            return self._json(start_response, {"keys": [{**jwk, "kid": self.kid, "alg": "RS256", "use": "sig"}]})
        if path == "/authorize":
            code = secrets.token_urlsafe(16)
            self.codes[code] = {"nonce": query.get("nonce"), "redirect_uri": query["redirect_uri"]}
            location = f"{query['redirect_uri']}?{urlencode({'code': code, 'state': query['state']})}"
            start_response("302 Found", [("Location", location)])
            return [b""]
        if path == "/token":
            grant = self.codes.pop(query.get("code", ""), None)
            if (
                grant is None
                or query.get("client_secret") != CLIENT_SECRET
                or query.get("redirect_uri") != grant["redirect_uri"]
            ):
                return self._json(start_response, {"error": "invalid_grant"}, "400 Bad Request")
            access = secrets.token_urlsafe(16)
            self.tokens[access] = dict(self.claims)
            return self._json(
                start_response,
                {"access_token": access, "token_type": "Bearer", "id_token": self._id_token(grant["nonce"])},
            )
        if path == "/userinfo":
            access = environ.get("HTTP_AUTHORIZATION", "").removeprefix("Bearer ")
            if access not in self.tokens:
                return self._json(start_response, {"error": "invalid_token"}, "401 Unauthorized")
            return self._json(start_response, self.tokens[access])
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found"]

    def _discovery(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "userinfo_endpoint": f"{self.url}/userinfo",
            "jwks_uri": f"{self.url}/jwks",
            "id_token_signing_alg_values_supported": ["RS256"],
        }

    def _id_token(self, nonce: str | None) -> str:
        now = int(time.time())
        claims = {
            "iss": "https://elsewhere.example" if self.tamper == "issuer" else self.url,
            "aud": "someone-else" if self.tamper == "audience" else CLIENT_ID,
            "sub": self.claims["sub"],
            "iat": now,
            "exp": now + 300,
            "nonce": nonce,
        }
        key = self.other_key if self.tamper == "signature" else self.key
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": self.kid})

    @staticmethod
    def _json(start_response: Callable[..., Any], body: Any, status: str = "200 OK") -> Iterable[bytes]:
        start_response(status, [("Content-Type", "application/json")])
        return [json.dumps(body).encode()]
