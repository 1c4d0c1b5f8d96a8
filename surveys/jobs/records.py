"""The job table: what a worker is to do, how far it got, and what came of it.

Nothing here orders or links reports: a job's times say when an organizer asked for an export or
when a round opened, never when a report arrived.
"""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class Job(models.Model):
    """One piece of work for a worker (:mod:`surveys.jobs.worker`), retried until it succeeds or
    has failed :data:`surveys.jobs.worker.MAX_ATTEMPTS` times.

    ``key`` makes enqueueing idempotent: while a job with the same task and key is queued or
    running, asking again returns it instead of adding a second (:func:`surveys.jobs.queue.enqueue`).
    ``done`` and ``total`` are its progress; ``heartbeat_at`` moves while it runs, so a job whose
    worker was killed is seen as stale and queued again (:func:`surveys.jobs.worker.requeue_stale`).
    """

    class Status(models.TextChoices):
        QUEUED = "queued", _("waiting")
        RUNNING = "running", _("running")
        DONE = "done", _("done")
        FAILED = "failed", _("failed")

    survey = models.ForeignKey("surveys.Survey", on_delete=models.CASCADE, null=True, blank=True, related_name="jobs")
    task = models.CharField(max_length=40)
    key = models.CharField(max_length=200, blank=True)
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveSmallIntegerField(default=0)
    done = models.BigIntegerField(default=0)
    total = models.BigIntegerField(null=True, blank=True)
    result = models.JSONField(default=dict, blank=True)
    file = models.FileField(upload_to="exports/", max_length=300, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["status", "heartbeat_at"], name="job_status_heartbeat"),
            models.Index(fields=["task", "key", "status"], name="job_task_key_status"),
            models.Index(fields=["survey", "task", "-created_at"], name="job_survey_task_created"),
        ]

    def __str__(self) -> str:
        return f"{self.task} job {self.pk} ({self.status})"

    @property
    def live(self) -> bool:
        """Queued or running: its result is yet to come."""
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)

    @property
    def percent(self) -> int | None:
        """Progress in whole percent, when the job knows its total."""
        if not self.total:
            return None
        return min(100, int(100 * self.done / self.total))
