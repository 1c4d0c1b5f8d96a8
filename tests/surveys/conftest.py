from __future__ import annotations

import pytest

from tests.base import make_user


@pytest.fixture
def organizer(db):
    return make_user("alice")


@pytest.fixture
def other_organizer(db):
    return make_user("bob")


@pytest.fixture
def staff(db):
    return make_user("charlie", is_staff=True, is_superuser=True)


@pytest.fixture
def organizer_client(client, organizer):
    client.force_login(organizer)
    return client


@pytest.fixture
def htmx_headers():
    return {"HTTP_HX_REQUEST": "true"}
