"""Trust that holds in production: limits shared by every worker (the database cache by default),
forwarded headers believed only from trusted proxies, login throttling by django-axes per account
and client with a delay per account, and a password reset that does the same work for any address."""

from __future__ import annotations

import ipaddress
import threading
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.core import mail
from django.core.cache import caches
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from config.env import envcache, envproxies
from surveys import accounts, checks
from surveys.replica import ResultsReplicaRouter, results_reads
from surveys.responding.ratelimits import ForwardedHeadersMiddleware, client_address, hit, login_client
from tests.base import PASSWORD, make_user
from tests.surveys.test_ratelimits import client_at, submit, survey  # noqa: F401 (fixture)
from tests.surveys.test_replica import with_replica

DATABASE_CACHE = "surveys.cache.DatabaseCache"


@pytest.fixture
def database_cache(db, settings):
    settings.CACHES = {"default": envcache("CACHE_URL", "db://murmur_cache")}
    yield caches["default"]
    caches["default"].clear()


def test_production_defaults_to_the_database_cache_created_by_migrate(monkeypatch, database_cache):
    monkeypatch.delenv("CACHE_URL", raising=False)
    assert envcache("CACHE_URL", "db://murmur_cache") == {
        "BACKEND": DATABASE_CACHE,
        "LOCATION": "murmur_cache",
        "KEY_PREFIX": "murmur",
    }
    assert "murmur_cache" in connection.introspection.table_names()
    database_cache.set("k", 1)
    assert database_cache.get("k") == 1


def test_the_database_cache_counts_a_window_and_keeps_its_expiry(database_cache):
    rates = [(2, 60), (3, 3600)]
    assert [hit("t", "client", rates) for _ in range(2)] == [None, None]
    assert 0 < hit("t", "client", rates) <= 60
    assert hit("t", "other", rates) is None
    key = database_cache.make_and_validate_key("rl:t:60:client")
    with connection.cursor() as cursor:
        cursor.execute("SELECT expires FROM murmur_cache WHERE cache_key = %s", [key])
        (before,) = cursor.fetchone()
        database_cache.incr("rl:t:60:client")
        cursor.execute("SELECT expires FROM murmur_cache WHERE cache_key = %s", [key])
        (after,) = cursor.fetchone()
    assert database_cache.get("rl:t:60:client") == 4
    assert before == after  # Django's BaseCache.incr would have moved it
    with pytest.raises(ValueError):
        database_cache.incr("missing")


def test_submissions_are_limited_on_the_database_cache(database_cache, survey, settings):  # noqa: F811
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "submit": [(3, 60)]}
    client = client_at("203.0.113.7")
    assert [submit(client, survey).status_code for _ in range(4)] == [201, 201, 201, 429]


def test_check_deploy_refuses_a_per_process_cache_in_production(settings):
    settings.DEBUG = False
    settings.CACHES = {"default": envcache("CACHE_URL", "locmem://")}
    assert [error.id for error in checks.check_limits_are_shared()] == ["murmur.E001"]
    settings.CACHES = {"default": envcache("CACHE_URL", "db://murmur_cache")}
    assert checks.check_limits_are_shared() == []
    settings.DEBUG = True
    settings.CACHES = {"default": envcache("CACHE_URL", "locmem://")}
    assert checks.check_limits_are_shared() == []


def test_behind_proxy_takes_addresses_and_networks(monkeypatch):
    monkeypatch.setenv("BEHIND_PROXY", "10.0.0.0/8, 127.0.0.1,2001:db8::/32")
    assert [str(network) for network in envproxies("BEHIND_PROXY", "false")] == [
        "10.0.0.0/8",
        "127.0.0.1/32",
        "2001:db8::/32",
    ]
    monkeypatch.setenv("BEHIND_PROXY", "false")
    assert envproxies("BEHIND_PROXY", "false") == []
    monkeypatch.setenv("BEHIND_PROXY", "proxy.example")
    with pytest.raises(ImproperlyConfigured, match="BEHIND_PROXY"):
        envproxies("BEHIND_PROXY", "false")


def test_check_deploy_refuses_behind_proxy_true_without_addresses(monkeypatch, settings):
    monkeypatch.setenv("BEHIND_PROXY", "true")
    settings.TRUSTED_PROXIES = envproxies("BEHIND_PROXY", "false")
    assert [error.id for error in checks.check_proxies_are_named()] == ["murmur.E002"]
    settings.TRUSTED_PROXIES = [ipaddress.ip_network("10.0.0.0/8")]
    assert checks.check_proxies_are_named() == []


@pytest.fixture
def proxies(settings):
    settings.TRUSTED_PROXIES = [ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("127.0.0.1/32")]
    settings.BEHIND_PROXY = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")


