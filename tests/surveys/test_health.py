"""The load balancer's probes: /healthz (liveness) and /ready (the database and the cache answer)."""

from __future__ import annotations

import gc
import json
import os
import runpy
import sys
from pathlib import Path
from types import SimpleNamespace

import django.core.cache
import pytest
from django.conf import settings
from django.core.cache import caches
from django.db import OperationalError, connections

from surveys.views import health

pytestmark = pytest.mark.django_db

UNREACHABLE_REDIS = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0"}
}


def test_ready_without_login_says_only_which_dependency_answers(client):
    response = client.get("/ready")
    assert response.status_code == 200
    assert json.loads(response.content) == {"database": True, "cache": True}
    assert "no-cache" in response["Cache-Control"]
    assert "sessionid" not in response.cookies


def test_ready_is_503_when_the_database_does_not_answer(client, monkeypatch):
    def refuse():
        raise OperationalError("connection refused")

    monkeypatch.setattr(connections["default"], "cursor", refuse)
    response = client.get("/ready")
    assert response.status_code == 503
    assert json.loads(response.content) == {"database": False, "cache": True}


def test_ready_is_503_when_the_cache_does_not_answer(client, settings):
    settings.CACHES = UNREACHABLE_REDIS
    response = client.get("/ready")
    assert response.status_code == 503
    assert json.loads(response.content) == {"database": True, "cache": False}


def test_cache_that_drops_writes_is_not_ready(monkeypatch):
    monkeypatch.setattr(health.cache, "get", lambda key, default=None: default)
    assert health.cache_answers() is False


def test_probe_leaves_no_cache_entry(client, settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "probe"}}
    assert client.get("/ready").status_code == 200
    assert caches["default"]._cache == {}


def test_liveness_touches_neither_database_nor_cache(client, settings, django_assert_num_queries):
    settings.CACHES = UNREACHABLE_REDIS
    with django_assert_num_queries(0):
        response = client.get("/healthz")
    assert response.status_code == 200


def test_probes_are_never_rate_limited(client, settings):
    settings.RATE_LIMITS_ENABLED = True
    settings.RATE_LIMITS = {name: [(1, 60)] for name in settings.RATE_LIMITS}
    assert {client.get(path).status_code for path in ["/ready", "/healthz"] * 20} == {200}


def test_probes_answer_plain_http_when_https_is_enforced(client, settings):
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/ready").status_code == 200
    assert client.get("/healthz").status_code == 200
    assert client.get("/").status_code == 301


@pytest.mark.parametrize("path", ["/ready", "/healthz"])
def test_probes_answer_get_and_head_only(client, path):
    assert client.head(path).status_code == 200
    assert client.post(path).status_code == 405


def gunicorn_config(monkeypatch, **env):
    """The namespace gunicorn reads from config/gunicorn.conf.py, run in a copy of the environment."""
    if not isinstance(os.environ, dict):
        monkeypatch.setattr(os, "environ", dict(os.environ))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(Path(settings.BASE_DIR) / "config" / "gunicorn.conf.py"))


def test_gunicorn_preloads_and_keeps_one_blas_thread_unless_told_otherwise(monkeypatch):
    monkeypatch.setattr(os, "environ", {"MKL_NUM_THREADS": "4"})  # the operator's own value wins
    config = gunicorn_config(monkeypatch, WEB_CONCURRENCY="5")
    assert config["preload_app"] is True
    assert config["workers"] == 5
    assert config["wsgi_app"] == "config.wsgi:application"
    assert (os.environ["OPENBLAS_NUM_THREADS"], os.environ["OMP_NUM_THREADS"], os.environ["MKL_NUM_THREADS"]) == (
        "1",
        "1",
        "4",
    )
    assert gunicorn_config(monkeypatch, WEB_PRELOAD="false")["preload_app"] is False


def test_gunicorn_warm_up_imports_and_compiles_everything(monkeypatch):
    gunicorn_config(monkeypatch)["warm"]()
    assert {"scipy.stats", "matplotlib.figure", "surveys.views.dashboard"} <= set(sys.modules)


def test_gunicorn_keeps_the_warmed_app_out_of_the_workers_garbage_collections(monkeypatch):
    """Preloaded, the master freezes what it warmed before forking; else each worker after warming."""
    config = gunicorn_config(monkeypatch)
    monkeypatch.setitem(config["when_ready"].__globals__, "warm", lambda: None)  # what runs is its own test
    monkeypatch.setattr(connections, "close_all", lambda: None)  # the test's own connection stays open
    monkeypatch.setattr(django.core.cache, "close_caches", lambda: None)
    preloaded, per_worker = (SimpleNamespace(cfg=SimpleNamespace(preload_app=flag)) for flag in (True, False))
    gc.unfreeze()
    try:
        config["post_worker_init"](preloaded)  # a forked worker of a preloaded master has nothing to do
        assert gc.get_freeze_count() == 0
        config["when_ready"](preloaded)
        assert gc.get_freeze_count() > 0
        gc.unfreeze()
        config["when_ready"](per_worker)  # not preloaded: the master imports nothing to freeze
        assert gc.get_freeze_count() == 0
        config["post_worker_init"](per_worker)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
