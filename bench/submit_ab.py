"""In-process A/B of the submit path: a git revision's against the working tree's, beside the bare baseline.

    python -m bench.submit_ab [--before REV] [--blocks B] [--block N] [--pooler]

In one process, against a scratch database of its own (dropped at the end), Murmur's WSGI
application is called directly, as gunicorn calls it (no HTTP, no wrk), with valid ten-question
submissions. The URL configuration (``config/urls.py``, ``surveys/urls.py``), the submit view
(``surveys/views/respond.py``) and what it calls from
``surveys/responding/{writes,submissions,receipts,tallies}.py`` are switched between their
versions at ``REV`` (read with ``git show``) and the working tree's; ``bench/bare.py``'s baseline
is the third variant. The
variants alternate in blocks of N submissions, B blocks each, and the medians per submission
are printed: wall time, this process's CPU and the PostgreSQL backends' CPU (from
``/proc/<pid>/stat``). On a shared machine the CPU figures are steadier than wall time or
throughput. Then the pending tally increments the working tree's submissions left are folded as
the job folds them, and that CPU is printed per submission. ``--pooler`` sets
``DATABASE_POOLER=true`` (no named prepared statements).
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path

from bench.server import ROOT, scratch_database, server_environment, setup_django


def module_at(
    revision: str, name: str, folder: str = "surveys/responding", edit: Callable[[str], str] = str
) -> types.ModuleType:
    """``<folder>/<name>.py`` as it was at ``revision`` (its source passed through ``edit``), loaded
    as a module of its own, ``before_<folder>_<name>``."""
    source = subprocess.run(
        ["git", "show", f"{revision}:{folder}/{name}.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = types.ModuleType(f"before_{folder.replace('/', '_')}_{name}")
    sys.modules[module.__name__] = module  # dataclasses look their module up; include() imports by name
    exec(compile(edit(source), f"{revision}:{folder}/{name}.py", "exec"), module.__dict__)
    return module


def urlconf_at(revision: str) -> str:
    """The name of a module holding the URL configuration at ``revision`` (``config/urls.py``
    including that revision's ``surveys/urls.py``), for ``settings.ROOT_URLCONF``, whose submit
    view is the revision's: ``surveys/views/respond.py`` calling the revision's
    ``surveys/responding/{writes,submissions,receipts,tallies}.py``."""
    view = module_at(revision, "respond", folder="surveys/views")
    responding = {name: module_at(revision, name) for name in ("writes", "submissions", "receipts", "tallies")}
    for module in (view, *responding.values()):
        for attribute, value in list(vars(module).items()):
            home = getattr(value, "__module__", None) or getattr(value, "__name__", "")
            name = home.rpartition(".")[2]
            if home.startswith("surveys.responding.") and name in responding:
                # a function imported from a module that is switched, or the module itself
                setattr(
                    module, attribute, responding[name] if home == value.__name__ else vars(responding[name])[attribute]
                )
    submit = f"__import__('sys').modules[{view.__name__!r}].submit"
    surveys = module_at(revision, "urls", folder="surveys", edit=lambda s: s.replace("respond.submit", submit))
    root = module_at(
        revision,
        "urls",
        folder="config",
        edit=lambda s: s.replace('"surveys.urls"', repr(surveys.__name__)).replace("respond.submit", submit),
    )
    return root.__name__


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="HEAD~1", help="the git revision to compare against")
    parser.add_argument("--blocks", type=int, default=6)
    parser.add_argument("--block", type=int, default=60)
    parser.add_argument("--pooler", action="store_true")
    args = parser.parse_args()
    with scratch_database("murmur_bench_submit_ab") as url:
        env = server_environment(url)
        for key in ("DEBUG", "ALLOWED_HOSTS", "SECURE_SSL_REDIRECT", "SECURE_COOKIES", "RATE_LIMITS", "JOBS_QUEUE"):
            os.environ[key] = env[key]
        os.environ["CONN_MAX_AGE"] = "3600"  # one backend per variant for the whole run
        os.environ["DATABASE_POOLER"] = "true" if args.pooler else "false"
        setup_django(url)
        run(args)


def run(args: argparse.Namespace) -> None:
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from bench import bare
    from bench.submit import CSRF, build, write_bodies

    call_command("migrate", verbosity=0)
    urlconfs = {"before": urlconf_at(args.before), "after": settings.ROOT_URLCONF}
    slug, bare_slug = build(10), build(10)
    work = Path(tempfile.mkdtemp(prefix="murmur-bench-ab-"))
    count = args.block * (args.blocks + 1)
    write_bodies(slug, 2 * count, seed=7, path=work / "murmur.jsonl")
    write_bodies(bare_slug, count, seed=8, path=work / "bare.jsonl")
    bodies: dict[str, Iterator[str]] = {
        "murmur": iter((work / "murmur.jsonl").read_text().splitlines()),
        "bare": iter((work / "bare.jsonl").read_text().splitlines()),
    }

    def call(kind: str) -> None:
        body = next(bodies[kind]).encode()
        path = f"/s/{slug}/submit/" if kind == "murmur" else f"/bench/baseline/{bare_slug}/"
        environ = {
            "REQUEST_METHOD": "POST", "PATH_INFO": path, "QUERY_STRING": "", "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000", "HTTP_HOST": "127.0.0.1:8000", "wsgi.url_scheme": "http",
            "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body),
            "HTTP_COOKIE": f"csrftoken={CSRF}", "HTTP_X_CSRFTOKEN": CSRF, "REMOTE_ADDR": "127.0.0.1",
            "wsgi.errors": sys.stderr, "SERVER_PROTOCOL": "HTTP/1.1",
        }  # fmt: skip
        status: list[str] = []
        answer = b"".join(bare.application(environ, lambda s, headers, *rest: status.append(s)))
        assert status[0].startswith("201"), (status, answer[:300])

    def block(variant: str) -> tuple[float, float, float]:
        if variant != "bare":
            settings.ROOT_URLCONF = urlconfs[variant]  # Django sets it for each request
        wall, cpu, backend = time.perf_counter(), time.process_time(), backends_cpu()
        for _ in range(args.block):
            call("bare" if variant == "bare" else "murmur")
        per = 1e3 / args.block
        return (time.perf_counter() - wall) * per, (time.process_time() - cpu) * per, (backends_cpu() - backend) * per

    call("murmur")
    call("bare")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pids = [cursor.fetchone()[0], bare._connection().execute("SELECT pg_backend_pid()").fetchone()[0]]

    def backends_cpu() -> float:
        total = 0
        for pid in pids:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime + stime
        return total / os.sysconf("SC_CLK_TCK")

    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in ("before", "after", "bare")}
    for i in range(args.blocks):
        for name in ("before", "after", "bare") if i % 2 == 0 else ("bare", "after", "before"):
            results[name].append(block(name))
    load = os.getloadavg()
    cpu = {}
    for name, rows in results.items():
        wall, python, postgres = (statistics.median(column) for column in zip(*rows, strict=True))
        cpu[name] = python + postgres
        label = {"before": f"before ({args.before})", "after": "after (worktree)", "bare": "bare baseline"}[name]
        print(
            f"{label:22s} median of {args.blocks} blocks of {args.block}: {wall:6.2f} ms wall, {python:5.2f} ms Python "
            f"CPU, {postgres:5.2f} ms PostgreSQL CPU, {cpu[name]:5.2f} ms CPU per submission"
        )
    print(f"CPU ratio bare / Murmur: before {cpu['bare'] / cpu['before']:.2f}, after {cpu['bare'] / cpu['after']:.2f}")
    print(f"DATABASE_POOLER={os.environ['DATABASE_POOLER']}; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    fold(pids, backends_cpu)


def fold(pids: list[int], backends_cpu: Callable[[], float]) -> None:
    """Fold the pending tally increments the worktree's submissions left, as the job does, and
    print its CPU per submission folded: work moved off the request path, not saved."""
    from surveys.models import TallyDelta
    from surveys.responding import tallies

    pending = TallyDelta.objects.count()
    if not pending:
        return
    cpu, backend = time.process_time(), backends_cpu()
    while tallies.fold_deltas():
        pass
    python, postgres = ((time.process_time() - cpu) * 1e3 / pending, (backends_cpu() - backend) * 1e3 / pending)
    print(
        f"fold (off the request path): {pending} pending submissions, {python:5.2f} ms Python CPU, "
        f"{postgres:5.2f} ms PostgreSQL CPU per submission folded"
    )


if __name__ == "__main__":
    main()
