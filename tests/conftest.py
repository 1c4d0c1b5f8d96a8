from __future__ import annotations

import pytest
from django.utils import translation


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


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
