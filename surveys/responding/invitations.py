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
from typing import Any

from django.conf import settings
from django.core.mail import send_mass_mail
from django.db import transaction
from django.db.models import Count, Q
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.crypto import salted_hmac

from surveys.jobs import guard, queue
from surveys.jobs.records import Job
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
    """Make one invitation per new address and have a job mail each its link; how many were made.

    Addresses already invited to this survey are skipped, so pasting a list twice mails nobody
    twice. The invitations are stored at once with a hash no token has (their links do not exist
    yet); the job (:func:`run_invitation_mail`) mints each link and mails it.
    """
    known = set(survey.invitations.exclude(email="").values_list("email", flat=True))
    fresh = sorted({e.strip().lower() for e in emails} - {k.lower() for k in known} - {""})
    made = Invitation.objects.bulk_create(
        Invitation(survey=survey, token_hash=token_hash(new_token()), email=email) for email in fresh
    )
    mail_links(survey, share_url, [invitation.pk for invitation in made], reminder=False)
    return len(made)


def remind_unused(survey: Survey, share_url: str) -> int:
    """Have a job mail a fresh link to every unused invitation that has an address; how many."""
    unused = list(survey.invitations.filter(used=False).exclude(email="").values_list("pk", flat=True))
    mail_links(survey, share_url, unused, reminder=True)
    return len(unused)


def mail_links(survey: Survey, share_url: str, invitations: list[int], reminder: bool) -> None:
    """Queue the job that mints and mails these invitations' links (no token is in its parameters)."""
    if invitations:
        params = {"share_url": share_url, "invitations": invitations, "reminder": reminder}
        queue.enqueue("invitation_mail", survey, params=params)


def run_invitation_mail(job: Job, progress: Any) -> dict[str, int]:
    """The ``invitation_mail`` task: per invitation, a fresh token, its hash stored and its link mailed.

    Each invitation is one transaction: the new hash commits only if the mail server took the mail,
    so a failure leaves the earlier link working. Progress counts the invitations done, and a
    retried job starts after them; a worker killed between a mail and its progress mails that one
    address again, with a new link (the earlier one then stops working), and nobody else.
    """
    guard.off_request_path("Invitation mail")
    survey, params = job.survey, job.params
    assert survey is not None
    ids: list[int] = params["invitations"]
    mailed = 0
    for index in range(job.done, len(ids)):
        with transaction.atomic():
            invitation = (
                Invitation.objects.select_for_update().filter(pk=ids[index], used=False).exclude(email="").first()
            )
            if invitation is not None:
                token = new_token()
                invitation.token_hash = token_hash(token)
                invitation.reminders_sent += int(params["reminder"])
                invitation.save(update_fields=["token_hash", "reminders_sent"])
                link = NewLink(invitation_url(params["share_url"], token), invitation.email)
                send_invitations(survey, [link], reminder=params["reminder"])
                mailed += 1
        progress(index + 1, len(ids), force=True)
    return {"mailed": mailed}


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
