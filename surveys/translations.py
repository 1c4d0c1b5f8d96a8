"""A survey's languages and its organizer-written strings in each of them.

One survey, several languages (LimeSurvey's and Formbricks' multilingual surveys): the survey is
written in its *base* language and offered in others, whose strings the organizer translates in the
builder (:mod:`surveys.languages` lists them, checks them and applies them). Translations change
only what respondents read: every language shares the questions' one randomization and one tally,
so estimates pool everyone, and the language a respondent read is never stored with their reports.

A translation is keyed stably by what it translates (``survey:title``, ``q:<id>:text``,
``q:<id>:option:<index>``, ``m:<id>:title`` ...) and keeps the SHA-256 of the base text it was made
from, so editing the base text marks it outdated.
"""

from __future__ import annotations

import hashlib

from django.db import models
from django.utils.translation import gettext_lazy as _


def source_hash(text: str) -> str:
    """The SHA-256 (hex) of a base-language text: a translation made from it keeps it."""
    return hashlib.sha256(text.encode()).hexdigest()


class SurveyLanguage(models.Model):
    """A language a survey is offered in; exactly one per multilingual survey is its base.

    A survey without rows is written in one language and shows no language switcher."""

    survey = models.ForeignKey("surveys.Survey", on_delete=models.CASCADE, related_name="languages")
    code = models.CharField(_("language"), max_length=15)
    is_base = models.BooleanField(_("base language"), default=False)

    class Meta:
        ordering = ["-is_base", "code"]
        constraints = [
            models.UniqueConstraint(fields=["survey", "code"], name="one_row_per_survey_language"),
            models.UniqueConstraint(
                fields=["survey"], condition=models.Q(is_base=True), name="one_base_language_per_survey"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.survey_id}:{self.code}{' (base)' if self.is_base else ''}"


class Translation(models.Model):
    """One organizer-written string of a survey in one of its languages (never its base)."""

    survey = models.ForeignKey("surveys.Survey", on_delete=models.CASCADE, related_name="translations")
    language = models.CharField(max_length=15)
    key = models.CharField(max_length=64)
    text = models.TextField()
    source_hash = models.CharField(max_length=64)
    """:func:`source_hash` of the base text when this was saved: another hash now means outdated."""

    class Meta:
        ordering = ["survey", "language", "key"]
        constraints = [
            models.UniqueConstraint(fields=["survey", "language", "key"], name="one_translation_per_key"),
        ]

    def __str__(self) -> str:
        return f"{self.survey_id}:{self.language}:{self.key}"
