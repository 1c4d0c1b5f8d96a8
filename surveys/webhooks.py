"""Batched webhooks: a signed summary of a survey's estimates, posted when they changed, at most once
an hour and only after a threshold of new reports; never once per submission.

A submission's own time is blurred to the hour everywhere Murmur stores it (``Submission.received_hour``);
a call per submission would hand the receiver the very arrival times that blurring hides. So
:func:`deliver_due` sends a summary only when (1) the survey's tallies changed since the last summary
(their signature, :attr:`surveys.results.estimates.SurveyState.signature`), (2) at least
``Webhook.min_new_reports`` reports arrived since, and (3) the last summary went out in an earlier
clock hour. It runs from ``manage.py deliver_webhooks`` (cron or the job queue, every few minutes);
nothing in the submission path calls it.

Each delivery is signed like Stripe's and GitHub's: the headers ``Murmur-Timestamp`` (Unix seconds),
``Murmur-Delivery`` (a random id) and ``Murmur-Signature: v1=<hex>``, where the hex is
HMAC-SHA256 (RFC 2104) keyed by the webhook's secret over ``"<timestamp>.<delivery>." + body``.
A receiver refuses a timestamp more than five minutes off and a delivery id it has seen (a replay),
and any signature but the one its secret makes (an altered or re-signed body): docs/api.md has the
snippet. A failed delivery (no answer, or not 2xx) is logged and retried after 2, 4, 8, ... minutes,
at most a day apart.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import math
import secrets
import socket
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.utils import timezone

from surveys.integrations import Webhook, WebhookDelivery
from surveys.results.estimates import SurveyState
from surveys.results.exports import estimate_rows

#: A receiver posted to gets this long to answer.
TIMEOUT_SECONDS = 10
#: The longest wait between retries.
MAX_BACKOFF = timedelta(days=1)

Post = Callable[[str, bytes, dict[str, str]], int]


def sign(secret: str, timestamp: int, delivery: str, body: bytes) -> str:
    """``v1=`` and HMAC-SHA256 of ``"<timestamp>.<delivery>." + body`` keyed by the secret, in hex.

    >>> sign("whsec_test", 1700000000, "d1", b"{}")[:11]
    'v1=76df35ac'
    """
    message = f"{timestamp}.{delivery}.".encode() + body
    return "v1=" + hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


class PrivateAddress(OSError):
    """The webhook's host resolves to an address inside a private network."""


def check_public(url: str) -> None:
    """Refuse a host that resolves to a loopback, private, link-local or otherwise non-global address,
    so that a webhook cannot make the server probe its own network (server-side request forgery).
    ``settings.WEBHOOK_HTTP_HOSTS`` (tests' local receivers) are let through."""
    host = urlsplit(url).hostname or ""
    if host in getattr(settings, "WEBHOOK_HTTP_HOSTS", ()):
        return
    for *_, address in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP):
        if not ipaddress.ip_address(address[0]).is_global:
            raise PrivateAddress(f"{host} resolves to a private address; give a public one")


def http_post(url: str, body: bytes, headers: dict[str, str]) -> int:
    """POST the body; the status code (an HTTP error's too). Network failures raise OSError."""
    check_public(url)
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")  # noqa: S310 (https only, by the form)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:  # noqa: S310
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def finite(value: Any) -> Any:
    """JSON has no NaN or infinity: they become null, recursively."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    if hasattr(value, "item"):  # a numpy scalar
        return finite(value.item())
    return value


def hour_of(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)


def summary(webhook: Webhook, state: SurveyState, now: datetime, test: bool) -> dict[str, Any]:
    """What a delivery posts: the survey's report count, tally signature and the results page's estimates."""
    survey = webhook.survey
    return {
        "event": "test" if test else "estimates.changed",
        "survey_id": survey.pk,
        "survey": survey.title,
        "round": survey.round_number,
        "as_of_hour": hour_of(now).isoformat(),
        "reports": state.reports,
        "new_reports": state.reports - webhook.sent_reports,
        "signature": state.signature,
        "level": 0.95,
        "estimates": [finite(row) for row in estimate_rows(survey)],
    }


def is_due(webhook: Webhook, state: SurveyState, now: datetime) -> bool:
    """Changed estimates, enough new reports, no summary yet this hour, and no retry pending."""
    if not webhook.active or (webhook.retry_after is not None and now < webhook.retry_after):
        return False
    if state.signature == webhook.sent_signature:
        return False
    if state.reports - webhook.sent_reports < webhook.min_new_reports:
        return False
    return webhook.sent_hour is None or hour_of(now) > webhook.sent_hour


def deliver(
    webhook: Webhook, now: datetime | None = None, post: Post | None = None, test: bool = False
) -> WebhookDelivery:
    """Post one signed summary now and log it; a real one (not ``test``) moves the webhook's state."""
    now = now or timezone.now()
    state = SurveyState.read(webhook.survey)
    body = json.dumps(summary(webhook, state, now, test), separators=(",", ":"), allow_nan=False).encode()
    delivery_id, timestamp = secrets.token_hex(16), int(now.timestamp())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "Murmur-Webhooks/1",
        "Murmur-Timestamp": str(timestamp),
        "Murmur-Delivery": delivery_id,
        "Murmur-Signature": sign(webhook.secret, timestamp, delivery_id, body),
    }
    status: int | None = None
    try:
        status = (post or http_post)(webhook.url, body, headers)
        ok, error = 200 <= status < 300, "" if 200 <= status < 300 else f"HTTP {status}"
    except OSError as failure:
        ok, error = False, (str(failure) or type(failure).__name__)[:300]
    delivery = WebhookDelivery.objects.create(
        webhook=webhook,
        delivery_id=delivery_id,
        hour=hour_of(now),
        test=test,
        reports=state.reports,
        attempt=webhook.failures + 1,
        status_code=status,
        ok=ok,
        error=error,
    )
    if test:
        return delivery
    if ok:
        webhook.sent_reports, webhook.sent_signature, webhook.sent_hour = state.reports, state.signature, hour_of(now)
        webhook.failures, webhook.retry_after = 0, None
    else:
        webhook.failures = min(webhook.failures + 1, 30)
        webhook.retry_after = now + min(timedelta(minutes=2**webhook.failures), MAX_BACKOFF)
    webhook.save(update_fields=["sent_reports", "sent_signature", "sent_hour", "failures", "retry_after"])
    return delivery


def deliver_due(now: datetime | None = None, post: Post | None = None) -> list[WebhookDelivery]:
    """Deliver every active webhook that :func:`is_due`; the deliveries made."""
    now = now or timezone.now()
    made = []
    for webhook in Webhook.objects.filter(active=True).select_related("survey"):
        if is_due(webhook, SurveyState.read(webhook.survey), now):
            made.append(deliver(webhook, now, post))
    return made


def run_deliver_webhooks(job: Any, progress: Any) -> dict[str, int]:
    """The job queue's task, every few minutes (:func:`surveys.jobs.loop.schedule`): :func:`deliver_due`."""
    made = deliver_due()
    return {"deliveries": len(made), "delivered": sum(delivery.ok for delivery in made)}
