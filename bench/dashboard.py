"""Dashboard response time with 1,000,000 responses to a 10-question survey in PostgreSQL.

    python -m bench.dashboard [--responses N] [--repeat R] [--writer RATE] [--cache URL] [--survey mixed55]

Builds a scratch database of its own (``murmur_bench_dashboard_<pid>_<random>``, dropped at the
end), stores N simulated respondents' reports (randomized by ldp, loaded with COPY) with their
tallies, serves the app with gunicorn (production settings, 2 workers), and times over HTTP on
loopback the whole-survey results page, every question's page, the public page, a conditional GET
(304) and a live poll; cold (first draw) and warm, with the production cache (Redis by default,
under keys of this run's own, deleted at the end). ``--writer RATE`` posts valid submissions at
RATE a second (from four clients) through the app's submit endpoint during the measurements (the survey is live), and
prints the rate reached and the load average beside each figure. After loading, the ``count_pairs``
job counts every closed hour's pairs (timed); the organizer's and the public cross-tab pages are
then timed like the others. ``--survey mixed55`` loads a 55-question mixed survey instead (choice
questions of seven mechanisms, numbers, short answers with 8,256 cells each).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import threading
import time
import urllib.error
import urllib.request
from contextlib import ExitStack
from pathlib import Path

from bench.loader import build
from bench.server import gunicorn, percentile, scratch_cache, scratch_database, setup_django
from bench.submit import CSRF, write_bodies

DATABASE = "murmur_bench_dashboard"
OPTIONS_5 = ["Strongly disagree", "Disagree", "Neutral", "Agree", "Strongly agree"]
QUESTIONS = [
    ("k-RR, 5 options", OPTIONS_5, 1.0, "krr", {}),
    ("k-RR, yes/no", ["Yes", "No"], 0.5, "krr", {}),
    ("k-RR, 10 options", [f"Option {i}" for i in range(10)], 2.0, "krr", {}),
    ("CMS 512 x 128, 5 options", OPTIONS_5, 2.0, "cms", {"hash_count": 512, "width": 128, "hash_seed": 0}),
    (
        "CMS 512 x 128, 10 options",
        [f"Choice {i}" for i in range(10)],
        1.0,
        "cms",
        {"hash_count": 512, "width": 128, "hash_seed": 0},
    ),
    ("4BitFlip", OPTIONS_5, 1.0, "dbitflip", {"d": 4}),
    ("5BitFlip", OPTIONS_5, 5.0, "dbitflip", {"d": 5}),
    ("dBitFlip d = 3, 8 options", [f"Item {i}" for i in range(8)], 2.0, "dbitflip", {"d": 3}),
    ("k-RR, 64 options", [f"Label {i}" for i in range(64)], 4.0, "krr", {}),
    ("dBitFlip, yes/no", ["Yes", "No"], 1.0, "dbitflip", {"d": 2}),
]


MIXED_BLOCK = [
    ("k-RR, 5 options", OPTIONS_5, 1.0, "krr", {}),
    ("k-RR, yes/no", ["Yes", "No"], 0.5, "krr", {}),
    ("OUE, 5 options", OPTIONS_5, 1.0, "oue", {}),
    ("OLH, 10 options", [f"Option {i}" for i in range(10)], 2.0, "olh", {}),
    ("Subset selection, 8 options", [f"Item {i}" for i in range(8)], 1.0, "subset", {}),
    ("dBitFlip d = 2, 8 options", [f"Item {i}" for i in range(8)], 2.0, "dbitflip", {"d": 2}),
    ("CMS 512 x 128, 5 options", OPTIONS_5, 2.0, "cms", {"hash_count": 512, "width": 128, "hash_seed": 0}),
    ("k-RR, 64 options", [f"Label {i}" for i in range(64)], 4.0, "krr", {}),
    ("Hours (Piecewise on [0, 40])", [], 1.0, "piecewise", {"lo": 0.0, "hi": 40.0}),
    ("Score (Duchi et al. on [0, 100])", [], 1.0, "duchi", {"lo": 0.0, "hi": 100.0}),
    ("City (short answer, CMS 64 x 128)", [], 4.0, "text-cms", {}),
]
#: 55 questions of every family: five copies of the block above.
SURVEYS = {"ten": QUESTIONS, "mixed55": [(f"{t} #{i + 1}", *rest) for i in range(5) for t, *rest in MIXED_BLOCK]}


def question_fields(text: str, options: list[str], epsilon: float, mechanism: str, params: dict) -> dict:
    """The builder's cleaned fields of one benchmark question (its kind follows from the mechanism)."""
    if mechanism in ("piecewise", "duchi"):
        from ldp.numeric import make_numeric_mechanism

        built = make_numeric_mechanism(mechanism, lo=params["lo"], hi=params["hi"], epsilon=epsilon)
        return {
            "text": text, "kind": "numeric", "options": [], "epsilon": epsilon, "mechanism": mechanism,
            "mechanism_params": {**params, **built.params()}, "range_low": params["lo"], "range_high": params["hi"],
            "unit": "",
        }  # fmt: skip
    if mechanism.startswith("text-"):
        from ldp.textreports import make_text_mechanism

        built = make_text_mechanism(mechanism, epsilon=epsilon)
        return {
            "text": text, "kind": "text", "options": [], "epsilon": epsilon, "mechanism": mechanism,
            "mechanism_params": built.params(),
        }  # fmt: skip
    kind = "yes_no" if options == ["Yes", "No"] else "single"
    return {
        "text": text, "kind": kind, "options": options, "epsilon": epsilon, "mechanism": mechanism,
        "mechanism_params": params,
    }  # fmt: skip


