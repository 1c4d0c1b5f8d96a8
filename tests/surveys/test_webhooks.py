"""Batched webhooks: one signed summary per batch, none per submission; the documented check refuses
replays and re-signed deliveries; failures are retried with backoff and logged."""

from __future__ import annotations

import json
import re
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from surveys.integrations import Webhook, WebhookDelivery
from surveys.jobs.loop import schedule
from surveys.jobs.records import Job
from surveys.responding.submissions import new_token
from surveys.webhooks import deliver_due, sign
from tests.base import make_open_survey, make_reports
from tests.surveys.test_submit import valid_reports

DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def documented_verify() -> Any:
    """The verification snippet of docs/api.md, run as it is printed there."""
    text = DOCS.read_text(encoding="utf-8")
    (code,) = [block for block in re.findall(r"```python\n(.*?)```", text, re.S) if "def verify" in block]
    namespace: dict[str, Any] = {}
    exec(compile(code, str(DOCS), "exec"), namespace)  # noqa: S102 (our own documentation)
    return namespace["verify"]


class Receiver:
    """A local HTTP receiver that records every request and answers with ``status``."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.status = 200
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.received.append((dict(self.headers.items()), body))
                self.send_response(outer.status)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver(settings):
    settings.WEBHOOK_HTTP_HOSTS = ["127.0.0.1"]  # a local receiver, for tests only
    receiver = Receiver()
    yield receiver
    receiver.close()


@pytest.fixture
def hooked(organizer, receiver):
    survey = make_open_survey(organizer)
    return survey, Webhook.objects.create(survey=survey, url=receiver.url, min_new_reports=20)


@pytest.mark.django_db
def test_one_signed_summary_per_batch_and_none_per_submission(client, hooked, receiver, settings):
    settings.RATE_LIMITS_ENABLED = False
    survey, hook = hooked
    survey.allow_repeat_responses = True
    survey.save(update_fields=["allow_repeat_responses"])
    question = survey.questions.get()
    now = timezone.now().replace(minute=5)
    for seed in range(19):  # each submission through the submit API posts nothing
        body = {"token": new_token(survey), "reports": valid_reports(survey, [1], seed=seed)}
        submitted = client.post(
            reverse("submit", args=[survey.slug]), json.dumps(body), content_type="application/json"
        )
        assert submitted.status_code == 201
    assert receiver.received == []
    assert deliver_due(now) == []  # 19 < 20 new reports
    make_reports(question, [0])
    (delivery,) = deliver_due(now)
    assert delivery.ok and len(receiver.received) == 1
    headers, body = receiver.received[0]
    summary = json.loads(body)
    assert summary["event"] == "estimates.changed" and summary["reports"] == 20
    assert summary["as_of_hour"].endswith(":00:00+00:00")
    assert {row["option"] for row in summary["estimates"]} == {"Good", "Fine", "Bad"}
    # More reports within the same hour wait for the next hour, then go out together.
    make_reports(question, [2] * 30)
    assert deliver_due(now + timedelta(minutes=30)) == []
    assert len(deliver_due(now + timedelta(hours=1))) == 1
    assert json.loads(receiver.received[1][1])["new_reports"] == 30
    # Nothing new: nothing sent, however long it waits.
    assert deliver_due(now + timedelta(hours=5)) == []
    assert len(receiver.received) == 2


@pytest.mark.django_db
def test_the_documented_check_refuses_replays_and_re_signed_deliveries(hooked, receiver):
    survey, hook = hooked
    make_reports(survey.questions.get(), [0, 1, 2] * 7)
    now = timezone.now()
    deliver_due(now)
    headers, body = receiver.received[0]
    verify = documented_verify()
    sent_at = int(headers["Murmur-Timestamp"])
    assert verify(hook.secret, headers, body, now=sent_at + 1)
    assert not verify(hook.secret, headers, body, now=sent_at + 2)  # the same delivery again
    assert not verify(hook.secret, headers, body, now=sent_at + 3600)  # replayed an hour later
    forged = json.dumps({**json.loads(body), "reports": 10**6}).encode()
    resigned = {**headers, "Murmur-Delivery": "x1"}
    resigned["Murmur-Signature"] = sign("whsec_attacker", sent_at, "x1", forged)
    assert not verify(hook.secret, resigned, forged, now=sent_at + 1)  # re-signed with another key
    altered = {**headers, "Murmur-Delivery": "x2"}
    assert not verify(hook.secret, altered, body, now=sent_at + 1)  # another id under the old signature


@pytest.mark.django_db
def test_failures_are_logged_and_retried_with_backoff(hooked, receiver):
    survey, hook = hooked
    make_reports(survey.questions.get(), [0] * 25)
    receiver.status = 500
    now = timezone.now()
    (failed,) = deliver_due(now)
    hook.refresh_from_db()
    assert not failed.ok and failed.status_code == 500 and failed.error == "HTTP 500"
    assert hook.failures == 1 and hook.retry_after == now + timedelta(minutes=2)
    assert deliver_due(now + timedelta(minutes=1)) == []  # not before the backoff
    (again,) = deliver_due(now + timedelta(minutes=3))
    assert again.attempt == 2 and not again.ok
    hook.refresh_from_db()
    assert hook.retry_after == now + timedelta(minutes=3 + 4)
    receiver.status = 204
    (done,) = deliver_due(now + timedelta(minutes=8))
    hook.refresh_from_db()
    assert done.ok and hook.failures == 0 and hook.retry_after is None
    assert WebhookDelivery.objects.filter(webhook=hook).count() == 3
    assert len(receiver.received) == 3


@pytest.mark.django_db
def test_an_unreachable_receiver_is_logged(hooked, receiver):
    survey, hook = hooked
    make_reports(survey.questions.get(), [0] * 25)
    receiver.close()
    call_command("deliver_webhooks")
    delivery = WebhookDelivery.objects.get()
    assert not delivery.ok and delivery.status_code is None and delivery.error


@pytest.mark.django_db
def test_the_page_adds_tests_and_logs_webhooks_for_the_owner_only(
    organizer_client, organizer, other_organizer, receiver, client
):
    survey = make_open_survey(organizer)
    page = reverse("webhooks", args=[survey.pk])
    refused = organizer_client.post(page, {"url": "http://example.com/hook", "min_new_reports": 20})
    assert refused.status_code == 400 and not Webhook.objects.exists()
    added = organizer_client.post(page, {"url": receiver.url, "min_new_reports": 20})
    hook = Webhook.objects.get()
    assert added.status_code == 200 and hook.secret in added.content.decode()
    assert added["Cache-Control"] == "no-store"
    assert hook.secret not in organizer_client.get(page).content.decode()
    organizer_client.post(reverse("webhook_test", args=[survey.pk, hook.pk]))
    assert json.loads(receiver.received[0][1])["event"] == "test"
    log = organizer_client.get(page).content.decode()
    assert 'data-delivery-ok="true"' in log
    hook.refresh_from_db()
    assert hook.sent_hour is None  # a test changes nothing
    client.force_login(other_organizer)
    assert client.get(page).status_code == 404
    assert client.post(reverse("webhook_delete", args=[survey.pk, hook.pk])).status_code == 404
    assert Webhook.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["https://127.0.0.1/hook", "https://10.0.0.8/hook", "https://[::1]/hook"])
def test_no_summary_goes_to_the_servers_own_network(organizer, url):
    survey = make_open_survey(organizer)
    Webhook.objects.create(survey=survey, url=url, min_new_reports=1)
    make_reports(survey.questions.get(), [0])
    (delivery,) = deliver_due()
    assert not delivery.ok and "private address" in delivery.error


@pytest.mark.django_db
def test_the_job_queue_delivers_due_webhooks_on_its_schedule(hooked, receiver):
    survey, hook = hooked
    make_reports(survey.questions.get(), [0, 1, 2] * 7)  # 21 reports: over the threshold of 20
    schedule()  # the worker loop's sweep; tests run jobs at once
    job = Job.objects.get(task="deliver_webhooks")
    assert job.result == {"deliveries": 1, "delivered": 1} and len(receiver.received) == 1
    schedule()  # the same five minutes: not queued again
    assert Job.objects.filter(task="deliver_webhooks").count() == 1 and len(receiver.received) == 1
