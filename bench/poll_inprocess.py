"""A results page's 304 and live poll timed in-process (Django's test client), with their queries counted.

    python -m bench.poll_inprocess [--survey mixed55] [--responses N] [--repeat R] [--cache URL] [--profile K]

Builds a scratch database like ``bench.dashboard`` (the 10- or 55-question survey, N responses),
draws the whole-survey results page once, then times R conditional GETs answered 304 and R polls
answered 204 in this process: no HTTP, no gunicorn, so a shared machine's noise weighs less than
over loopback. Prints the median and p95 time and the queries per request (the production
interval ``RESULTS_REFRESH_SECONDS=5``; jobs wait in the scratch database), and the cache calls per
request. ``--profile K`` then runs each request R times more under cProfile and prints its K costliest
functions (cumulative time).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import time

from bench.dashboard import SURVEYS, question_fields
from bench.loader import build
from bench.server import percentile, scratch_cache, scratch_database, setup_django


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--cache", default="redis://127.0.0.1:6379/0", help="CACHE_URL (this run's own keys)")
    parser.add_argument("--survey", choices=sorted(SURVEYS), default="mixed55")
    parser.add_argument("--profile", type=int, default=0, help="print each request's K costliest functions")
    args = parser.parse_args()
    with scratch_database("murmur_bench_poll") as url, scratch_cache(args.cache) as cache_env:
        os.environ.update(cache_env | {"RESULTS_REFRESH_SECONDS": "5", "JOBS_QUEUE": "db", "RATE_LIMITS": "false"})
        setup_django(url)
        run(args)


def run(args: argparse.Namespace) -> None:
    from django.core.cache import cache
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment

    setup_test_environment()
    call_command("migrate", verbosity=0)
    survey_id, _questions, cookie = build(args.responses, [question_fields(*q) for q in SURVEYS[args.survey]])
    client = Client()
    client.cookies["sessionid"] = cookie
    url = f"/surveys/{survey_id}/results/"
    client.get(url)
    page = client.get(url)
    since = page.content.decode().split("since=")[1].split('"')[0]
    requests = {
        "conditional GET answered 304": ({"HTTP_IF_NONE_MATCH": page["ETag"]}, {}, 304),
        "live poll answered 204": ({"HTTP_HX_REQUEST": "true"}, {"since": since}, 204),
    }
    print(f"{args.survey}, {args.responses:,} responses, {args.repeat} requests each, in-process")
    calls = count_cache_calls(cache)
    for name, (headers, query, status) in requests.items():
        timings, queries, cached = [], [], []
        for _ in range(args.repeat):
            before = calls["n"]
            with CaptureQueriesContext(connection) as captured:
                started = time.perf_counter()
                response = client.get(url, query, **headers)
                timings.append(1000 * (time.perf_counter() - started))
            assert response.status_code == status, response.status_code
            queries.append(len(captured.captured_queries))
            cached.append(calls["n"] - before)
        print(
            f"{name}: median {statistics.median(timings):.2f} ms, p95 {percentile(timings, 0.95):.2f} ms, "
            f"{statistics.median(queries):.0f} queries, {statistics.median(cached):.0f} cache calls "
            f"(load average {os.getloadavg()[0]:.1f})"
        )
        if args.profile:
            print("  queries:", *(q["sql"][:120] for q in captured.captured_queries), sep="\n    ")
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(args.repeat):
                client.get(url, query, **headers)
            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.profile)


def count_cache_calls(cache: object) -> dict[str, int]:
    """Count every get, get_many, set, set_many, add, delete and incr on ``cache`` (wrapped in place)."""
    calls = {"n": 0}
    for method in ("get", "get_many", "set", "set_many", "add", "delete", "incr"):
        original = getattr(cache, method)

        def counted(*args: object, _original: object = original, **kwargs: object) -> object:
            calls["n"] += 1
            return _original(*args, **kwargs)  # type: ignore[operator]

        setattr(cache, method, counted)
    return calls


if __name__ == "__main__":
    main()
