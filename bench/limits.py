"""Limits in production mode with several workers: submissions, logins and password-reset timing.

    python -m bench.limits [--workers 3] [--database postgres|sqlite] [--resets 200]

Serves Murmur like ``make serve`` (gunicorn, ``DEBUG=false``, no ``CACHE_URL``: the database
cache) on a loopback port, against a scratch PostgreSQL database on 127.0.0.1:5432 (or a scratch
SQLite file), with ``BEHIND_PROXY=10.0.0.0/8``, and drives it with bounded urllib loops from
loopback source addresses (127.0.0.1, 127.0.0.2, ...), each one client:

1. one client posts twice the per-minute submit limit to one survey, 6 at a time: how many are
   accepted; then another client does the same while rotating ``X-Forwarded-For`` (it is not a
   trusted proxy, so the header is ignored);
2. logins: the owner logs in once from 127.0.0.1 (its usual client); a stranger posts wrong
   passwords for the account from 127.0.0.3 (when is it first refused?); the owner logs in again
   from 127.0.0.1, and from a new client 127.0.0.4; then 127.0.0.1 posts wrong passwords until the
   account-and-client pause (the first refusal; the right password then too);
3. password reset for a known and an unknown address, interleaved: the median answer times.

Only loopback addresses are used.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import statistics
import tempfile
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.server import gunicorn, scratch_database, setup_django
from bench.submit import CSRF, build, write_bodies

PASSWORD = "bench Password 42!"
SUBMIT_LIMIT = 30
LOGIN_LIMIT = 20
DELAY_AFTER = 5


class Client:
    """One client: HTTP from its own loopback source address, with the CSRF cookie set."""

    def __init__(self, base: str, source: str) -> None:
        parts = urllib.parse.urlsplit(base)
        self.host, self.port, self.source = parts.hostname or "127.0.0.1", parts.port or 80, source

    def post(self, path: str, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> int:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30, source_address=(self.source, 0))
        try:
            connection.request(
                "POST",
                path,
                body,
                {
                    "Content-Type": content_type,
                    "Cookie": f"csrftoken={CSRF}",
                    "X-CSRFToken": CSRF,
                    **(headers or {}),
                },
            )
            response = connection.getresponse()
            response.read()
            return response.status
        finally:
            connection.close()

    def form(self, path: str, fields: dict[str, str]) -> int:
        return self.post(path, urllib.parse.urlencode(fields).encode(), "application/x-www-form-urlencoded")


def submissions(base: str, slug: str, bodies: list[str], source: str, rotate: bool) -> list[int]:
    client = Client(base, source)
    path = f"/s/{slug}/submit/"

    def one(index: int) -> int:
        headers = {"X-Forwarded-For": f"198.51.100.{index % 250}"} if rotate else {}
        return client.post(path, bodies[index].encode(), "application/json", headers)

    with ThreadPoolExecutor(6) as pool:
        return list(pool.map(one, range(len(bodies))))


def first(statuses: list[int], status: int) -> int | None:
    """The 1-based attempt of the first ``status``, or None."""
    return next((i + 1 for i, s in enumerate(statuses) if s == status), None)


def logins(base: str) -> dict[str, object]:
    def login(source: str, password: str) -> int:
        return Client(base, source).form("/accounts/login/", {"username": "owner", "password": password})

    results: dict[str, object] = {"owner_first_login": login("127.0.0.1", PASSWORD)}
    stranger = [login("127.0.0.3", "wrong password") for _ in range(LOGIN_LIMIT)]
    results["stranger_statuses"] = stranger
    results["stranger_first_refusal"] = first(stranger, 429)
    results["owner_usual_client_after_strangers"] = login("127.0.0.1", PASSWORD)
    results["owner_new_client_after_strangers"] = login("127.0.0.4", PASSWORD)
    usual = [login("127.0.0.1", "wrong password") for _ in range(LOGIN_LIMIT)]
    usual.append(login("127.0.0.1", PASSWORD))
    results["usual_client_statuses"] = usual
    results["usual_client_first_refusal"] = first(usual, 429)
    return results


def resets(base: str, count: int) -> dict[str, float]:
    client = Client(base, "127.0.0.5")
    times: dict[str, list[float]] = {"known": [], "unknown": []}
    for i in range(2 * count):
        which = "known" if i % 2 == 0 else "unknown"
        email = "owner@example.org" if which == "known" else f"nobody{i}@example.org"
        start = time.perf_counter()
        status = client.form("/accounts/password_reset/", {"email": email})
        times[which].append(time.perf_counter() - start)
        assert status == 302, status
    known, unknown = (statistics.median(times[w]) * 1000 for w in ("known", "unknown"))
    return {"known_median_ms": known, "unknown_median_ms": unknown, "difference_ms": known - unknown}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--database", choices=["postgres", "sqlite"], default="postgres")
    parser.add_argument("--resets", type=int, default=200, help="password resets per address kind")
    args = parser.parse_args()
    for name in ("CACHE_URL", "REDIS_URL", "RATE_LIMIT_SUBMIT", "LOGIN_FAILURE_LIMIT", "LOGIN_DELAY_AFTER"):
        os.environ.pop(name, None)  # the defaults are what is measured
    with contextlib.ExitStack() as stack:
        if args.database == "postgres":
            url = stack.enter_context(scratch_database("murmur_bench_limits"))
        else:
            url = f"sqlite:///{Path(stack.enter_context(tempfile.TemporaryDirectory())) / 'limits.sqlite3'}"
        run(args, url)


def run(args: argparse.Namespace, url: str) -> None:
    setup_django(url)
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    get_user_model().objects.create_user("owner", "owner@example.org", PASSWORD)
    slug = build(1)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "bodies"
        write_bodies(slug, 4 * SUBMIT_LIMIT, seed=1, path=path)
        bodies = path.read_text().splitlines()
    env = {
        "RATE_LIMITS": "true",
        "BEHIND_PROXY": "10.0.0.0/8",
        "EMAIL_URL": "locmem://",
        "RATE_LIMIT_MAIL": "100000/h",  # part 3 measures timing, not the mail limit
    }
    report: dict[str, object] = {"workers": args.workers, "database": args.database}
    with gunicorn(url, workers=args.workers, extra_env=env) as base:
        started = time.monotonic()
        plain = submissions(base, slug, bodies[: 2 * SUBMIT_LIMIT], "127.0.0.1", rotate=False)
        rotating = submissions(base, slug, bodies[2 * SUBMIT_LIMIT :], "127.0.0.2", rotate=True)
        report["submit_seconds"] = round(time.monotonic() - started, 1)
        report["submit_accepted"] = f"{plain.count(201)} of {len(plain)} (429: {plain.count(429)})"
        report["submit_accepted_rotating_xff"] = f"{rotating.count(201)} of {len(rotating)}"
        report.update(logins(base))
        report.update({key: round(value, 2) for key, value in resets(base, args.resets).items()})
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
