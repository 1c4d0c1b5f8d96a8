"""Rate limits (submit, sign-up, public results, mail forms) and login throttling: 429 with
Retry-After, a styled translated page or a JSON error, counters keyed by a hash and kept only for
their window."""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import time

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from django.urls import reverse

from config.env import envrates
from surveys import actions
from surveys.models import Submission
from surveys.responding.ratelimits import client_address, hit
from surveys.responding.submissions import new_token
from tests.base import PASSWORD, make_question, make_survey, make_user

KOREAN = {"HTTP_ACCEPT_LANGUAGE": "ko"}


def client_at(address: str) -> Client:
    return Client(REMOTE_ADDR=address)


@pytest.fixture
def survey(organizer):
    survey = make_survey(organizer, allow_repeat_responses=True, public_results=True)
    make_question(survey)
    actions.do_open_survey(survey)
    return survey


def submit(client, survey, body=None):
    if body is None:
        randomization = survey.questions.get().current_randomization()
        mechanism = randomization.build_mechanism()
        report = mechanism.unpack_report(mechanism.randomize(np.array([0]), rng=0)[0].tobytes())
        item = {"question": randomization.question_id, "version": randomization.version, "report": report}
        body = json.dumps({"token": new_token(survey), "reports": [item]})
    return client.post(reverse("submit", args=[survey.slug]), body, content_type="application/json")


def assert_retry_after(response, window):
    assert response.status_code == 429
    assert 0 < int(response["Retry-After"]) <= window


def test_submissions_past_the_limit_get_a_json_429_and_store_nothing(survey, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "submit": [(3, 60)]}
    client = client_at("203.0.113.7")
    assert [submit(client, survey).status_code for _ in range(3)] == [201, 201, 201]
    response = submit(client, survey)
    assert_retry_after(response, 60)
    assert response.json()["error"].startswith("Too many responses from your network")
    assert response.json()["retry_after"] == int(response["Retry-After"])
    assert Submission.objects.count() == 3


def test_refused_bodies_count_too(survey, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "submit": [(2, 60)]}
    client = client_at("203.0.113.7")
    assert [submit(client, survey, b"{").status_code for _ in range(2)] == [400, 400]
    assert submit(client, survey).status_code == 429


def test_the_submit_limit_is_per_client_and_per_survey(survey, organizer, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "submit": [(1, 60)]}
    other = make_survey(organizer, allow_repeat_responses=True)
    make_question(other)
    actions.do_open_survey(other)
    first = client_at("203.0.113.7")
    assert submit(first, survey).status_code == 201
    assert submit(first, survey).status_code == 429
    assert submit(first, other).status_code == 201
    assert submit(client_at("203.0.113.8"), survey).status_code == 201


def test_the_submit_limit_speaks_korean(survey, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "submit": [(1, 60)]}
    client = client_at("203.0.113.7")
    submit(client, survey)
    response = client.post(
        reverse("submit", args=[survey.slug]), b"{}", content_type="application/json", headers={"Accept-Language": "ko"}
    )
    assert response.status_code == 429
    assert "너무 많은 응답" in response.json()["error"]


def test_the_public_results_page_past_its_limit_is_a_styled_translated_429(survey, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "public_results": [(2, 60)]}
    client = client_at("198.51.100.4")
    url = reverse("public_results", args=[survey.slug])
    assert [client.get(url).status_code for _ in range(2)] == [200, 200]
    response = client.get(url)
    assert_retry_after(response, 60)
    html = response.content.decode()
    assert 'class="error-page"' in html and "surveys/murmur.css" in html
    assert "Please wait a moment" in html
    korean = client.get(url, **KOREAN).content.decode()
    assert "잠시 기다려 주세요" in korean