def time_get(
    url: str,
    cookie: str,
    repeat: int,
    headers: dict[str, str] | None = None,
    warm_up: bool = True,
    statuses: list[int] | None = None,
) -> list[float]:
    """Milliseconds per request; each timed request's status appended to ``statuses`` if given."""
    timings = []
    for i in range(repeat + (1 if warm_up else 0)):
        request = urllib.request.Request(url, headers={"Cookie": f"sessionid={cookie}", **(headers or {})})
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(request) as response:  # noqa: S310 - loopback only
                response.read()
                status = response.status
                assert status in (200, 204), status
        except urllib.error.HTTPError as error:  # urllib raises on 304
            status = error.code
            assert status == 304, status
        if i or not warm_up:  # the first request warms the worker up
            timings.append(1000 * (time.perf_counter() - started))
            if statuses is not None:
                statuses.append(status)
    return timings


def answered(timings: list[float], statuses: list[int], expected: int) -> str:
    """How many requests got ``expected`` and those requests' own median and p95: under the writer,
    a refreshed snapshot changes the page's ETag and signature, and the requests after it draw the
    page (200) instead."""
    own = [t for t, status in zip(timings, statuses, strict=True) if status == expected]
    if len(own) == len(timings) or not own:
        return f"{len(own)} of {len(timings)} answered {expected}"
    return (
        f"{len(own)} of {len(timings)} answered {expected} (those: median {statistics.median(own):.0f} ms, "
        f"p95 {percentile(own, 0.95):.0f} ms); the others 200"
    )


def etag_of(url: str, cookie: str) -> str:
    request = urllib.request.Request(url, headers={"Cookie": f"sessionid={cookie}"})
    with urllib.request.urlopen(request) as response:  # noqa: S310 - loopback only
        return response.headers["ETag"]


def signature_of(url: str, cookie: str) -> str:
    """The ``since`` a results page polls with (its snapshot's signature)."""
    request = urllib.request.Request(url, headers={"Cookie": f"sessionid={cookie}"})
    with urllib.request.urlopen(request) as response:  # noqa: S310 - loopback only
        found = re.search(r"since=([0-9a-f]+)", response.read().decode())
    assert found is not None, "the page does not poll: is the survey open?"
    return found.group(1)


def summary(timings: list[float]) -> str:
    load = os.getloadavg()[0]
    return (
        f"median {statistics.median(timings):.0f} ms, p95 {percentile(timings, 0.95):.0f} ms, "
        f"max {max(timings):.0f} ms (load average {load:.1f})"
    )


#: Clients posting submissions at once under ``--writer`` (each at RATE / WRITERS a second).
WRITERS = 4


