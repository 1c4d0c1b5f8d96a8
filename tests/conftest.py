from __future__ import annotations

import os

import pytest
from django.utils import translation
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

# One BLAS thread per test process: pytest-xdist already runs one worker per core, and a second BLAS
# thread in each would only contend for the same two cores (set before numpy is first imported:
# nothing imported above loads it).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

# Hypothesis depths: "dev" for make test, "ci" for make test-all and CI (HYPOTHESIS_PROFILE picks).
# Every run is derandomized, so a failure reproduces; no example database is written.
_HYPOTHESIS = {"deadline": None, "derandomize": True, "database": None, "suppress_health_check": list(HealthCheck)}
hypothesis_settings.register_profile("dev", max_examples=300, **_HYPOTHESIS)
hypothesis_settings.register_profile("ci", max_examples=10_000, **_HYPOTHESIS)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """On PostgreSQL, the test connections commit without waiting for the write-ahead log to reach the
    disk (synchronous_commit off: a crash may lose the last commits, never corrupt or reorder them),
    so a transactional test's commits and flush stop waiting on fsync. Test connections only; the
    settings themselves are untouched."""
    from django.db import connections

    for alias in connections:
        database = connections.settings[alias]
        if database["ENGINE"] == "django.db.backends.postgresql":
            options = database.setdefault("OPTIONS", {})
            options["options"] = f"{options.get('options', '')} -c synchronous_commit=off".strip()


def pytest_addoption(parser):
    parser.addoption(
        "--database-only",
        action="store_true",
        help="run only the tests that touch a database (CI's SQLite pass; every test runs on PostgreSQL)",
    )


#: pytest-django's fixtures that give a test a database (directly or through the fixtures it uses).
DATABASE_FIXTURES = {
    "db",
    "transactional_db",
    "live_server",
    "django_db_setup",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
}


def touches_database(item) -> bool:
    return item.get_closest_marker("django_db") is not None or bool(DATABASE_FIXTURES & set(item.fixturenames))


@pytest.hookimpl(trylast=True)  # after tests/browser/conftest.py has marked its slow variants
def pytest_collection_modifyitems(config, items):
    """With --database-only, only the tests that touch a database. Then the long tests first, then
    the browser tests (seconds each): pytest-xdist, told to keep this order (--no-loadscope-reorder,
    Makefile), hands out their modules first, and the workers finish together on the short ones."""
    if config.getoption("--database-only"):
        elsewhere = [item for item in items if not touches_database(item)]
        if elsewhere:
            config.hook.pytest_deselected(items=elsewhere)
            items[:] = [item for item in items if touches_database(item)]

    def later(item):
        long = item.get_closest_marker("slow") or item.get_closest_marker("first")
        return (long is None, not item.nodeid.startswith("tests/browser/"))

    items.sort(key=later)


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _jobs_at_once(settings, tmp_path):
    """Jobs run at once, as jobs (surveys.jobs.queue: "sync"); their files go to the test's own folder.

    tests/surveys/test_jobs.py switches to the "db" transport to check that pages never run them inline.
    """
    settings.JOBS_QUEUE = "sync"
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture(autouse=True)
def _empty_cache():
    """Each test starts with an empty cache: databases reuse ids across rolled-back tests."""
    from django.core.cache import cache

    from surveys.responding.submissions import _IN_FORCE, _SURVEYS

    cache.clear()
    _IN_FORCE.clear()
    _SURVEYS.clear()
    yield
    cache.clear()
    _IN_FORCE.clear()
    _SURVEYS.clear()


@pytest.fixture(autouse=True)
def _default_language():
    """Start every test in the default language: a request in Korean leaves Korean active in its thread."""
    translation.deactivate()
    yield
    translation.deactivate()
