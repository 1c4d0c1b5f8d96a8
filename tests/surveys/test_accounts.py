"""Sign up, log in and out, change and reset passwords."""

from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.core import mail
from django.urls import reverse

from tests.base import PASSWORD


def test_it_signs_up_and_logs_in(client, db):
    response = client.post(
        reverse("signup"), {"username": "dana", "password1": PASSWORD, "password2": PASSWORD}, follow=True
    )
    assert response.redirect_chain[-1][0] == reverse("survey_list")
    assert response.context["user"].username == "dana"


def test_it_refuses_a_weak_password(client, db):
    response = client.post(reverse("signup"), {"username": "dana", "password1": "123", "password2": "123"})
    assert response.status_code == 200
    assert "too short" in response.content.decode()
    assert not get_user_model().objects.exists()


def test_login_and_logout(client, organizer):
    response = client.post(reverse("login"), {"username": "alice", "password": PASSWORD})
    assert response.status_code == 302
    assert client.get(reverse("survey_list")).status_code == 200
    client.post(reverse("logout"))
    assert client.get(reverse("survey_list")).status_code == 302


def test_password_change(organizer_client, organizer):
    response = organizer_client.post(
        reverse("password_change"),
        {"old_password": PASSWORD, "new_password1": "a new Password 42!", "new_password2": "a new Password 42!"},
    )
    assert response.url == reverse("password_change_done")
    organizer.refresh_from_db()
    assert organizer.check_password("a new Password 42!")


def test_password_reset_by_email(client, organizer):
    organizer.email = "alice@example.org"
    organizer.save()
    client.post(reverse("password_reset"), {"email": "alice@example.org"})
    assert len(mail.outbox) == 1
    link = re.search(r"https?://testserver(/accounts/reset/\S+)", mail.outbox[0].body).group(1)
    form_page = client.get(link, follow=True)
    set_url = form_page.redirect_chain[-1][0]
    client.post(set_url, {"new_password1": "reset Password 42!", "new_password2": "reset Password 42!"})
    organizer.refresh_from_db()
    assert organizer.check_password("reset Password 42!")
