"""What organizers connect other tools with: personal access tokens for the organizer API
(:mod:`surveys.api`) and batched webhooks (:mod:`surveys.webhooks`).

A token is shown once, when it is made; only a keyed hash of it is stored (HMAC-SHA256 keyed by
``SECRET_KEY``, as invitation tokens are: ``surveys.responding.invitations.token_hash``), with
a short prefix that lets its owner tell tokens apart. A revoked token is refused from the next
request on: every request looks its hash up again.

A webhook's signing secret must be known to sign, so it is stored as it is, like any HMAC key
that both sides hold (GitHub's and Stripe's webhooks do the same), and shown to its owner once.
Delivery times are kept to the hour, like every other time near the reports.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext_lazy as _

#: A token is "mur_" and 32 random bytes, URL-safe (43 characters): 256 bits, never guessed.
TOKEN_PREFIX = "mur_"
TOKEN_BYTES = 32
HASH_SALT = "murmur.apitoken"


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)


def token_hash(token: str) -> bytes:
    """HMAC-SHA256 of the token keyed by SECRET_KEY, 32 bytes: what the database keeps."""
    return salted_hmac(HASH_SALT, token, algorithm="sha256").digest()


def new_webhook_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(32)


class ApiToken(models.Model):
    """A personal access token of one organizer: it acts as them, within its scope."""

    class Scope(models.TextChoices):
        READ = "read", _("Read: surveys, results and exports")
        WRITE = "write", _("Read and write: also build, open, close and invite")

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(_("name"), max_length=100)
    scope = models.CharField(_("scope"), max_length=10, choices=Scope.choices, default=Scope.READ)
    prefix = models.CharField(max_length=12, editable=False)
    """The token's first characters, shown so that its owner can tell it from the others."""
    token_hash = models.BinaryField(max_length=32, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_on = models.DateField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def may_write(self) -> bool:
        return self.scope == self.Scope.WRITE


class Webhook(models.Model):
    """An HTTPS address that receives a signed summary of a survey's estimates, in batches.

    A summary is posted when the estimates changed, at least ``min_new_reports`` reports arrived
    since the last one, and an hour has passed since it (:func:`surveys.webhooks.deliver_due`): never
    once per submission, whose arrival times Murmur blurs to the hour.
    """

    survey = models.ForeignKey("surveys.Survey", on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(_("address (HTTPS)"), max_length=500)
    secret = models.CharField(max_length=64, default=new_webhook_secret, editable=False)
    min_new_reports = models.PositiveIntegerField(
        _("new reports per summary"),
        default=20,
        help_text=_("A summary is sent only after at least this many new reports, and at most once an hour."),
    )
    active = models.BooleanField(_("active"), default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_reports = models.PositiveIntegerField(default=0, editable=False)
    """Reports the last delivered summary counted."""
    sent_signature = models.CharField(max_length=32, blank=True, editable=False)
    """The survey's tally signature the last delivered summary described."""
    sent_hour = models.DateTimeField(null=True, blank=True, editable=False)
    """The hour the last summary was delivered in."""
    failures = models.PositiveSmallIntegerField(default=0, editable=False)
    """Failed attempts in a row; the next waits 2^failures minutes (at most a day)."""
    retry_after = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"webhook of {self.survey_id} to {self.url}"


class WebhookDelivery(models.Model):
    """One attempt to post to a webhook: what was sent and what came back (the log)."""

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    delivery_id = models.CharField(max_length=40)
    hour = models.DateTimeField()
    test = models.BooleanField(default=False)
    reports = models.PositiveIntegerField(default=0)
    attempt = models.PositiveSmallIntegerField(default=1)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    ok = models.BooleanField(default=False)
    error = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["-hour", "-id"]

    def __str__(self) -> str:
        return f"delivery {self.delivery_id} ({'ok' if self.ok else 'failed'})"
