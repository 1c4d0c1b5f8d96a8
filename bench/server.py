"""Helpers for the server benchmarks: a scratch PostgreSQL database and a gunicorn to measure.

Everything runs on this machine: the database on 127.0.0.1:5432, gunicorn on a loopback port.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres"
#: Shared by this process and gunicorn, so that sessions made here are valid there.
SECRET_KEY = "benchmark-only-" + "k" * 50


def percentile(values: list[float], fraction: float) -> float:
    """The value below which ``fraction`` of ``values`` lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def bench_database_url(name: str) -> str:
    return f"postgres://postgres@127.0.0.1:5432/{name}"


def recreate_database(name: str) -> str:
    """Drop and create a scratch database; return its URL."""
    with psycopg.connect(ADMIN_URL, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    return bench_database_url(name)


def setup_django(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ["SECRET_KEY"] = SECRET_KEY
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def server_environment(database_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "DEBUG": "false",
        "SECRET_KEY": SECRET_KEY,
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "false",
        "SECURE_COOKIES": "false",  # plain HTTP on loopback
        "CONN_MAX_AGE": "60",
        "LOG_LEVEL": "WARNING",
        "RATE_LIMITS": "false",  # wrk sends everything from one loopback address
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def gunicorn(
    database_url: str,
    workers: int,
    threads: int = 1,
    urls: str = "config.urls",
    extra_env: dict[str, str] | None = None,
) -> Iterator[str]:
    """Run collectstatic and gunicorn against the database; yield the base URL; stop it.

    ``urls`` picks the URLconf (``bench.urls`` adds the bare baseline view beside the app's).
    """
    env = {**server_environment(database_url), "MURMUR_ROOT_URLCONF": urls, **(extra_env or {})}
    python = sys.executable
    subprocess.run([python, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)
    port = free_port()
    command = [
        str(Path(python).with_name("gunicorn")),
        "config.wsgi",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--threads",
        str(threads),
        "--log-level",
        "warning",
    ]
    process = subprocess.Popen(command, cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/", timeout=1)  # noqa: S310 - loopback only
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("gunicorn did not start")
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)