def test_the_client_is_the_rightmost_untrusted_forwarded_address(proxies, rf):
    request = rf.get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.7, 10.0.0.2")
    assert client_address(request) == "198.51.100.7"
    only_proxies = rf.get("/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="10.0.0.3, 10.0.0.2")
    assert client_address(only_proxies) == "10.0.0.3"
    direct = rf.get("/", REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR="198.51.100.7")
    assert client_address(direct) == "203.0.113.9"


def test_forwarded_headers_from_other_peers_are_dropped(proxies):
    seen = []
    middleware = ForwardedHeadersMiddleware(lambda request: seen.append(request.is_secure()) or None)
    headers = {"HTTP_X_FORWARDED_FOR": "198.51.100.7", "HTTP_X_FORWARDED_PROTO": "https"}
    direct = RequestFactory().get("/", REMOTE_ADDR="203.0.113.9", **headers)
    middleware(direct)
    assert "HTTP_X_FORWARDED_FOR" not in direct.META and "HTTP_X_FORWARDED_PROTO" not in direct.META
    proxied = RequestFactory().get("/", REMOTE_ADDR="10.0.0.1", **headers)
    middleware(proxied)
    assert seen == [False, True]


def test_a_client_outside_the_proxies_rotating_x_forwarded_for_is_limited(proxies, survey, settings):  # noqa: F811
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "submit": [(3, 60)]}
    statuses = []
    for number in range(6):
        client = Client(REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR=f"198.51.100.{number}")
        statuses.append(submit(client, survey).status_code)
    assert statuses == [201, 201, 201, 429, 429, 429]
    # Through the proxy, different clients are counted apart.
    through_proxy = Client(REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.9, 198.51.100.77")
    assert submit(through_proxy, survey).status_code == 201


def test_axes_counts_the_same_client_under_a_pseudonym(proxies, rf, organizer):
    rotating = [rf.post("/", REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}") for n in range(3)]
    assert len({login_client(request) for request in rotating}) == 1
    address = ipaddress.ip_address(login_client(rotating[0]))
    assert address in ipaddress.ip_network("fc00::/7")
    client_at("203.0.113.9").post(reverse("login"), {"username": "alice", "password": "wrong"})
    (attempt,) = AccessAttempt.objects.all()
    assert "203.0.113" not in attempt.ip_address and "203.0.113" not in attempt.post_data
    assert PASSWORD not in attempt.post_data


@pytest.fixture
def frozen_clock(monkeypatch):
    """The login delay is measured in seconds on axes' clock: stopped, a slow machine cannot let
    a 1 s delay lapse between two requests of a test (it did, under load)."""
    instant = timezone.now()
    for clock in ("axes.handlers.proxy.now", "axes.attempts.now", "django.utils.timezone.now"):
        monkeypatch.setattr(clock, lambda: instant)


def wrong(client, username="alice"):
    return client.post(reverse("login"), {"username": username, "password": "wrong password"})


def right(client, username="alice"):
    return client.post(reverse("login"), {"username": username, "password": PASSWORD})


@pytest.mark.usefixtures("frozen_clock")
def test_strangers_wrong_passwords_do_not_stop_the_owner_on_their_usual_client(organizer):
    owner = client_at("198.51.100.20")
    assert right(owner).status_code == 302
    owner.logout()
    statuses = [wrong(client_at(f"203.0.113.{number}")).status_code for number in range(20)]
    # Five free failures on the account, then each new client waits (and is not counted).
    assert statuses[:5] == [200] * 5 and set(statuses[5:]) == {429}
    assert right(owner).status_code == 302
    refused = right(client_at("192.0.2.200"))
    assert refused.status_code == 429 and 0 < int(refused["Retry-After"]) <= 2
    assert "Many wrong passwords were tried for this account" in refused.content.decode()
    assert AccessAttempt.objects.filter(username="alice").count() == 5


@pytest.mark.usefixtures("frozen_clock")
def test_the_delay_per_account_doubles_up_to_its_cap(organizer, settings):
    settings.LOGIN_DELAY = (2, 8)
    waits = []
    for number in range(6):
        assert wrong(client_at(f"203.0.113.{number}")).status_code == 200
        response = right(client_at(f"192.0.2.{number}"))  # a client alice never logged in from
        waits.append(int(response["Retry-After"]) if response.status_code == 429 else 0)
        # Let the delay pass: move every failure back by the cap.
        for attempt in AccessAttempt.objects.all():
            attempt.attempt_time -= timedelta(seconds=8)
            attempt.save(update_fields=["attempt_time"])
    assert waits == [0, 1, 2, 4, 8, 8]
    assert right(client_at("192.0.2.100")).status_code == 302


@pytest.mark.usefixtures("frozen_clock")
def test_the_throttled_delay_speaks_korean(organizer):
    for number in range(6):
        wrong(client_at(f"203.0.113.{number}"))
    response = client_at("192.0.2.1").post(
        reverse("login"), {"username": "alice", "password": PASSWORD}, HTTP_ACCEPT_LANGUAGE="ko"
    )
    assert response.status_code == 429
    assert "초 뒤에" in response.content.decode()


def reset_queries(client, email):
    with CaptureQueriesContext(connection) as queries:
        response = client.post(reverse("password_reset"), {"email": email})
    assert response.status_code == 302
    return [query["sql"] for query in queries.captured_queries]


def join_mail_threads():
    for thread in threading.enumerate():
        if thread.name == "murmur-mail":
            thread.join(timeout=10)


@pytest.mark.django_db(transaction=True)
def test_a_password_reset_does_the_same_work_for_known_and_unknown_addresses(settings, mailoutbox):
    settings.MAIL_IN_BACKGROUND = True
    make_user("dana", email="dana@example.org")
    client = client_at("192.0.2.9")
    known = reset_queries(client, "dana@example.org")
    unknown = reset_queries(client, "nobody@example.org")
    assert known == unknown  # the address is looked up in the background, not on the request
    assert not any("auth_user" in sql for sql in known)
    join_mail_threads()
    assert [message.to for message in mailoutbox] == [["dana@example.org"]]


def test_the_reset_mail_is_handed_to_the_background(db, settings, monkeypatch):
    settings.MAIL_IN_BACKGROUND = True
    tasks = []
    monkeypatch.setattr(accounts.transaction, "on_commit", tasks.append)
    make_user("erin", email="erin@example.org")
    for email in ("erin@example.org", "nobody@example.org"):
        Client().post(reverse("password_reset"), {"email": email})
    assert len(tasks) == 2 and mail.outbox == []


def test_the_database_cache_is_read_on_the_primary_even_in_results(database_cache, monkeypatch):
    with_replica(monkeypatch)
    with results_reads():
        assert ResultsReplicaRouter().db_for_read(database_cache.cache_model_class) is None
