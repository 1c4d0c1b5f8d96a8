from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from surveys.demo import DEMO_PASSWORD, DEMO_USERNAME, load_demo


class Command(BaseCommand):
    help = "Create the demo organizer and an open demo survey (once; later runs change nothing)."

    def handle(self, *args: Any, **options: Any) -> None:
        survey, created = load_demo()
        verb = "Created" if created else "Found"
        self.stdout.write(f"{verb} demo survey “{survey.title}”: log in as {DEMO_USERNAME} / {DEMO_PASSWORD}.")
        self.stdout.write(f"Share link: {survey.get_share_url()}")
