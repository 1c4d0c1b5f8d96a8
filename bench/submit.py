"""Submit benchmark: Murmur's endpoint against a bare baseline view, same gunicorn, same PostgreSQL.

    python -m bench.submit [--seconds S] [--rounds R] [--connections C] [--workers W] [--instances I]

Builds a scratch database of its own (``murmur_bench_submit_<pid>_<random>``, dropped at the end)
with open surveys of 1, 10 and 50 questions (mechanisms mixed as in a real survey), serves the app
and ``bench/bare.py``'s baseline (a bare WSGI insert: no Django, no middleware, no parsing beyond
``json.loads``) with gunicorn (production settings), and drives both with ``wrk`` (``apt-get install -y wrk``) posting
pre-made valid submissions, each with its own one-time token, from a Lua script. For 10 questions
Murmur and the baseline alternate R rounds of S seconds and the ratio of their medians is printed;
then Murmur alone at 1, 10 and 50 questions. ``--instances 2`` runs two gunicorns on two ports
against the one database, one wrk each, at once (the scale-out check). After every run the
stored rows are checked: every 201 is one stored submission, every tally equals the sum of its
reports, the hourly counters equal the submissions; "lost" must be 0. Loopback only; every run
is bounded in time. Each run also prints its CPU per request, of the app servers and of the
PostgreSQL backends of the scratch database (``/proc``; PgBouncer and wrk are not counted).
``--vacuum`` vacuums the scratch database before every run, for a server without autovacuum.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import threading
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from bench.server import gunicorn, pgbouncer, scratch_database, setup_django

DATABASE = "murmur_bench_submit"
CSRF = "b" * 32  # an unmasked CSRF secret: the cookie and the header carry the same value
OPTIONS = ["Strongly disagree", "Disagree", "Neutral", "Agree", "Strongly agree"]
MIX = [
    ("krr", {}),
    ("oue", {}),
    ("cms", {"hash_count": 512, "width": 128, "hash_seed": 0}),
    ("dbitflip", {"d": 4}),
    ("olh", {}),
]

LUA = r"""
-- Each wrk thread posts its own slice of the pre-made bodies, each body once.
local threads = {}
function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end
function init(args)
  path, file, count = args[1], args[2], tonumber(args[3])
  bodies, sent, created = {}, 0, 0
  local i = 0
  for line in io.lines(file) do
    if i % count == id then table.insert(bodies, line) end
    i = i + 1
  end
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Cookie"] = "csrftoken=__CSRF__"
  wrk.headers["X-CSRFToken"] = "__CSRF__"
end
function request()
  sent = sent + 1
  return wrk.format(nil, path, nil, bodies[sent] or bodies[1])
end
function response(status, headers, body)
  if status == 201 then created = created + 1 end
