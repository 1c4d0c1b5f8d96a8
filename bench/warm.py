"""Workers that start warm and share the cores: what ``config/gunicorn.conf.py`` buys.

1. *A fresh worker's first response*: gunicorn (1 worker, the project's config) is started with
   and without ``preload_app``; its worker is killed, and the time from the kill to the answer of
   one request to ``--path`` (sent at once; it waits in the listen backlog) is the time a fresh
   worker makes its first client wait. Median of ``--repeat`` kills per mode.
2. *BLAS threads on shared cores*: ``--processes`` processes each invert a 256 x 256 matrix
   ``--inverses`` times at once, with one BLAS thread each and with the library's default;
   median time per inverse over the processes.

Everything runs on this machine: SQLite in a temporary directory, gunicorn on a loopback port,
a local-memory cache; nothing is left behind. Every wait is bounded.

    .venv/bin/python -m bench.warm [--repeat 5] [--processes 3] [--inverses 50] [--path /]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench.server import SECRET_KEY, free_port

ROOT = Path(__file__).resolve().parent.parent
BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
#: Longest any single wait may take, in seconds.
LIMIT = 120.0

INVERT = """
import sys, time
import numpy as np
rng = np.random.default_rng(0)
a = rng.standard_normal((256, 256)) + 256 * np.eye(256)
np.linalg.inv(a)
print("ready", flush=True)
sys.stdin.readline()
times = []
for _ in range({inverses}):
    start = time.perf_counter()
    np.linalg.inv(a)
    times.append(time.perf_counter() - start)
print(sorted(times)[len(times) // 2])
"""


def environment(database: Path, preload: bool) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in BLAS_VARIABLES}
    return {
        **env,
        "DATABASE_URL": f"sqlite:///{database}",
        "DEBUG": "false",
        "SECRET_KEY": SECRET_KEY,
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "false",
        "SECURE_COOKIES": "false",
        "CACHE_URL": "locmem://",
        "RATE_LIMITS": "false",
        "LOG_LEVEL": "WARNING",
        "WEB_CONCURRENCY": "1",
        "WEB_PRELOAD": "true" if preload else "false",
    }


def get(url: str) -> int:
    with urllib.request.urlopen(url, timeout=LIMIT) as response:  # noqa: S310 - loopback only
        response.read()
        return int(response.status)


def wait_until_up(base: str, master: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline and master.poll() is None:
        try:
            if get(f"{base}/healthz") == 200:
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("gunicorn did not start")


def worker_of(master: int) -> int:
    """The master's one live worker (waits while it is being replaced)."""
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
        if len(children) == 1:
            return int(children[0])
        time.sleep(0.05)
    raise RuntimeError("gunicorn has no single worker")


def first_responses(database: Path, preload: bool, repeat: int, path: str) -> tuple[list[float], float]:
    """Seconds from killing the worker to its replacement's first answer, ``repeat`` times; and
    one request to a warm worker for comparison."""
    port = free_port()
    command = [str(Path(sys.executable).with_name("gunicorn")), "--config", "config/gunicorn.conf.py"]
    command += ["--bind", f"127.0.0.1:{port}", "--log-level", "critical"]
    master = subprocess.Popen(command, cwd=ROOT, env=environment(database, preload))
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(base, master)
        get(base + path)
        start = time.perf_counter()
        get(base + path)
        warm = time.perf_counter() - start
        times = []
        for _ in range(repeat):
            worker = worker_of(master.pid)
            start = time.perf_counter()
            os.kill(worker, signal.SIGKILL)
            assert get(base + path) == 200
            times.append(time.perf_counter() - start)
            time.sleep(0.5)
        return times, warm
    finally:
        master.terminate()
        master.wait(timeout=LIMIT)


def inverse_times(processes: int, inverses: int, one_thread: bool) -> float:
    """Median over ``processes`` concurrent processes of each one's median time per inverse."""
    env = {key: value for key, value in os.environ.items() if key not in BLAS_VARIABLES}
    if one_thread:
        env.update(dict.fromkeys(BLAS_VARIABLES, "1"))
    code = INVERT.format(inverses=inverses)
    children = [
        subprocess.Popen(
            [sys.executable, "-c", code], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        for _ in range(processes)
    ]
    try:
        for child in children:
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        return statistics.median(float(child.communicate(timeout=LIMIT)[0]) for child in children)
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--inverses", type=int, default=50)
    parser.add_argument("--path", default="/")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="murmur-bench-warm-") as scratch:
        database = Path(scratch) / "db.sqlite3"
        env = environment(database, preload=True)
        for step in (["migrate", "--noinput", "-v0"], ["collectstatic", "--noinput", "-v0"]):
            subprocess.run([sys.executable, "manage.py", *step], cwd=ROOT, env=env, check=True, timeout=LIMIT)
        print(f"A fresh worker's first response to GET {args.path} (1 worker, {args.repeat} kills each):")
        results = {}
        for preload in (False, True):
            times, warm = first_responses(database, preload, args.repeat, args.path)
            results[preload] = statistics.median(times)
            label = "preload_app on " if preload else "preload_app off"
            print(
                f"  {label}: median {1e3 * results[preload]:.0f} ms, max {1e3 * max(times):.0f} ms"
                f" (a warm worker: {1e3 * warm:.0f} ms)"
            )
        print(f"  off / on: {results[False] / results[True]:.1f}x")

    print(f"256 x 256 inverse, {args.processes} processes at once on {os.cpu_count()} cores, {args.inverses} each:")
    default = inverse_times(args.processes, args.inverses, one_thread=False)
    single = inverse_times(args.processes, args.inverses, one_thread=True)
    print(f"  default BLAS threads: median {1e3 * default:.2f} ms per inverse")
    print(f"  one BLAS thread:      median {1e3 * single:.2f} ms per inverse")
    print(f"  default / one: {default / single:.1f}x")


if __name__ == "__main__":
    main()