def write_continuously(base: str, slug: str, bodies: list[str], rate: float, stop: threading.Event, sent: list[int]):
    """Post ``bodies`` at ``rate`` a second (each once) until ``stop``; count the 201s in ``sent``."""
    interval, due = 1.0 / rate, time.perf_counter()
    for body in bodies:
        if stop.is_set():
            return
        request = urllib.request.Request(
            f"{base}/s/{slug}/submit/",
            data=body.encode(),
            method="POST",
            headers={"Content-Type": "application/json", "Cookie": f"csrftoken={CSRF}", "X-CSRFToken": CSRF},
        )
        try:
            with urllib.request.urlopen(request) as response:  # noqa: S310 - loopback only
                if response.status == 201:
                    sent.append(1)  # list.append is atomic: the clients share ``sent``
        except OSError:  # a refusal, or a connection reset: not stored, not counted
            pass
        due += interval
        time.sleep(max(0.0, due - time.perf_counter()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--cache", default="redis://127.0.0.1:6379/0", help="CACHE_URL of the served app")
    parser.add_argument("--writer", type=float, default=0.0, help="submissions a second posted while measuring")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers (make serve's default: 3)")
    parser.add_argument("--threads", type=int, default=1, help="gunicorn threads per worker (gthread if > 1)")
    parser.add_argument(
        "--survey", choices=sorted(SURVEYS), default="ten", help="the 10-question or 55-question survey"
    )
    args = parser.parse_args()

    with scratch_database(DATABASE) as url:
        run(args, url)


def run(args: argparse.Namespace, url: str) -> None:
    setup_django(url)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    fields = [question_fields(*question) for question in SURVEYS[args.survey]]
    survey_id, question_ids, cookie = build(args.responses, fields)
    from surveys.models import Survey
    from surveys.results import pair_counts

    survey = Survey.objects.get(pk=survey_id)
    survey.public_results = True
    survey.save(update_fields=["public_results"])
    started = time.perf_counter()
    counted = pair_counts.count_survey(survey)
    print(
        f"count_pairs job: {counted['folded']} closed hours of {args.responses:,} responses folded in "
        f"{time.perf_counter() - started:.0f} s (load average {os.getloadavg()[0]:.1f})"
    )
    crossable = pair_counts.eligible([q.current_randomization() for q in survey.questions.all()])
    crossed = sorted((r.question.position, r.question_id) for r in crossable)[:2]
    crossed = [question_id for _position, question_id in crossed]
    print(f"cache: {args.cache} (this run's own keys); gunicorn {args.workers} workers, {args.threads} thread(s) each")
    with ExitStack() as stack:
        cache_env = stack.enter_context(scratch_cache(args.cache))
        base = stack.enter_context(gunicorn(url, workers=args.workers, threads=args.threads, extra_env=cache_env))
        results = f"{base}/surveys/{survey_id}/results/"
        if args.writer:
            with tempfile.TemporaryDirectory() as scratch:
                path = Path(scratch) / "bodies"
                write_bodies(survey.slug, int(args.writer * 900), seed=7, path=path)  # 15 minutes' worth
                bodies = path.read_text().splitlines()
            stop, sent, started = threading.Event(), [], time.perf_counter()
            # Several clients, each at its share of the rate: one client waiting for each answer
            # in turn cannot offer 50 a second once a submission takes 20 ms.
            clients = [
                threading.Thread(
                    target=write_continuously,
                    args=(base, survey.slug, bodies[i::WRITERS], args.writer / WRITERS, stop, sent),
                    daemon=True,
                )
                for i in range(WRITERS)
            ]
            for client in clients:
                client.start()
            stopped: list[tuple[float, int]] = []  # when the clients were stopped, and the 201s by then

            def report() -> None:
                (ended, stored), *_ = stopped
                print(f"writer: {stored / (ended - started):.0f} submissions/s stored")

            stack.callback(report)
            for client in clients:  # (callbacks run last first: stop, then these, before gunicorn stops)
                stack.callback(client.join, 30)
            stack.callback(lambda: (stopped.append((time.perf_counter(), len(sent))), stop.set()))
        cold = time_get(results, cookie, 1, warm_up=False)
        print(f"whole survey, cold (first draw of every estimate and chart): {cold[0]:.0f} ms")
        whole = time_get(results, cookie, args.repeat)
        print(f"whole survey ({len(question_ids)} questions, charts and tables), warm: {summary(whole)}")
        per_question = []
        for question_id in question_ids:
            per_question += time_get(f"{results}{question_id}/", cookie, args.repeat)
        print(
            f"one question page (all {len(question_ids)} questions, {args.repeat} each), warm: {summary(per_question)}"
        )
        public = time_get(f"{base}/r/{survey.slug}/", "", args.repeat)
        print(f"public results page, warm: {summary(public)}")
        etag = etag_of(results, cookie)
        statuses: list[int] = []
        conditional = time_get(results, cookie, args.repeat, {"If-None-Match": etag}, statuses=statuses)
        print(f"whole survey, conditional GET answered 304: {summary(conditional)}")
        print(f"  {answered(conditional, statuses, 304)}")
        signature = signature_of(results, cookie)
        statuses = []
        poll = time_get(f"{results}?since={signature}", cookie, args.repeat, {"HX-Request": "true"}, statuses=statuses)
        print(f"live poll with the page's signature (204 until its snapshot is re-read): {summary(poll)}")
        print(f"  {answered(poll, statuses, 204)}")
        query = f"?first={crossed[0]}&second={crossed[1]}"
        own = time_get(f"{results}crosstab/{query}", cookie, args.repeat)
        print(f"cross-tab page (organizer), warm: {summary(own)}")
        public_crosstab = time_get(f"{base}/r/{survey.slug}/crosstab/{query}", "", args.repeat)
        print(f"cross-tab page (public), warm: {summary(public_crosstab)}")


if __name__ == "__main__":
    main()
