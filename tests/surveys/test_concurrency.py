"""Concurrency: no report lost or doubled, and no report stranded under a retired randomization.

These run real threads against a real database; in-memory SQLite shares one connection between
threads, so they run on PostgreSQL (CI) and file-based SQLite.
"""

from __future__ import annotations

import itertools
import json
import random
import threading
import time

import numpy as np
import pytest
from django.db import connection, transaction
from django.test import Client
from django.urls import reverse

from surveys import actions
from surveys.models import HourlyResponses, Report, Submission
from surveys.responding import tallies, writes
from surveys.responding.submissions import new_token
from surveys.results.estimates import SurveyState
from surveys.results.exports import estimate_rows
from tests.base import make_question, make_survey, make_user, stored_tally, tally_of_reports

THREADS = 32
SUBMISSIONS = 2048
#: Every ABORT_EVERY-th submission fails in the middle of its writes.
ABORT_EVERY = 9
#: Every REPLAY_EVERY-th submission is sent twice (a client retrying): the second must be refused.
REPLAY_EVERY = 7
EDIT_TRIALS = 20


@pytest.fixture(autouse=True)
def real_database():
    if connection.vendor == "sqlite" and connection.settings_dict["NAME"].startswith("file:memorydb"):
        pytest.skip("in-memory SQLite shares one connection between threads; PostgreSQL runs this in CI")


@pytest.fixture(autouse=True)
def no_rate_limits(settings):
    """Thousands of submissions come from one test client here."""
    settings.RATE_LIMITS_ENABLED = False


def open_survey(owner, questions):
    survey = make_survey(owner, allow_repeat_responses=True)
    for text, options, mechanism, params in questions:
        make_question(survey, text=text, options=options, mechanism=mechanism, mechanism_params=params)
    actions.do_open_survey(survey)
    return survey


def bodies(survey, count, seed):
    """``count`` valid submission bodies, each with its own one-time token."""
    rng = np.random.default_rng(seed)
    items = []
    for question in survey.questions.all():
        randomization = question.current_randomization()
        mechanism = randomization.build_mechanism()
        packed = mechanism.randomize(rng.integers(0, question.k, size=count), rng=rng)
        items.append((question.pk, randomization.version, mechanism, packed))
    return [
        json.dumps(
            {
                "token": new_token(survey),
                "reports": [
                    {"question": pk, "version": version, "report": mechanism.unpack_report(packed[i].tobytes())}
                    for pk, version, mechanism, packed in items
                ],
            }
        )
        for i in range(count)
    ]


