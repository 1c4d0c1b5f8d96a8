from __future__ import annotations

import os

import pytest
from django.utils import translation
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

# Hypothesis depths: "dev" for make test, "ci" for make test-all and CI (HYPOTHESIS_PROFILE picks).
# Every run is derandomized, so a failure reproduces; no example database is written.
_HYPOTHESIS = {"deadline": None, "derandomize": True, "database": None, "suppress_health_check": list(HealthCheck)}
hypothesis_settings.register_profile("dev", max_examples=300, **_HYPOTHESIS)
hypothesis_settings.register_profile("ci", max_examples=10_000, **_HYPOTHESIS)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def pytest_collection_modifyitems(items):
    """The long tests first: pytest-xdist hands out their modules first, and the workers finish together."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None and item.get_closest_marker("first") is None)


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
