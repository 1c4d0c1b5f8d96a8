"""Stored pair counts of post-hoc cross-tabs: closed hours' totals, open hours' counts, and the ledger.

For two choice questions' randomizations a and b (``first`` the lower id), the table
T = sum over submissions that answered both of c_a c_b^T (``ldp.crosstab.PairTally``; c a report's
own tally counts, :func:`ldp.crosstab.report_counts`) is kept as cells ``i * size_b + j`` and its n
in :data:`N_CELL`. :class:`PairCount` holds the sum over every closed hour folded so far, each hour
added exactly once: its :class:`PairHour` row commits in the same transaction as its counts.
:class:`OpenPairCount` holds the hours not closed yet, recounted by each run of the job
(:mod:`surveys.results.pair_counts`). A reader sums the two: O(cells), whatever the number of reports.
Like the reports, nothing here is finer than the hour.
"""

from __future__ import annotations

from django.db import models

#: The cell holding n, the submissions that answered both questions.
N_CELL = -1


class PairCount(models.Model):
    """One cell of a pair's table, summed over the survey's folded (closed) hours."""

    survey = models.ForeignKey("surveys.Survey", on_delete=models.CASCADE, related_name="+")
    first = models.ForeignKey("surveys.Randomization", on_delete=models.CASCADE, related_name="+")
    second = models.ForeignKey("surveys.Randomization", on_delete=models.CASCADE, related_name="+")
    cell = models.IntegerField()
    count = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["first", "second", "cell"], name="one_pair_count_per_cell")]

    def __str__(self) -> str:
        return f"{self.first_id} x {self.second_id} [{self.cell}]: {self.count}"


class OpenPairCount(models.Model):
    """One cell of a pair's table for one hour not closed yet (replaced at each count)."""

    survey = models.ForeignKey("surveys.Survey", on_delete=models.CASCADE, related_name="+")
    hour = models.DateTimeField()
    first = models.ForeignKey("surveys.Randomization", on_delete=models.CASCADE, related_name="+")
    second = models.ForeignKey("surveys.Randomization", on_delete=models.CASCADE, related_name="+")
    cell = models.IntegerField()
    count = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["first", "second", "hour", "cell"], name="one_open_pair_count_per_cell")
        ]
        indexes = [models.Index(fields=["survey", "hour"], name="open_pair_count_survey_hour")]

    def __str__(self) -> str:
        return f"{self.first_id} x {self.second_id} @ {self.hour} [{self.cell}]: {self.count}"


class PairHour(models.Model):
    """A closed hour of a survey whose pairs are in :class:`PairCount`, and how many submissions it had."""

    survey = models.ForeignKey("surveys.Survey", on_delete=models.CASCADE, related_name="+")
    hour = models.DateTimeField()
    submissions = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["survey", "hour"], name="one_pair_hour_per_survey_hour")]

    def __str__(self) -> str:
        return f"{self.survey_id} @ {self.hour}: {self.submissions}"
