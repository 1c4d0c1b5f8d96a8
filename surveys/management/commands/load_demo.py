from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.urls import reverse

from surveys.demo import DEMO_PASSWORD, DEMO_USERNAME, load_demo
from surveys.teams.demo import DEMO_VIEWER, DEMO_WORKSPACE


class Command(BaseCommand):
    help = (
        "Create the demo organizer and its open demo surveys, in English and Korean (once; later runs change nothing)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--base-url", default="", help="printed before the paths, e.g. http://127.0.0.1:8000 (default: paths only)"
        )

    def handle(self, *args: Any, base_url: str, **options: Any) -> None:
        base_url = base_url.rstrip("/")
        for survey, created in load_demo():
            verb = "Created" if created else "Found"
            self.stdout.write(f"{verb} demo survey “{survey.title}”, share link: {base_url}{survey.get_share_url()}")
        self.stdout.write(
            f"Demo organizer: log in at {base_url}{reverse('login')} as {DEMO_USERNAME} / {DEMO_PASSWORD}"
        )
        self.stdout.write(
            f"Its workspace “{DEMO_WORKSPACE}” has a second member, a viewer: {DEMO_VIEWER} / {DEMO_PASSWORD}"
        )
