"""The storage design: constant-cost submissions, unlinkable ids, results computed once."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from config.env import envcache
from surveys import actions
from surveys.models import Report, Submission, TallyCell
from surveys.responding.submissions import new_token
from surveys.results import charts
from tests.base import make_question, make_reports, make_survey, stored_tally, tally_of_reports

MECHANISMS = [
    ("krr", {}),
    ("oue", {}),
    ("cms", {"hash_count": 8, "width": 16, "hash_seed": 0}),
    ("dbitflip", {"d": 2}),
    ("subset", {}),
]


def survey_with(owner, questions):
    survey = make_survey(owner, allow_repeat_responses=True)
    for i in range(questions):
        mechanism, params = MECHANISMS[i % len(MECHANISMS)]
        make_question(survey, text=f"Q{i}", options=["A", "B", "C", "D"], mechanism=mechanism, mechanism_params=params)
    actions.do_open_survey(survey)
    return survey


def submission_body(survey, seed=0):
    reports = []
    for question in survey.questions.all():
        randomization = question.current_randomization()
        mechanism = randomization.build_mechanism()
        packed = mechanism.randomize([seed % question.k], rng=seed)[0].tobytes()
        reports.append(
            {"question": question.pk, "version": randomization.version, "report": mechanism.unpack_report(packed)}
        )
    return json.dumps({"token": new_token(survey), "reports": reports})


def post(client, survey, body):
    return client.post(reverse("submit", args=[survey.slug]), body, content_type="application/json")


@pytest.mark.django_db(transaction=True)  # the production path: no test transaction around the request
def test_a_submission_costs_the_same_queries_for_1_and_30_questions(client, organizer):
    counts = {}
    for questions in (1, 30):
        survey = survey_with(organizer, questions)
        post(client, survey, submission_body(survey, seed=1))  # warm the per-process mechanism cache
        body = submission_body(survey, seed=2)
        with CaptureQueriesContext(connection) as queries:
            assert post(client, survey, body).status_code == 201
        counts[questions] = [q["sql"] for q in queries]
    assert len(counts[1]) == len(counts[30]), "\n".join(counts[1])
    statements = [sql for sql in counts[30] if not sql.upper().startswith(("SAVEPOINT", "RELEASE", "BEGIN", "COMMIT"))]
    # PostgreSQL: one statement that share-locks and checks the randomizations and the survey and
    # writes the submission, its reports, the tally cells and the hourly count (the survey and its
    # randomizations in force are cached hints, re-checked by that statement). Elsewhere: the
    # survey re-read, the randomizations checked, and the five writes (the survey's version last).
    assert len(statements) == (1 if connection.vendor == "postgresql" else 7), "\n".join(statements)


def test_tallies_are_sums_of_shards_and_equal_the_reports(organizer, settings):
    settings.TALLY_SHARDS = 4
    survey = survey_with(organizer, 2)
    for question in survey.questions.all():
        for seed in range(12):
            make_reports(question, [seed % 4, (seed + 1) % 4], seed=seed)
        randomization = question.current_randomization()
        assert TallyCell.objects.filter(randomization=randomization).values("shard").distinct().count() > 1
        tally, recomputed = stored_tally(randomization), tally_of_reports(randomization)
        assert tally.n == recomputed.n == 24
        assert tally.counts.tolist() == recomputed.counts.tolist()


def test_ids_carry_no_arrival_order(client, organizer):
    survey = survey_with(organizer, 2)
    arrival = []
    for seed in range(20):
        before = set(Submission.objects.values_list("pk", flat=True))
        assert post(client, survey, submission_body(survey, seed)).status_code == 201
        [new] = set(Submission.objects.values_list("pk", flat=True)) - before
        arrival.append(new)
    assert arrival != sorted(arrival) and arrival != sorted(arrival, reverse=True)
    report_ids = [
        r
        for s in arrival
        for r in Submission.objects.get(pk=s).reports.order_by("question__position").values_list("pk", flat=True)
    ]
    assert report_ids != sorted(report_ids)
    client.force_login(organizer)
    exported = client.get(reverse("export_reports", args=[survey.pk, "json"]))
    order = list(dict.fromkeys(r["submission"] for r in json.loads(b"".join(exported.streaming_content))["reports"]))
    assert sorted(order) == sorted(arrival)
    assert order != arrival  # the export follows the random ids, not arrival


def without_csrf(response):
    """The page with its per-render masked CSRF tokens blanked out."""
    return re.sub(r'(csrfmiddlewaretoken" value="|CSRFToken": ")[^"]*', r"\1", response.content.decode())


@pytest.fixture
def answered(organizer):
    survey = survey_with(organizer, 3)
    for question in survey.questions.all():
        make_reports(question, [i % 4 for i in range(400)], seed=question.position)
    return survey


@pytest.mark.parametrize("page", ["survey_results", "question_results", "public_results"])
def test_a_repeated_results_request_draws_no_chart_again_and_answers_304(organizer_client, answered, monkeypatch, page):
    answered.public_results = True
    answered.save()
    drawn = []
    real = charts.estimate_bars

    def counting(*args):
        drawn.append(args[0])
        return real(*args)

    monkeypatch.setattr(charts, "estimate_bars", counting)
    question = answered.questions.first()
    args = {
        "survey_results": [answered.pk],
        "question_results": [answered.pk, question.pk],
        "public_results": [answered.slug],
    }[page]
    url = reverse(page, args=args)
    first = organizer_client.get(url)
    assert first.status_code == 200 and drawn
    drawn.clear()
    again = organizer_client.get(url)
    assert again.status_code == 200 and drawn == []
    assert without_csrf(again) == without_csrf(first)
    etag = again["ETag"]  # the first response may have set the CSRF cookie the ETag includes
    assert organizer_client.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304
    # A new report changes the tallies, so the page, its ETag and the charts are new.
    make_reports(question, [0], seed=99)
    fresh = organizer_client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert fresh.status_code == 200 and fresh["ETag"] != etag
    # Only the changed question's chart is drawn again (by the job that refreshes the survey's
    # results, which also draws the whole page's: the other two questions' for the first time here).
    assert len(drawn) == (3 if page == "question_results" else 1)


def test_the_etag_follows_the_estimate_kind_and_language(organizer_client, answered):
    url = reverse("survey_results", args=[answered.pk])
    consistent = organizer_client.get(url)["ETag"]
    assert organizer_client.get(url, {"estimate": "unbiased"})["ETag"] != consistent
    assert organizer_client.get(url, HTTP_ACCEPT_LANGUAGE="ko")["ETag"] != consistent


def test_results_are_shared_through_redis_when_configured(organizer_client, answered, settings, monkeypatch):
    redis = pytest.importorskip("redis")
    try:
        redis.Redis.from_url("redis://127.0.0.1:6379/15", socket_connect_timeout=1).ping()
    except redis.exceptions.ConnectionError:
        pytest.skip("no Redis on 127.0.0.1:6379")
    from django.core.cache import caches

    settings.CACHES = {"default": envcache("CACHE_URL", "redis://127.0.0.1:6379/15")}
    caches["default"].clear()
    drawn = []
    real = charts.estimate_bars
    monkeypatch.setattr(charts, "estimate_bars", lambda *args: drawn.append(1) or real(*args))
    url = reverse("survey_results", args=[answered.pk])
    organizer_client.get(url)
    assert len(drawn) == 3
    caches["default"].close()  # a fresh connection, as another app server would have
    organizer_client.get(url)
    assert len(drawn) == 3
    caches["default"].clear()


@pytest.mark.parametrize(
    ("url", "backend"),
    [
        ("locmem://", "django.core.cache.backends.locmem.LocMemCache"),
        ("redis://127.0.0.1:6379/0", "django.core.cache.backends.redis.RedisCache"),
    ],
)
def test_the_cache_is_chosen_by_url(url, backend, monkeypatch):
    monkeypatch.setenv("CACHE_URL", url)
    assert envcache("CACHE_URL", "locmem://")["BACKEND"] == backend


def test_an_unknown_cache_url_is_refused(monkeypatch):
    monkeypatch.setenv("CACHE_URL", "memcached://x")
    with pytest.raises(ImproperlyConfigured, match="CACHE_URL"):
        envcache("CACHE_URL", "locmem://")


def test_the_answer_page_says_what_the_server_keeps(client, organizer):
    survey = survey_with(organizer, 1)
    html = client.get(reverse("respond", args=[survey.slug])).content.decode()
    statement = html[html.index("data-server-keeps") :]
    assert "random identifier, the hour" in statement and "no IP address" in statement
    fields = {f.name for f in Submission._meta.concrete_fields} | {f.name for f in Report._meta.concrete_fields}
    # Exactly what the statement names, plus the links between the rows.
    assert fields == {"id", "survey", "received_hour", "nonce", "submission", "question", "randomization", "packed"}


@pytest.mark.django_db(transaction=True)  # outside a test transaction: PostgreSQL's one-statement path
class TestCachedSurveyIsOnlyAHint:
    """The submit endpoint caches the survey per process; what decides a submission is read afresh."""

    def test_a_repeat_is_refused_once_repeats_are_turned_off(self, client, organizer):
        survey = survey_with(organizer, 1)
        assert post(client, survey, submission_body(survey, seed=1)).status_code == 201  # caches the survey
        survey.allow_repeat_responses = False
        survey.save(update_fields=["allow_repeat_responses"])
        response = post(client, survey, submission_body(survey, seed=2))
        assert response.status_code == 409
        assert "already answered" in response.json()["error"]
        assert Submission.objects.count() == 1

    def test_a_new_response_limit_is_enforced_at_once(self, client, organizer):
        survey = survey_with(organizer, 1)
        assert post(client, survey, submission_body(survey, seed=1)).status_code == 201
        survey.response_limit = 2
        survey.save(update_fields=["response_limit"])
        assert post(client, survey, submission_body(survey, seed=2)).status_code == 201
        assert post(client, survey, submission_body(survey, seed=3)).status_code == 403
        assert Submission.objects.count() == survey.response_count() == 2

    def test_a_closed_survey_takes_nothing_more(self, client, organizer):
        survey = survey_with(organizer, 1)
        assert post(client, survey, submission_body(survey, seed=1)).status_code == 201
        actions.do_close_survey(survey)
        assert post(client, survey, submission_body(survey, seed=2)).status_code == 403
        assert Submission.objects.count() == 1


@pytest.mark.django_db(transaction=True)  # CLUSTER cannot run inside a transaction block
def test_scramble_storage_leaves_no_arrival_order_in_the_heap(client, organizer):
    from django.core.management import call_command

    survey = survey_with(organizer, 2)
    for seed in range(30):
        assert post(client, survey, submission_body(survey, seed)).status_code == 201
    call_command("scramble_storage", stdout=io.StringIO())
    if connection.vendor != "postgresql":
        return  # SQLite keeps integer-keyed rows in key order already
    with connection.cursor() as cursor:
        for table in ("surveys_submission", "surveys_report"):
            cursor.execute(f"SELECT id FROM {table} ORDER BY ctid")
            physical = [row[0] for row in cursor.fetchall()]
            assert physical == sorted(physical)  # the heap now follows the random ids


def test_receipts_compute_each_mechanisms_guess_probability_once(client, organizer, monkeypatch):
    """OLH's and CMS's guess probability costs milliseconds: a receipt must not recompute it per submission."""
    from ldp.mechanisms.local_hashing import OptimalLocalHashing

    survey = make_survey(organizer, allow_repeat_responses=True)
    make_question(survey, text="Q", options=["A", "B", "C", "D"], mechanism="olh", mechanism_params={})
    actions.do_open_survey(survey)
    calls = []
    original = OptimalLocalHashing.guess_probability
    monkeypatch.setattr(OptimalLocalHashing, "guess_probability", lambda self: calls.append(1) or original(self))
    for seed in range(3):
        response = post(client, survey, submission_body(survey, seed=seed))
        assert response.status_code == 201
        assert "guesses your answer" in response.json()["receipt"][0]["chance"]
    assert len(calls) == 1
