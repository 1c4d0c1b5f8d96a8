"""Submission load test: many concurrent respondents against gunicorn + PostgreSQL.

    python -m bench.load [--submissions N] [--concurrency C] [--workers W]

Builds a scratch database of its own (``murmur_bench_load_<pid>_<random>``, dropped at the end) with
an open 5-question survey (one question per mechanism setting), serves it with gunicorn (production
settings), and lets C concurrent respondents each load the answer page (for its one-time token and
CSRF cookie) and post one randomized submission, until N have been sent. Reports submissions per
second, p50/p99 latency of the POST, and checks that every accepted submission is stored whole:
submissions, reports and tallies all add up ("lost reports" must be 0). Loopback only; bounded in
count and time.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import re
import statistics
import threading
import time
import urllib.request
from html import unescape

import numpy as np

from bench.server import gunicorn, percentile, scratch_database, setup_django

DATABASE = "murmur_bench_load"
OPTIONS = ["A", "B", "C", "D", "E"]
QUESTIONS = [
    ("k-RR", 1.0, "krr", {}),
    ("CMS", 2.0, "cms", {"hash_count": 512, "width": 128, "hash_seed": 0}),
    ("4BitFlip", 1.0, "dbitflip", {"d": 4}),
    ("5BitFlip", 1.0, "dbitflip", {"d": 5}),
    ("k-RR strict", 0.5, "krr", {}),
]
TIME_LIMIT = 600.0


def build() -> tuple[str, dict[int, object]]:
    from django.contrib.auth import get_user_model

    from surveys import actions
    from surveys.models import Survey

    user = get_user_model().objects.create_user("load", password="load-password-1")
    survey = Survey.objects.create(owner=user, title="Load test", allow_repeat_responses=True)
    for text, epsilon, mechanism, params in QUESTIONS:
        actions.do_add_question(
            survey,
            {
                "text": text,
                "kind": "single",
                "options": OPTIONS,
                "epsilon": epsilon,
                "mechanism": mechanism,
                "mechanism_params": params,
            },
        )
    actions.do_open_survey(survey)
    mechanisms = {q.pk: q.current_randomization().build_mechanism() for q in survey.questions.all()}
    return survey.slug, mechanisms


def respondent(
    base: str, slug: str, mechanisms: dict, seed: int, quota: list[int], lock: threading.Lock, results: list
) -> None:
    rng = np.random.default_rng(seed)
    deadline = time.monotonic() + TIME_LIMIT
    while time.monotonic() < deadline:
        with lock:
            if quota[0] <= 0:
                return
            quota[0] -= 1
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        loading = time.perf_counter()
        page = opener.open(f"{base}/s/{slug}/").read().decode()  # noqa: S310 - loopback only
        page_seconds = time.perf_counter() - loading
        token = unescape(re.search(r'data-token="([^"]+)"', page).group(1))
        csrf = re.search(r'data-csrf-token="([^"]+)"', page).group(1)
        reports = []
        for question_id, mechanism in mechanisms.items():
            packed = mechanism.randomize(rng.integers(0, 5, size=1), rng=rng)[0].tobytes()
            reports.append({"question": question_id, "version": 1, "report": mechanism.unpack_report(packed)})
        request = urllib.request.Request(
            f"{base}/s/{slug}/submit/",
            data=json.dumps({"token": token, "reports": reports}).encode(),
            headers={"Content-Type": "application/json", "X-CSRFToken": csrf, "Referer": f"{base}/s/{slug}/"},
        )
        started = time.perf_counter()
        try:
            with opener.open(request) as response:  # noqa: S310 - loopback only
                status = response.status
        except urllib.error.HTTPError as error:
            status = error.code
        results.append((status, time.perf_counter() - started, page_seconds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()

    with scratch_database(DATABASE) as url:
        run(args, url)


def run(args: argparse.Namespace, url: str) -> None:
    setup_django(url)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    slug, mechanisms = build()
    results: list[tuple[int, float, float]] = []
    quota, lock = [args.submissions], threading.Lock()
    with gunicorn(url, workers=args.workers) as base:
        started = time.perf_counter()
        threads = [
            threading.Thread(target=respondent, args=(base, slug, mechanisms, seed, quota, lock, results))
            for seed in range(args.concurrency)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started

    from surveys.models import Randomization, Report, Submission
    from surveys.responding.tallies import read_tallies

    accepted = sum(1 for status, _, _ in results if status == 201)
    latencies = [1000 * seconds for status, seconds, _ in results if status == 201]
    page_latencies = [1000 * page for _, _, page in results]
    stored_submissions = Submission.objects.count()
    stored_reports = Report.objects.count()
    in_force = Randomization.objects.filter(retired=False)
    tallied = sorted(t.n for t in read_tallies(in_force).values())
    lost = accepted * len(mechanisms) - stored_reports
    print(
        f"{len(results):,} submissions by {args.concurrency} concurrent respondents, gunicorn {args.workers} workers, "
        f"{elapsed:.1f} s (each respondent also loads the answer page)"
    )
    print(f"accepted {accepted:,}; other statuses: {sorted({s for s, _, _ in results if s != 201}) or 'none'}")
    print(f"throughput: {accepted / elapsed:,.0f} submissions/s (with page loads)")
    for label, values in (("POST", latencies), ("answer page", page_latencies)):
        print(f"{label} latency: p50 {statistics.median(values):.0f} ms, p99 {percentile(values, 0.99):.0f} ms")
    print(
        f"stored: {stored_submissions:,} submissions, {stored_reports:,} reports; tallies n = {tallied}; "
        f"lost reports: {lost}"
    )
    assert stored_submissions == accepted and lost == 0 and tallied == [accepted] * len(mechanisms)


if __name__ == "__main__":
    main()
