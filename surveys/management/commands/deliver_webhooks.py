"""Post the batched webhook summaries that are due (:func:`surveys.webhooks.deliver_due`).

Run it every few minutes from cron or the job queue, e.g.
``*/5 * * * * cd /srv/murmur && .venv/bin/python manage.py deliver_webhooks``: a webhook still gets
at most one summary an hour, and only after its threshold of new reports.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from surveys.webhooks import deliver_due


class Command(BaseCommand):
    help = "Post each webhook's signed summary of changed estimates, where one is due."

    def handle(self, *args: Any, **options: Any) -> None:
        made = deliver_due()
        for delivery in made:
            outcome = "delivered" if delivery.ok else f"failed ({delivery.error})"
            self.stdout.write(f"Webhook {delivery.webhook_id}: {outcome}.")
        if not made:
            self.stdout.write("No webhook was due.")
