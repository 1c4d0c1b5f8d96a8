"""Open the due rounds of every weekly or monthly recurring survey.

Rounds also open lazily, when anyone visits one of the series' pages after the due time
(:mod:`surveys.series.rounds`); run this hourly from cron so that a round opens on time even when nobody
visits, e.g. ``0 * * * * cd /srv/murmur && .venv/bin/python manage.py open_due_rounds``.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from surveys.series.rounds import open_due_rounds


class Command(BaseCommand):
    help = "Open the next round of every recurring survey whose schedule says it is due."

    def handle(self, *args: Any, **options: Any) -> None:
        opened = open_due_rounds()
        for survey in opened:
            self.stdout.write(f"Opened round {survey.round_number} of survey {survey.pk}.")
        if not opened:
            self.stdout.write("No round was due.")