def test_sign_ups_past_the_limit_are_refused_before_any_account_is_made(db, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "signup": [(2, 3600)]}
    client = client_at("192.0.2.1")
    for name in ("erin", "frank"):
        client.post(reverse("signup"), {"username": name, "password1": "x", "password2": "y"})
    assert client.get(reverse("signup")).status_code == 200  # reading the form is not limited
    response = client.post(
        reverse("signup"),
        {"username": "gina", "email": "gina@example.org", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert_retry_after(response, 3600)
    assert not get_user_model().objects.filter(username="gina").exists()


def test_password_reset_mails_are_limited(db, settings, mailoutbox):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "mail": [(2, 3600)]}
    make_user("hana", email="hana@example.org")
    client = client_at("192.0.2.9")
    for _ in range(2):
        client.post(reverse("password_reset"), {"email": "hana@example.org"})
    response = client.post(reverse("password_reset"), {"email": "hana@example.org"})
    assert_retry_after(response, 3600)
    assert len(mailoutbox) == 2


def wrong_login(client, url, username="alice"):
    return client.post(url, {"username": username, "password": "wrong password"})


def right_login(client):
    return client.post(reverse("login"), {"username": "alice", "password": PASSWORD})


@pytest.mark.parametrize("url_name", ["login", "admin:login"])
def test_twenty_wrong_passwords_in_a_row_pause_that_account_from_that_client(organizer, staff, url_name, settings):
    settings.LOGIN_DELAY = (1000, 300)  # the per-account delay is tested in test_trust.py
    username = "charlie" if url_name == "admin:login" else "alice"
    url = reverse(url_name)
    attacker = client_at("203.0.113.50")
    for _ in range(20):
        assert wrong_login(attacker, url, username).status_code == 200  # the form, saying the password is wrong
    # The 21st is refused before the password is checked, even if right.
    response = attacker.post(url, {"username": username, "password": PASSWORD})
    assert_retry_after(response, 900)
    html = response.content.decode()
    assert "Too many wrong passwords in a row" in html
    # The owner, elsewhere, is not locked out by a stranger's guesses.
    assert client_at("203.0.113.51").post(url, {"username": username, "password": PASSWORD}).status_code == 302


def test_a_clients_failures_on_other_accounts_do_not_pause_its_own(organizer, settings):
    settings.LOGIN_DELAY = (1000, 300)
    office = client_at("203.0.113.60")
    for number in range(20):
        wrong_login(office, reverse("login"), username=f"someone{number}")
    assert office.post(reverse("login"), {"username": "alice", "password": PASSWORD}).status_code == 302


def test_a_client_spraying_many_accounts_pauses_while_the_owner_still_logs_in(organizer, settings):
    settings.LOGIN_DELAY = (1000, 300)
    settings.LOGIN_CLIENT_FAILURES = 5
    sprayer = client_at("203.0.113.61")
    for number in range(5):
        assert wrong_login(sprayer, reverse("login"), username=f"someone{number}").status_code == 200
    assert sprayer.post(reverse("login"), {"username": "alice", "password": PASSWORD}).status_code == 429
    assert right_login(client_at("198.51.100.61")).status_code == 302


def test_a_successful_login_clears_its_clients_count(organizer, settings):
    settings.LOGIN_DELAY = (1000, 300)
    client = client_at("198.51.100.99")
    for _ in range(2):
        for _ in range(19):
            wrong_login(client, reverse("login"))
        assert right_login(client).status_code == 302
        client.logout()


def test_the_throttled_login_page_speaks_korean(organizer, settings):
    settings.LOGIN_DELAY = (1000, 300)  # the pause after 20 in a row, not the delay (which a slow run lets lapse)
    for _ in range(20):
        wrong_login(client_at("203.0.113.70"), reverse("login"))
    response = client_at("203.0.113.70").post(reverse("login"), {"username": "alice", "password": "x"}, **KOREAN)
    assert response.status_code == 429
    assert "비밀번호" in response.content.decode()


def stored_counters() -> list[tuple[str, bytes, float]]:
    """(key, stored value, seconds left) of every rate-limit entry, read from the cache's own store."""
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        client = backend._cache.get_client()
        return [(key.decode(), client.get(key), client.ttl(key)) for key in client.scan_iter("*:rl:*")]
    now = time.time()
    return [(key, value, backend._expire_info[key] - now) for key, value in backend._cache.items() if ":rl:" in key]


def test_counters_hold_no_address_and_expire_with_their_window(survey, organizer):
    submit(client_at("203.0.113.77"), survey)
    client_at("203.0.113.77").get(reverse("public_results", args=[survey.slug]))
    wrong_login(client_at("203.0.113.77"), reverse("login"))
    counters = stored_counters()
    assert len(counters) >= 4
    for key, value, seconds_left in counters:
        assert "203.0.113" not in key and "alice" not in key and survey.slug not in key
        assert b"203.0.113" not in value
        assert 0 < seconds_left <= 3600


def test_a_name_without_limits_is_not_limited(survey, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "submit": []}
    client = client_at("203.0.113.7")
    assert [submit(client, survey).status_code for _ in range(3)] == [201, 201, 201]


def test_rate_limits_can_be_switched_off(survey, settings):
    settings.RATE_LIMITS_ENABLED = False
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "submit": [(1, 60)]}
    client = client_at("203.0.113.7")
    assert [submit(client, survey).status_code for _ in range(3)] == [201, 201, 201]


