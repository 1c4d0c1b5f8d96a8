"""Helpers for the server benchmarks: a scratch PostgreSQL database and a gunicorn to measure.

Everything runs on this machine: the database on 127.0.0.1:5432, gunicorn on a loopback port.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
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


def unique_name(prefix: str) -> str:
    """A name no other run on this machine uses: the prefix, this process's id and 24 random bits."""
    return f"{prefix}_{os.getpid()}_{secrets.token_hex(3)}"


def recreate_database(name: str) -> str:
    """Drop and create a scratch database; return its URL."""
    with psycopg.connect(ADMIN_URL, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    return bench_database_url(name)


def drop_database(name: str) -> None:
    with psycopg.connect(ADMIN_URL, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def scratch_database(prefix: str, keep: bool = False) -> Iterator[str]:
    """A new database of this run's own (:func:`unique_name`), dropped at the end unless ``keep``.

    Two benchmarks at once on one machine never touch each other's data.
    """
    name = unique_name(prefix)
    url = recreate_database(name)
    print(f"scratch database: {name}", flush=True)
    try:
        yield url
    finally:
        if not keep:
            drop_database(name)


@contextlib.contextmanager
def scratch_cache(url: str) -> Iterator[dict[str, str]]:
    """The environment of a served app whose cache keys are this run's own; its keys deleted at the end.

    On Redis the run's keys share a unique prefix (``CACHE_KEY_PREFIX``), so nothing else in the
    database is read or deleted (no ``FLUSHDB``). Other caches live in the scratch database.
    """
    prefix = unique_name("bench")
    try:
        yield {"CACHE_URL": url, "CACHE_KEY_PREFIX": prefix}
    finally:
        if url.startswith(("redis://", "rediss://", "unix://")):
            import redis

            client = redis.Redis.from_url(url)
            keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
            for start in range(0, len(keys), 1000):
                client.delete(*keys[start : start + 1000])


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
        "JOBS_QUEUE": "db",  # jobs, if any, wait in the scratch database: no shared Redis queue
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
    app: str = "config.wsgi",
    extra_env: dict[str, str] | None = None,
) -> Iterator[str]:
    """Run collectstatic, gunicorn and the job worker against the database; yield the base URL; stop them.

    ``app`` is the WSGI application (``bench.bare:application`` adds the bare baseline beside Murmur).
    """
    env = {**server_environment(database_url), **(extra_env or {})}
    python = sys.executable
    subprocess.run([python, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)
    port = free_port()
    command = [
        str(Path(python).with_name("gunicorn")),
        "--config",
        "config/gunicorn.conf.py",  # as `make serve`: the app preloaded and warmed, one BLAS thread
        app,
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
    # The job worker beside gunicorn, as `make serve` runs it (jobs wait in the scratch database).
    jobs = subprocess.Popen([python, "manage.py", "run_jobs"], cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180  # a preloading master on a loaded machine takes a while
        while True:
            try:
                urllib.request.urlopen(f"{base}/", timeout=5)  # noqa: S310 - loopback only
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("gunicorn did not start") from None
                time.sleep(0.2)
        yield base
    finally:
        for running in (process, jobs):
            running.terminate()
        for running in (process, jobs):
            try:
                running.wait(timeout=60)
            except subprocess.TimeoutExpired:
                running.kill()
                running.wait(timeout=30)


PGBOUNCER_INI = """[databases]
* = host=127.0.0.1 port=5432 user=postgres

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = any
pool_mode = transaction
max_client_conn = 1000
default_pool_size = {pool}
ignore_startup_parameters = extra_float_digits,options
logfile = {dir}/pgbouncer.log
pidfile = {dir}/pgbouncer.pid
"""


@contextlib.contextmanager
def pgbouncer(database_url: str, pool: int = 20) -> Iterator[str]:
    """A PgBouncer of this run's own in transaction mode, on a free port with its config in a temporary
    directory (run as the ``postgres`` user when started by root); yields ``database_url`` through it."""
    binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
    if not Path(binary).exists():
        raise SystemExit("pgbouncer is missing: apt-get install -y pgbouncer")
    directory = Path(tempfile.mkdtemp(prefix="murmur-bench-pgbouncer-"))
    port = free_port()
    (directory / "pgbouncer.ini").write_text(PGBOUNCER_INI.format(port=port, pool=pool, dir=directory))
    command = [binary, str(directory / "pgbouncer.ini")]
    if os.geteuid() == 0:  # PgBouncer refuses to run as root
        shutil.chown(directory, "postgres")
        directory.chmod(0o755)
        command[1:1] = ["-u", "postgres"]
    process = subprocess.Popen(command)
    try:
        for _ in range(100):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("pgbouncer did not start")
        yield database_url.replace("@127.0.0.1:5432/", f"@127.0.0.1:{port}/")
    finally:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(directory, ignore_errors=True)
