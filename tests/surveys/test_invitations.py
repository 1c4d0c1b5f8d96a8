"""Single-use invitation links: one response per invitation, and no stored field
that links an invitation to the response it made."""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

import pytest
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from surveys import actions
from surveys.models import Invitation, Report, Submission
from surveys.responding import invitations
from tests.base import make_open_survey
from tests.surveys.test_storage import submission_body, survey_with


def post(client, survey, invite=None, seed=0):
    return send(client, survey, body_for(survey, invite, seed))


def body_for(survey, invite=None, seed=0):
    body = json.loads(submission_body(survey, seed=seed))  # a fresh page token every time
    if invite is not None:
        body["invite"] = invite
    return json.dumps(body)


def send(client, survey, body):
    return client.post(reverse("submit", args=[survey.slug]), body, content_type="application/json")


def tokens_of(links):
    return [urlsplit(link.url).fragment.removeprefix("invite=") for link in links]


@pytest.fixture
def invite_only(organizer):
    survey = make_open_survey(organizer, questions=2, invite_only=True, allow_repeat_responses=True)
    return survey


def test_each_invitation_takes_exactly_one_response_and_nothing_else_gets_in(client, invite_only):
    tokens = tokens_of(invitations.create_links(invite_only, "https://murmur.test/s/x/", 5))
    accepted = [post(client, invite_only, token, seed=i).status_code for i, token in enumerate(tokens)]
    assert accepted == [201] * 5
    refused = [
        post(client, invite_only, tokens[0], seed=10),  # the same invitation again, fresh page token
        post(client, invite_only, tokens[4], seed=11),
        post(client, invite_only, None, seed=12),  # no invitation at all
        post(client, invite_only, "A" * 22, seed=13),  # a well-formed token that was never made
    ]
    assert [r.status_code for r in refused] == [403, 403, 403, 403]
    assert "already been used" in refused[0].json()["error"]
    assert "by invitation only" in refused[2].json()["error"]
    assert "already been used or is not valid" in refused[3].json()["error"]
    assert post(client, invite_only, 12345, seed=14).status_code == 400
    assert Submission.objects.filter(survey=invite_only).count() == 5
    assert Report.objects.filter(question__survey=invite_only).count() == 10
    assert invitations.counts(invite_only) == {"total": 5, "used": 5, "unused": 0, "with_email": 0}


def test_a_refused_submission_does_not_use_up_its_invitation(client, invite_only):
    (token,) = tokens_of(invitations.create_links(invite_only, "https://murmur.test/s/x/", 1))
    actions.do_close_survey(invite_only)
    assert post(client, invite_only, token).status_code == 403
    assert not Invitation.objects.get().used
    actions.do_open_survey(invite_only)
    assert post(client, invite_only, token).status_code == 201
    assert Invitation.objects.get().used


def test_an_open_survey_also_takes_invitations_once_and_stays_open_without_them(client, organizer):
    survey = make_open_survey(organizer, allow_repeat_responses=True)
    (token,) = tokens_of(invitations.create_links(survey, "https://murmur.test/s/x/", 1))
    assert post(client, survey, token, seed=1).status_code == 201
    assert post(client, survey, token, seed=2).status_code == 403
    assert post(client, survey, None, seed=3).status_code == 201


def test_no_stored_field_links_an_invitation_to_a_submission(client, invite_only):
    tokens = tokens_of(invitations.create_links(invite_only, "https://murmur.test/s/x/", 3))
    before = {i.pk: model_values(i) for i in Invitation.objects.all()}
    assert post(client, invite_only, tokens[1]).status_code == 201
    after = {i.pk: model_values(i) for i in Invitation.objects.all()}
    changed = {pk: {f for f in after[pk] if after[pk][f] != before[pk][f]} for pk in after}
    # Using an invitation flips its flag and nothing else: no id, time or reference is written.
    assert sorted(changed.values(), key=len) == [set(), set(), {"used"}]
    invitation_fields = {f.name for f in Invitation._meta.get_fields()}
    assert invitation_fields == {"id", "survey", "token_hash", "used", "email", "created_hour", "reminders_sent"}
    for model in (Submission, Report):
        assert not [f for f in model._meta.get_fields() if f.related_model is Invitation]
    assert not [f for f in Invitation._meta.get_fields() if f.related_model in (Submission, Report)]
    submission = Submission.objects.get()
    invitation = Invitation.objects.get(used=True)
    assert invitation.created_hour.minute == invitation.created_hour.second == 0
    assert submission.pk != invitation.pk and submission.nonce not in tokens
    # Only a keyed hash is kept: no stored value contains the token.
    assert all(token.encode() not in bytes(i.token_hash) for i in Invitation.objects.all() for token in tokens)
    assert bytes(invitation.token_hash) == invitations.token_hash(tokens[1])


@pytest.mark.django_db(transaction=True)
def test_an_invited_submission_costs_the_same_statements(client, organizer):
    survey = survey_with(organizer, 3)
    survey.invite_only = True
    survey.save()
    tokens = tokens_of(invitations.create_links(survey, "https://murmur.test/s/x/", 2))
    post(client, survey, tokens[0], seed=1)  # warm the caches
    body = body_for(survey, tokens[1], seed=2)
    with CaptureQueriesContext(connection) as queries:
        assert send(client, survey, body).status_code == 201
    statements = [
        q["sql"] for q in queries if not q["sql"].upper().startswith(("SAVEPOINT", "RELEASE", "BEGIN", "COMMIT"))
    ]
    # PostgreSQL: still the one submit statement (it also marks the invitation used); SQLite: one more.
    assert len(statements) == (1 if connection.vendor == "postgresql" else 8), "\n".join(statements)