def test_ipv6_clients_are_counted_by_their_64_network(rf, settings):
    one = rf.get("/", REMOTE_ADDR="2001:db8:1:2:aaaa::1")
    two = rf.get("/", REMOTE_ADDR="2001:db8:1:2:bbbb::2")
    three = rf.get("/", REMOTE_ADDR="2001:db8:1:3::1")
    assert client_address(one) == client_address(two) == "2001:db8:1:2::/64"
    assert client_address(three) != client_address(one)
    assert client_address(rf.get("/", REMOTE_ADDR="::ffff:192.0.2.1")) == "192.0.2.1"


def test_behind_a_proxy_the_address_it_appended_counts(rf, settings):
    request = rf.get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="1.2.3.4, 192.0.2.44")
    assert client_address(request) == "10.0.0.1"
    settings.TRUSTED_PROXIES = [ipaddress.ip_network("10.0.0.0/8")]
    assert client_address(request) == "192.0.2.44"  # the first entry is the client's own claim


def test_rates_are_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("RATE_TEST", "30/m, 300/h,5/10m,1/d")
    assert envrates("RATE_TEST", "") == [(30, 60), (300, 3600), (5, 600), (1, 86400)]
    for bad in ("30", "x/m", "0/m", "3/w", "3/0m"):
        monkeypatch.setenv("RATE_TEST", bad)
        with pytest.raises(ImproperlyConfigured):
            envrates("RATE_TEST", "")


REDIS_URL = os.getenv("MURMUR_TEST_REDIS_URL", "redis://127.0.0.1:6379/5")


@pytest.fixture
def redis_cache(settings):
    """The default cache on Redis under a prefix of its own (skipped where no Redis answers)."""
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except redis.exceptions.ConnectionError:
        pytest.skip(f"no Redis at {REDIS_URL}")
    prefix = f"murmur-test-{secrets.token_hex(4)}"
    backend = "django.core.cache.backends.redis.RedisCache"
    settings.CACHES = {"default": {"BACKEND": backend, "LOCATION": REDIS_URL, "KEY_PREFIX": prefix}}
    yield caches["default"]
    client = caches["default"]._cache.get_client()
    for key in client.scan_iter(f"{prefix}:*"):
        client.delete(key)


def test_on_redis_a_counter_opens_its_window_once_and_reports_the_wait(redis_cache):
    rates = [(2, 60), (3, 3600)]
    assert [hit("t", "client", rates) for _ in range(2)] == [None, None]
    assert 0 < hit("t", "client", rates) <= 60  # third in the minute
    assert hit("t", "other", rates) is None
    client = redis_cache._cache.get_client()
    for seconds in (60, 3600):
        key = redis_cache.make_and_validate_key(f"rl:t:{seconds}:client")
        assert int(client.get(key)) == 3
        assert 0 < client.ttl(key) <= seconds  # set when the window opened, never extended
