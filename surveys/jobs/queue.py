"""Asking for work: :func:`enqueue` writes a job row and hands it to the transport.

Transports (``JOBS_QUEUE``, docs/settings.md):

- ``rq``: RQ over Redis (django-rq), the default when Murmur has Redis (``REDIS_URL``, or a
  ``redis://`` ``CACHE_URL``). The job's id goes to the ``murmur`` queue once the row is committed;
  ``manage.py run_jobs`` (started by ``make serve``) runs an RQ worker.
- ``db``: the job table is the queue, the default without Redis. ``manage.py run_jobs`` polls it;
  under ``make run`` a thread inside runserver does (:mod:`surveys.jobs.embedded`), so one command
  still serves.
- ``sync``: the job runs at once, in the caller's thread but as a job (the request guard of
  :mod:`surveys.jobs.guard` lets it through). Only for tests and scripts that want the result now.
"""

from __future__ import annotations

from typing import Any

from surveys.jobs import tasks, worker
from surveys.jobs.records import Job


def enqueue(task: str, survey: Any = None, key: str = "", params: dict[str, Any] | None = None) -> Job:
    """The queued or running job of this task and key, or a new one, handed to the transport.

    Idempotent by ``key``: a page reloaded or a form sent twice while a job is under way finds it
    instead of starting a second (an empty key always starts a new job).
    """
    tasks.task(task)  # refuse an unknown task here, not in the worker
    if key:
        live = Job.objects.filter(task=task, key=key, status__in=[Job.Status.QUEUED, Job.Status.RUNNING])
        existing = live.order_by("-pk").first()
        if existing is not None:
            return existing
    job = Job.objects.create(task=task, survey=survey, key=key, params=params or {})
    worker.dispatch(job)
    return job


def latest(survey: Any, task: str, key: str | None = None) -> Job | None:
    """The survey's newest job of this task (and key), in whatever state."""
    jobs = Job.objects.filter(survey=survey, task=task)
    if key is not None:
        jobs = jobs.filter(key=key)
    return jobs.order_by("-pk").first()


def enqueue_once(task: str, key: str, since: Any) -> Job | None:
    """Enqueue unless a job of this task and key was created after ``since`` (the schedule's hourly jobs)."""
    if Job.objects.filter(task=task, key=key, created_at__gte=since).exists():
        return None
    return enqueue(task, key=key)