class TestOrganizerPage:
    def test_links_are_shown_once_and_only_their_hashes_are_kept(self, organizer_client, invite_only):
        url = reverse("invitations", args=[invite_only.pk])
        response = organizer_client.post(url, {"count": 3})
        assert response.status_code == 200
        assert response["Cache-Control"] == "no-store"
        links = re.findall(r"https?://\S+#invite=[\w-]+", response.content.decode())
        assert len(links) == 3
        hashes = {bytes(h) for h in Invitation.objects.values_list("token_hash", flat=True)}
        assert hashes == {invitations.token_hash(link.split("#invite=")[1]) for link in links}
        page = organizer_client.get(url).content.decode()
        assert "#invite=" not in page
        assert "data-count-total>3<" in page

    def test_only_the_owner_reaches_it(self, client, other_organizer, invite_only):
        client.force_login(other_organizer)
        assert client.get(reverse("invitations", args=[invite_only.pk])).status_code == 404
        assert client.post(reverse("invitations", args=[invite_only.pk]), {"count": 3}).status_code == 404
        assert not Invitation.objects.exists()

    def test_a_bad_count_stores_nothing(self, organizer_client, invite_only):
        response = organizer_client.post(reverse("invitations", args=[invite_only.pk]), {"count": 0})
        assert response.status_code == 400
        assert not Invitation.objects.exists()

    def test_mailed_invitations_are_bilingual_and_each_address_is_mailed_once(self, organizer_client, invite_only):
        url = reverse("invitation_emails", args=[invite_only.pk])
        organizer_client.post(url, {"emails": "a@example.com, B@example.com\nc@example.com"})
        organizer_client.post(url, {"emails": "a@example.com\nd@example.com"})
        assert sorted(m.to[0] for m in mail.outbox) == [
            "a@example.com",
            "b@example.com",
            "c@example.com",
            "d@example.com",
        ]
        message = mail.outbox[0]
        assert "설문" in message.body and "survey" in message.body
        assert invite_only.title in message.subject
        token = re.search(r"#invite=([\w-]+)", message.body).group(1)
        assert Invitation.objects.filter(token_hash=invitations.token_hash(token), email=message.to[0]).exists()

    def test_invalid_addresses_are_refused_and_nothing_is_stored(self, organizer_client, invite_only):
        response = organizer_client.post(
            reverse("invitation_emails", args=[invite_only.pk]), {"emails": "a@example.com\nnot-an-address"}
        )
        assert response.status_code == 400
        assert "not-an-address" in response.content.decode()
        assert not Invitation.objects.exists() and not mail.outbox

    def test_reminders_go_only_to_unused_invitations_with_a_new_link(self, client, organizer_client, invite_only):
        organizer_client.post(reverse("invitation_emails", args=[invite_only.pk]), {"emails": "a@x.org\nb@x.org"})
        first = {m.to[0]: re.search(r"#invite=([\w-]+)", m.body).group(1) for m in mail.outbox}
        assert post(client, invite_only, first["a@x.org"]).status_code == 201
        mail.outbox.clear()
        organizer_client.post(reverse("invitation_reminders", args=[invite_only.pk]))
        assert [m.to[0] for m in mail.outbox] == ["b@x.org"]
        fresh = re.search(r"#invite=([\w-]+)", mail.outbox[0].body).group(1)
        assert post(client, invite_only, first["b@x.org"], seed=1).status_code == 403  # the old link is dead
        assert post(client, invite_only, fresh, seed=2).status_code == 201

    def test_addresses_are_forgotten_when_the_survey_closes(self, organizer_client, invite_only):
        organizer_client.post(reverse("invitation_emails", args=[invite_only.pk]), {"emails": "a@x.org"})
        actions.do_close_survey(invite_only)
        assert list(Invitation.objects.values_list("email", flat=True)) == [""]


def test_the_answer_page_says_how_invitations_are_kept(client, invite_only):
    page = client.get(reverse("respond", args=[invite_only.slug])).content.decode()
    assert "data-invite-only" in page
    assert "keeps no link between the invitation and your reports" in page


def test_the_builder_says_what_an_open_link_cannot_prevent(organizer_client, organizer):
    survey = make_open_survey(organizer)
    page = organizer_client.get(survey.get_absolute_url()).content.decode()
    assert "an open link cannot stop one person from answering many times" in page


def model_values(instance):
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


def test_refusals_speak_the_respondents_language(client, invite_only):
    """The refusals are lazy module constants: extracted for translation and translated per request."""
    (token,) = tokens_of(invitations.create_links(invite_only, "https://murmur.test/s/x/", 1))
    assert post(client, invite_only, token).status_code == 201
    korean = {"HTTP_ACCEPT_LANGUAGE": "ko"}
    url = reverse("submit", args=[invite_only.slug])
    used = client.post(url, body_for(invite_only, token, seed=1), content_type="application/json", **korean)
    uninvited = client.post(url, body_for(invite_only, None, seed=2), content_type="application/json", **korean)
    assert "이미 사용되었거나 유효하지 않습니다" in used.json()["error"]
    assert "초대받은 사람만 응답할 수 있습니다" in uninvited.json()["error"]
    assert "초대받은" not in post(client, invite_only, None, seed=3).json()["error"]  # English stays English
