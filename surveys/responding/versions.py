"""Each survey's version: a counter every submission adds 1 to, read in O(1) for 304s and polls.

Kept like the hourly counter: (survey, shard) rows, a submission adding 1 to one shard drawn at
random in its own statement (``surveys.responding.writes.SUBMIT_SQL``), so concurrent respondents
rarely wait on the same row; a reader sums at most ``TALLY_SHARDS`` rows by the primary key's
index, whatever the number of reports or questions. Tallies change only with submissions, so the
version changes exactly when some number on a results page can (the pages' ETags add the words).
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import Sum


class SurveyVersion(models.Model):
    """One shard of a survey's submission counter (its version is the sum over shards)."""

    survey = models.ForeignKey("surveys.Survey", on_delete=models.CASCADE, related_name="version_shards")
    shard = models.PositiveSmallIntegerField(default=0)
    count = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["survey", "shard"], name="one_version_per_survey_shard")]

    def __str__(self) -> str:
        return f"{self.survey_id} [{self.shard}]: {self.count}"


def survey_version(survey: Any) -> int:
    """The survey's version: submissions stored (by every path that adds to its tallies)."""
    return version_of(survey.pk)


def version_of(survey_id: int) -> int:
    """:func:`survey_version` of the survey with this id."""
    total = SurveyVersion.objects.filter(survey_id=survey_id).aggregate(total=Sum("count"))["total"]
    return int(total or 0)
