"""Sign up, log in and out, change and reset passwords."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail, signing
from django.test import Client
from django.urls import reverse

from surveys.accounts import CONFIRM_SALT, may_publish
from surveys.demo import load_demo
from surveys.models import Survey
from tests.base import PASSWORD, make_question, make_survey


def sign_up(client, username="dana", email="dana@example.org", **headers):
    fields = {"username": username, "email": email, "password1": PASSWORD, "password2": PASSWORD}
    return client.post(reverse("signup"), fields, follow=True, **headers)


def mailed_link(message, path):
    return re.search(rf"https?://testserver({path}\S+)", message.body).group(1)


def test_it_signs_up_and_logs_in(client, db):
    response = sign_up(client)
    assert response.redirect_chain[-1][0] == reverse("survey_list")
    assert response.context["user"].username == "dana"
    assert response.context["user"].email == "dana@example.org"


@pytest.mark.parametrize("email", ["", "not an address"])
def test_sign_up_needs_an_email_address(client, db, email):
    response = sign_up(client, email=email)
    assert response.status_code == 200
    assert not get_user_model().objects.exists()


def test_one_account_per_email_address(client, organizer):
    organizer.email = "alice@example.org"
    organizer.save()
    response = sign_up(client, email="ALICE@example.org")
    assert "An account with this email address already exists." in response.content.decode()
    assert get_user_model().objects.count() == 1


def test_a_new_account_opens_surveys_only_after_confirming_its_address(client, db, mailoutbox):
    sign_up(client)
    user = get_user_model().objects.get(username="dana")
    assert not may_publish(user)
    survey = make_survey(user)
    make_question(survey)
    response = client.post(reverse("survey_open", args=[survey.pk]), follow=True)
    survey.refresh_from_db()
    assert survey.status == Survey.Status.DRAFT
    assert "Confirm your email address" in response.content.decode()
    assert "data-email-unconfirmed" in client.get(reverse("survey_list")).content.decode()

    [message] = mailoutbox
    assert message.to == ["dana@example.org"]
    assert message.subject == "Confirm your email address for Murmur"
    response = client.get(mailed_link(message, "/accounts/confirm/"), follow=True)
    assert "Your email address is confirmed." in response.content.decode()
    assert may_publish(user)
    client.post(reverse("survey_open", args=[survey.pk]))
    survey.refresh_from_db()
    assert survey.status == Survey.Status.OPEN
    assert "data-email-unconfirmed" not in client.get(reverse("survey_list")).content.decode()


def test_mail_is_written_in_the_language_of_the_sign_up(client, db, mailoutbox):
    sign_up(client, HTTP_ACCEPT_LANGUAGE="ko")
    [message] = mailoutbox
    assert message.subject == "Murmur 이메일 주소를 확인해 주세요"
    assert "다음 링크를 열어" in message.body
    # A reset asked for from an English page still speaks the account's language.
    Client().post(reverse("password_reset"), {"email": "dana@example.org"}, HTTP_ACCEPT_LANGUAGE="en")
    assert mailoutbox[1].subject == "Murmur 비밀번호 재설정"


def test_logging_in_sets_the_language_of_later_mail(client, db, mailoutbox):
    sign_up(client, HTTP_ACCEPT_LANGUAGE="ko")
    Client().post(reverse("login"), {"username": "dana", "password": PASSWORD}, HTTP_ACCEPT_LANGUAGE="en")
    Client().post(reverse("password_reset"), {"email": "dana@example.org"})
    assert mailoutbox[-1].subject == "Reset your Murmur password"


@pytest.mark.parametrize(
    "token",
    [
        "garbage",
        signing.dumps({"user": 1, "email": "dana@example.org"}, salt="another-salt"),
        signing.dumps([1, "dana@example.org"], salt=CONFIRM_SALT),
        signing.dumps({"user": "1", "email": "dana@example.org"}, salt=CONFIRM_SALT),
        signing.dumps({"user": 1, "email": "old@example.org"}, salt=CONFIRM_SALT),
    ],
    ids=["garbage", "other-salt", "not-an-object", "id-not-a-number", "stale-address"],
)
def test_a_bad_confirmation_link_confirms_nothing(client, db, token):
    sign_up(client)
    user = get_user_model().objects.get(username="dana")
    token = token.replace('"user":1', f'"user":{user.pk}')
    response = client.get(reverse("confirm_email", args=[token]))
    assert response.status_code == 400
    assert "This link is no longer valid" in response.content.decode()
    assert not may_publish(user)


def test_an_old_confirmation_link_expires(client, db, mailoutbox, monkeypatch):
    sign_up(client)
    link = mailed_link(mailoutbox[0], "/accounts/confirm/")
    monkeypatch.setattr("surveys.accounts.CONFIRM_MAX_AGE", -1)
    assert client.get(link).status_code == 400
    assert not may_publish(get_user_model().objects.get(username="dana"))


def test_the_link_can_be_sent_again(client, db, mailoutbox):
    sign_up(client)
    response = client.post(reverse("resend_confirmation"), follow=True)
    assert "We sent the link again to dana@example.org." in response.content.decode()
    assert len(mailoutbox) == 2
    client.get(mailed_link(mailoutbox[1], "/accounts/confirm/"))
    client.post(reverse("resend_confirmation"))
    assert len(mailoutbox) == 2  # confirmed: nothing more to send


def test_accounts_not_made_by_sign_up_and_the_demo_may_publish(organizer):
    assert may_publish(organizer)
    for survey, _ in load_demo():
        assert survey.status == Survey.Status.OPEN
        assert may_publish(survey.owner)


def test_a_signed_up_organizer_resets_a_forgotten_password_end_to_end(client, db, mailoutbox):
    sign_up(client)
    client.post(reverse("logout"))
    stranger = Client()
    stranger.post(reverse("password_reset"), {"email": "dana@example.org"})
    message = mailoutbox[-1]
    assert message.to == ["dana@example.org"]
    assert message.subject == "Reset your Murmur password"
    form_page = stranger.get(mailed_link(message, "/accounts/reset/"), follow=True)
    stranger.post(
        form_page.redirect_chain[-1][0], {"new_password1": "reset Password 42!", "new_password2": "reset Password 42!"}
    )
    assert stranger.post(reverse("login"), {"username": "dana", "password": "reset Password 42!"}).status_code == 302


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


def test_an_unconfirmed_account_cannot_have_murmur_mail_invitations(client, db, mailoutbox):
    sign_up(client)
    survey = make_survey(get_user_model().objects.get(username="dana"), invite_only=True)
    mailoutbox.clear()
    for name in ("invitation_emails", "invitation_reminders"):
        response = client.post(reverse(name, args=[survey.pk]), {"emails": "victim@example.org"}, follow=True)
        assert "Confirm your email address before Murmur mails invitations for you." in response.content.decode()
    assert mailoutbox == []
    assert not survey.invitations.exists()