@pytest.mark.django_db(transaction=True)
def test_concurrent_submissions_with_aborts_and_retries_keep_every_tally_exact(monkeypatch):
    survey = open_survey(
        make_user("tess"),
        [
            ("k-RR", ["A", "B", "C"], "krr", {}),
            ("OUE", ["A", "B", "C", "D"], "oue", {}),
            ("CMS", ["A", "B", "C", "D", "E"], "cms", {"hash_count": 8, "width": 16, "hash_seed": 0}),
        ],
    )
    url = reverse("submit", args=[survey.slug])
    payloads = bodies(survey, SUBMISSIONS, seed=1)
    calls = itertools.count(1)
    real_ids = writes.report_ids

    def abort_some(count):
        # Every ABORT_EVERY-th submission gets clashing report ids: its write fails midway (after
        # the submission row, before the tallies) and must leave nothing behind.
        ids = real_ids(count)
        return ids[:1] * count if next(calls) % ABORT_EVERY == 0 else ids

    monkeypatch.setattr(writes, "report_ids", abort_some)
    outcomes: dict[str, int] = {"accepted": 0, "aborted": 0, "replay_refused": 0, "other": 0}
    lock = threading.Lock()
    queue = list(enumerate(payloads))

    def respondent():
        # Not raising: the test client's exception signal is global, so one thread's deliberate
        # abort would otherwise be re-raised in every thread with a request in flight.
        client = Client(raise_request_exception=False)
        while True:
            with lock:
                if not queue:
                    break
                index, body = queue.pop()
            sends = 2 if index % REPLAY_EVERY == 0 else 1
            for attempt in range(sends):
                status = client.post(url, body, content_type="application/json").status_code
                key = {201: "accepted", 500: "aborted"}.get(status, "other")
                if attempt == 1 and status == 409:
                    key = "replay_refused"
                with lock:
                    outcomes[key] += 1
        connection.close()

    threads = [threading.Thread(target=respondent) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    accepted = outcomes["accepted"]
    assert outcomes["other"] == 0, outcomes
    assert outcomes["aborted"] > 100 and accepted > 1500, outcomes
    assert Submission.objects.count() == accepted
    assert Report.objects.count() == 3 * accepted
    for question in survey.questions.all():
        randomization = question.current_randomization()
        tally, recomputed = stored_tally(randomization), tally_of_reports(randomization)
        assert tally.n == recomputed.n == accepted
        assert np.array_equal(tally.counts, recomputed.counts)
    assert survey.response_count() == accepted
    assert HourlyResponses.objects.values("shard").distinct().count() > 1  # writes really were spread


def post_all(url, chunk, start, jitter, accepted, after=None):
    """One respondent thread: wait for the start (and for ``after``, an event, when given), then post
    each body after a little jitter."""
    client = Client(raise_request_exception=False)
    start.wait()
    if after is not None:
        assert after.wait(timeout=10)
    for body in chunk:
        time.sleep(jitter.random() * 0.004)
        if client.post(url, body, content_type="application/json").status_code == 201:
            accepted.append(1)
    connection.close()


@pytest.mark.django_db(transaction=True)
def test_an_edit_racing_submissions_never_strands_an_accepted_report(monkeypatch):
    # Widen the window in which an edit holds its exclusive lock (between locking the randomization
    # and counting its reports), so that submissions arrive while it is held, and say when it is held.
    # Both orders are forced, each in half the trials, rather than left to the machine's speed (a quiet
    # machine once refused every edit): in even trials the submissions start once the edit holds its
    # lock, so they wait on it and the edit, finding no report, is accepted; in odd trials the edit
    # starts once a submission has been accepted, and is refused.
    locked = threading.Event()

    class SlowReports:
        class objects:  # noqa: N801 - stands in for Report.objects
            @staticmethod
            def filter(*args, **kwargs):
                locked.set()
                time.sleep(0.005)
                return Report.objects.filter(*args, **kwargs)

    monkeypatch.setattr(actions, "Report", SlowReports)
    owner = make_user("tess")
    outcomes = {"edit accepted": 0, "edit refused": 0}
    for trial in range(EDIT_TRIALS):
        survey = open_survey(owner, [("How are you?", ["Good", "Fine", "Bad"], "krr", {})])
        question = survey.questions.get()
        url = reverse("submit", args=[survey.slug])
        payloads = bodies(survey, 24, seed=trial)
        accepted: list[int] = []
        start = threading.Barrier(4)
        jitter = random.Random(trial)
        edit_first = trial % 2 == 0
        locked.clear()
        after = locked if edit_first else None
        threads = [
            threading.Thread(target=post_all, args=(url, payloads[i::3], start, jitter, accepted, after))
            for i in range(3)
        ]
        for thread in threads:
            thread.start()
        start.wait()
        deadline = time.monotonic() + 10
        while not edit_first and not accepted and time.monotonic() < deadline:
            time.sleep(0.001)
        question.refresh_from_db()
        cleaned = {
            "text": question.text,
            "kind": question.kind,
            "options": question.options,
            "epsilon": 2.0,
            "mechanism": question.mechanism,
            "mechanism_params": question.mechanism_params,
        }
        try:
            actions.do_update_question(question, cleaned)
            outcomes["edit accepted"] += 1
        except actions.LifecycleError:
            outcomes["edit refused"] += 1
        for thread in threads:
            thread.join()

        versions_with_reports = set(Report.objects.filter(question=question).values_list("randomization", flat=True))
        assert len(versions_with_reports) <= 1, f"trial {trial}: reports under two versions"
        state = SurveyState.read(survey)
        assert state.reports == len(accepted) == Report.objects.filter(question=question).count()
        shown = sum(r.n for r in state.all_results())
        exported = {row["version"]: row["n"] for row in estimate_rows(survey)}
        assert shown == len(accepted)
        if len(accepted) >= 1:
            assert sum(exported.values()) == len(accepted)
    # Both orders happened as forced, so both paths were exercised.
    assert outcomes == {"edit accepted": EDIT_TRIALS // 2, "edit refused": EDIT_TRIALS // 2}, outcomes


def exact_in_one_snapshot(survey):
    """Whether every tally equals the tally of the stored reports, both read in one snapshot."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        for question in survey.questions.all():
            randomization = question.current_randomization()
            tally, recomputed = stored_tally(randomization), tally_of_reports(randomization)
            if tally.n != recomputed.n or not np.array_equal(tally.counts, recomputed.counts):
                return False
    return True


@pytest.mark.django_db(transaction=True)
def test_folds_racing_submissions_leave_every_tally_exact_at_every_moment():
    survey = open_survey(
        make_user("fay"),
        [
            ("k-RR", ["A", "B", "C"], "krr", {}),
            ("CMS", ["A", "B", "C", "D", "E"], "cms", {"hash_count": 8, "width": 16, "hash_seed": 0}),
        ],
    )
    url = reverse("submit", args=[survey.slug])
    payloads = bodies(survey, 480, seed=3)
    done = threading.Event()
    folded: list[int] = []
    checks: list[bool] = []

    def respondent(chunk):
        client = Client(raise_request_exception=False)
        for body in chunk:
            assert client.post(url, body, content_type="application/json").status_code == 201
        connection.close()

    def folder():
        while not done.is_set():
            folded.append(tallies.fold_deltas(survey, limit=7))  # small batches: many folds mid-stream
            checks.append(exact_in_one_snapshot(survey))
        connection.close()

    respondents = [threading.Thread(target=respondent, args=(payloads[i::8],)) for i in range(8)]
    folders = [threading.Thread(target=folder) for _ in range(2)]  # two folds at once skip each other's rows
    for thread in [*folders, *respondents]:
        thread.start()
    for thread in respondents:
        thread.join()
    done.set()
    for thread in folders:
        thread.join()
    assert sum(folded) > 0 and len(checks) > 3, (sum(folded), len(checks))
    assert all(checks), checks.count(False)
    while tallies.fold_deltas(survey):
        pass
    assert exact_in_one_snapshot(survey)
    assert stored_tally(survey.questions.first().current_randomization()).n == 480
