"""Single-use invitation links: made, mailed, reminded, and used without becoming identities.

An invitation link is the survey's share link with a random token in its *fragment*
(``/s/<slug>/#invite=<token>``): browsers never send a fragment to the server, so the token appears
in no access log. The answer page's script reads it and sends it with the submission, whose write
(``surveys.responding.writes``) marks the invitation used in the same statement that stores the reports. The
server keeps only ``token_hash(token)`` — an HMAC keyed by the site's secret — and a used flag: a
database leak reveals no working link, and nothing ties an invitation to the submission it made.

A reminder cannot resend a link whose token is not kept: it mints a fresh token for the same
invitation (the earlier link stops working) and mails that.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import send_mass_mail
from django.db import transaction
from django.db.models import Count, Q
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.crypto import salted_hmac

from surveys.models import Invitation, Survey

HASH_SALT = "murmur.invitation"
#: A token is 16 random bytes (128 bits), URL-safe: 22 characters.
TOKEN_BYTES = 16
#: A fragment parameter, so that the token never reaches the server in a URL.
FRAGMENT = "invite"
MAX_PER_REQUEST = 5000


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_hash(token: str) -> bytes:
    """HMAC-SHA256 of the token keyed by SECRET_KEY (Django's ``salted_hmac``), 32 bytes."""
    return salted_hmac(HASH_SALT, token, algorithm="sha256").digest()


def invitation_url(share_url: str, token: str) -> str:
    """The share link with the token in its fragment (``#invite=…``)."""
    return f"{share_url}#{FRAGMENT}={token}"


@dataclass(frozen=True)
class NewLink:
    """A freshly made invitation and its link, which exists only in this response or mail."""

    url: str
    email: str = ""


def create_links(survey: Survey, share_url: str, count: int) -> list[NewLink]:
    """Make ``count`` invitations without addresses; their links are shown once and never again."""
    tokens = [new_token() for _ in range(count)]
    Invitation.objects.bulk_create(Invitation(survey=survey, token_hash=token_hash(t)) for t in tokens)
    return [NewLink(invitation_url(share_url, t)) for t in tokens]


def invite_addresses(survey: Survey, share_url: str, emails: Iterable[str]) -> int:
    """Make one invitation per new address and mail each its link; how many were mailed.

    Addresses already invited to this survey are skipped, so pasting a list twice mails nobody
    twice. The invitations and the mails go together: if sending fails, nothing is stored.
    """
    known = set(survey.invitations.exclude(email="").values_list("email", flat=True))
    fresh = sorted({e.strip().lower() for e in emails} - {k.lower() for k in known} - {""})
    tokens = {email: new_token() for email in fresh}
    links = [NewLink(invitation_url(share_url, token), email) for email, token in tokens.items()]
    with transaction.atomic():
        Invitation.objects.bulk_create(
            Invitation(survey=survey, token_hash=token_hash(token), email=email) for email, token in tokens.items()
        )
        send_invitations(survey, links, reminder=False)
    return len(links)


def remind_unused(survey: Survey, share_url: str) -> int:
    """Mail a fresh link to every unused invitation that has an address; how many were mailed."""
    with transaction.atomic():
        unused = list(survey.invitations.select_for_update().filter(used=False).exclude(email=""))
        links = []
        for invitation in unused:
            token = new_token()
            invitation.token_hash = token_hash(token)
            invitation.reminders_sent += 1
            links.append(NewLink(invitation_url(share_url, token), invitation.email))
        Invitation.objects.bulk_update(unused, ["token_hash", "reminders_sent"])
        send_invitations(survey, links, reminder=True)
    return len(links)


def forget_addresses(survey: Survey) -> int:
    """Blank every invitation's address (``do_close_survey``: after closing, no more reminders)."""
    return survey.invitations.exclude(email="").update(email="")


def send_invitations(survey: Survey, links: list[NewLink], reminder: bool) -> None:
    """One mail per link, in Korean and English (a respondent's language is not known)."""
    messages = []
    for link in links:
        context = {"survey": survey, "url": link.url, "reminder": reminder}
        subjects, bodies = [], []
        for language in ("ko", "en"):
            with translation.override(language):
                subjects.append(render_to_string("surveys/email/invitation_subject.txt", context).strip())
                bodies.append(render_to_string("surveys/email/invitation_body.txt", context).strip())
        messages.append((" / ".join(subjects), "\n\n----\n\n".join(bodies), settings.DEFAULT_FROM_EMAIL, [link.email]))
    if messages:
        send_mass_mail(messages, fail_silently=False)


def counts(survey: Survey) -> dict[str, int]:
    """How many invitations there are, used and unused, and how many still have an address."""
    totals = survey.invitations.aggregate(
        total=Count("pk"),
        used=Count("pk", filter=Q(used=True)),
        with_email=Count("pk", filter=~Q(email="")),
    )
    return {**totals, "unused": totals["total"] - totals["used"]}