end
function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("created") end
  io.write(string.format("CREATED %d\n", total))
  io.write(string.format("P50 %.3f\nP99 %.3f\n", latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
""".replace("__CSRF__", CSRF)


def build(questions: int) -> str:
    from django.contrib.auth import get_user_model

    from surveys import actions
    from surveys.models import Survey

    owner, _ = get_user_model().objects.get_or_create(username="bench")
    survey = Survey.objects.create(owner=owner, title=f"{questions} questions", allow_repeat_responses=True)
    for i in range(questions):
        mechanism, params = MIX[i % len(MIX)]
        actions.do_add_question(
            survey,
            {
                "text": f"Question {i + 1}",
                "kind": "single",
                "options": OPTIONS,
                "epsilon": 1.0,
                "mechanism": mechanism,
                "mechanism_params": params,
            },
        )
    actions.do_open_survey(survey)
    return survey.slug


CITIES = ["seoul", "busan", "incheon", "daegu", "daejeon", "gwangju", "ulsan", "suwon", "jeju", "sejong"]


def sample_reports(question: Any, mechanism: Any, count: int, rng: np.random.Generator) -> list[bytes]:
    """``count`` packed reports of random true answers to the question, randomized by its mechanism."""
    if question.kind == "numeric":
        values = rng.uniform(question.range_low, question.range_high, size=count)
        return [row.tobytes() for row in mechanism.randomize(values, rng=rng)]
    if question.kind == "text":
        texts = [CITIES[i] for i in rng.integers(0, len(CITIES), size=count)]
        return [mechanism.parse_report(r) for r in mechanism.randomize_reports(texts, rng=rng)]
    return [row.tobytes() for row in mechanism.randomize(rng.integers(0, question.k, size=count), rng=rng)]


def write_bodies(slug: str, count: int, seed: int, path: Path) -> None:
    """``count`` valid submissions to the survey, one JSON body a line, each with its own token."""
    from surveys.models import Survey
    from surveys.responding.submissions import new_token

    survey = Survey.objects.get(slug=slug)
    rng = np.random.default_rng(seed)
    columns = []
    for question in survey.questions.all():
        randomization = question.current_randomization()
        mechanism = randomization.build_mechanism()
        packed = sample_reports(question, mechanism, count, rng)
        columns.append([(question.pk, randomization.version, mechanism.unpack_report(row)) for row in packed])
    with path.open("w") as out:
        for i in range(count):
            reports = [
                {"question": q, "version": v, "report": column[i][2]} for column in columns for q, v in [column[i][:2]]
            ]
            out.write(json.dumps({"token": new_token(survey), "reports": reports}, separators=(",", ":")) + "\n")


def run_wrk(base: str, path: str, bodies: Path, seconds: int, connections: int, script: Path) -> dict[str, float]:
    threads = 2
    command = [
        "wrk", "-t", str(threads), "-c", str(connections), "-d", f"{seconds}s", "--timeout", "10s",
        "-s", str(script), base, "--", path, str(bodies), str(threads),
    ]  # fmt: skip
    output = subprocess.run(command, capture_output=True, text=True, check=True, timeout=seconds + 60).stdout
    created = int(re.search(r"CREATED (\d+)", output).group(1))
    return {
        "created": created,
        "per_second": created / seconds,
        "p50_ms": float(re.search(r"P50 ([\d.]+)", output).group(1)),
        "p99_ms": float(re.search(r"P99 ([\d.]+)", output).group(1)),
        "requests": int(re.search(r"(\d+) requests in", output).group(1)),
    }


def process_cpu(match: Callable[[str], bool]) -> float:
    """CPU seconds (user + system) used so far by the processes whose command line ``match`` accepts."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if match(command):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
        except OSError:  # the process ended meanwhile
            continue
    return total / os.sysconf("SC_CLK_TCK")


def check_exact(slug: str) -> dict[str, int]:
    """Stored rows against the counts: every tally is the sum of its reports, nothing lost."""
    from django.db.models import Count

    from surveys.models import Randomization, Report, Submission, Survey
    from surveys.responding.tallies import read_tallies

    survey = Survey.objects.get(slug=slug)
    randomizations = list(Randomization.objects.filter(question__survey=survey))
    tallies = read_tallies(randomizations)
    reports = dict(
        Report.objects.filter(survey=survey, randomization__in=randomizations)
        .values_list("randomization")
        .annotate(n=Count("id"))
        .order_by()
    )
    submissions = Submission.objects.filter(survey=survey).count()
    mismatched = sum(1 for r in randomizations if tallies[r.pk].n != reports.get(r.pk, 0))
    return {
        "submissions": submissions,
        "counted": survey.response_count(),
        "mismatched_tallies": mismatched,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--instances", type=int, default=1, help="gunicorns on separate ports, one database")
    parser.add_argument("--sizes", default="1,10,50", help="question counts for the Murmur-only runs")
    parser.add_argument(
        "--pgbouncer", action="store_true", help="every app server (and the baseline) through one PgBouncer"
    )
    parser.add_argument(
        "--vacuum",
        action="store_true",
        help="VACUUM the scratch database before every run (for a server without autovacuum)",
    )
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is missing: apt-get install -y wrk")

    with scratch_database(DATABASE) as url:
        run(args, url)


def run(args: argparse.Namespace, url: str) -> None:
    setup_django(url)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    sizes = sorted({10, *(int(s) for s in args.sizes.split(","))})
    slugs = {n: build(n) for n in sizes}
    baseline_slug = build(10)  # its own survey, so the checks below see only Murmur's submissions
    work = Path(tempfile.mkdtemp(prefix="murmur-bench-"))
    script = work / "submit.lua"
    script.write_text(LUA)
    budget = {n: max(3000, 1200 * args.seconds * 10 // n) for n in sizes}  # bodies per run, generous
    seed = iter(range(10**6))
    totals = dict.fromkeys(sizes, 0)

    def bodies_for_baseline() -> Path:
        path = work / f"baseline-{next(seed)}.jsonl"
        write_bodies(baseline_slug, budget[10], seed=next(seed), path=path)
        return path

    def bodies_for(n: int) -> Path:
        path = work / f"bodies-{n}-{next(seed)}.jsonl"
        write_bodies(slugs[n], budget[n], seed=next(seed), path=path)
        return path

    print(
        f"wrk: {args.connections} connections, {args.seconds} s per run; "
        f"gunicorn: {args.workers} sync workers x {args.instances}"
    )
    with ExitStack() as stack:
        app = "bench.bare:application"  # Murmur, with the bare baseline in front of it
        served, extra = url, {}
        if args.pgbouncer:
            served = stack.enter_context(pgbouncer(url))
            extra = {"DATABASE_POOLER": "true"}
            print(f"through PgBouncer in transaction mode: {served.rsplit('@', 1)[1]}")
        bases = [
            stack.enter_context(gunicorn(served, workers=args.workers, app=app, extra_env=extra))
            for _ in range(args.instances)
        ]

        ports = tuple(f"127.0.0.1:{base.rsplit(':', 1)[1]}" for base in bases)
        database = url.rsplit("/", 1)[1]

        def cpu_now() -> tuple[float, float]:
            """CPU so far of this run's gunicorns, and of the PostgreSQL backends of its database."""
            app = process_cpu(lambda command: "gunicorn" in command and any(port in command for port in ports))
            postgres = process_cpu(
                lambda command: command.startswith("postgres:") and f" postgres {database} " in command
            )
            return app, postgres

        def run_everywhere(kind: str, n: int) -> dict[str, float]:
            if args.vacuum:  # as autovacuum would, where the server runs it: every table, both variants'
                with psycopg.connect(url, autocommit=True) as vacuuming:
                    vacuuming.execute("VACUUM")
            path = f"/s/{slugs[n]}/submit/" if kind == "murmur" else f"/bench/baseline/{baseline_slug}/"
            results: list[dict[str, float]] = [{}] * len(bases)
            app_before, postgres_before = cpu_now()

            def one(i: int) -> None:
                bodies = bodies_for(n) if kind == "murmur" else bodies_for_baseline()
                results[i] = run_wrk(bases[i], path, bodies, args.seconds, args.connections, script)

            threads = [threading.Thread(target=one, args=(i,)) for i in range(len(bases))]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            merged = {key: sum(r[key] for r in results) for key in ("created", "per_second", "requests")}
            app_after, postgres_after = cpu_now()
            merged["app_ms"] = (app_after - app_before) * 1e3 / max(merged["requests"], 1)
            merged["postgres_ms"] = (postgres_after - postgres_before) * 1e3 / max(merged["requests"], 1)
            merged["p50_ms"] = max(r["p50_ms"] for r in results)
            merged["p99_ms"] = max(r["p99_ms"] for r in results)
            return merged

        # Warm-up, not measured: every worker builds its mechanisms and fills its caches once.
        warm = args.seconds
        args.seconds = 3
        for n in sizes:
            totals[n] += int(run_everywhere("murmur", n)["created"])
        run_everywhere("baseline", 10)
        args.seconds = warm
        warmups = 1

        rates: dict[str, list[float]] = {"murmur": [], "baseline": []}
        for round_number in range(1, args.rounds + 1):
            for kind in ("baseline", "murmur") if round_number % 2 else ("murmur", "baseline"):
                result = run_everywhere(kind, 10)
                rates[kind].append(result["per_second"])
                if kind == "murmur":
                    totals[10] += int(result["created"])
                print(
                    f"round {round_number} {kind:8s} 10 questions: {result['per_second']:7.0f} submissions/s, "
                    f"p50 {result['p50_ms']:.0f} ms, p99 {result['p99_ms']:.0f} ms, "
                    f"{int(result['created'])} of {int(result['requests'])} requests stored; CPU a request: "
                    f"app servers {result['app_ms']:.1f} ms, PostgreSQL {result['postgres_ms']:.1f} ms"
                )
        ratio = statistics.median(rates["murmur"]) / statistics.median(rates["baseline"])
        print(f"ratio Murmur / baseline (medians of {args.rounds} rounds, 10 questions): {ratio:.2f}x")
        for n in sizes:
            result = run_everywhere("murmur", n)
            totals[n] += int(result["created"])
            print(
                f"murmur {n:3d} questions: {result['per_second']:7.0f} submissions/s, "
                f"{result['per_second'] * n:8.0f} reports/s, "
                f"p50 {result['p50_ms']:.0f} ms, p99 {result['p99_ms']:.0f} ms"
            )
    # wrk stops counting at its deadline with requests still in flight, which may yet commit:
    # each run may store up to one more submission per connection than it counted as 201.
    in_flight = args.connections * args.instances
    for n in sizes:
        runs = warmups + (args.rounds + 1 if n == 10 else 1)
        state = check_exact(slugs[n])
        stored = state["submissions"]
        print(
            f"check {n:3d} questions: {totals[n]} answered 201, {stored} stored (at most {runs * in_flight} more than "
            f"answered: cut off in flight), counters {state['counted']}, tallies unequal to their reports: "
            f"{state['mismatched_tallies']}"
        )
        assert totals[n] <= stored <= totals[n] + runs * in_flight, "lost or doubled submissions"
        assert state["mismatched_tallies"] == 0 and state["counted"] == stored
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
