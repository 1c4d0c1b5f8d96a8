from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SurveysConfig(AppConfig):
    name = "surveys"
    verbose_name = _("Surveys")

    def ready(self) -> None:
        # Connects the mail language to django.contrib.auth's signals; registers the deployment
        # checks. (Login throttling is django-axes', connected by its own app.)
        from surveys import accounts, checks  # noqa: F401
        from surveys.teams import audit

        audit.connect()
        from surveys import access

        access.connect()  # the results pages' cached access entries follow surveys and memberships
        from surveys.results import stamps

        stamps.connect()  # results pages' ETags follow every change to a survey's questions
        from surveys.jobs import embedded

        # Under `make run`: a job worker thread inside runserver (surveys/jobs/embedded.py).
        embedded.start()
