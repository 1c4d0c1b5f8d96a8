"""Running jobs: claim one, run its task, record the outcome; queue again what a dead worker left.

A job is claimed by one conditional ``UPDATE`` (queued, or running with a stale heartbeat, to
running): two workers never run the same attempt. A task reports progress through
:class:`Progress`, which also moves the heartbeat. If the worker is killed mid-run the row stays
``running`` with an old heartbeat; :func:`requeue_stale` (the worker loop's sweep, every
:data:`SWEEP_SECONDS`) queues it again, and the next attempt starts from the beginning. Tasks are
written so that a repeat changes nothing twice (each says how: an export rewrites its own file;
an hour's pair counts and its "done" mark commit together; mail marks each invitation as it is
sent), so a retried job neither loses nor doubles anything.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import traceback
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from surveys.jobs import guard, tasks
from surveys.jobs.records import Job

log = logging.getLogger(__name__)

#: Attempts before a job is marked failed (a killed worker's attempt counts).
MAX_ATTEMPTS = 3
#: The RQ queue Murmur's jobs go to.
RQ_QUEUE = "murmur"


def stale_before() -> Any:
    """Running jobs whose heartbeat is older than this lost their worker."""
    return timezone.now() - timedelta(seconds=settings.JOBS_STALE_SECONDS)


class Progress:
    """A running job's progress, written at most once a second (and always at the end)."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self._written = 0.0

    def __call__(self, done: int, total: int | None = None, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._written < 1.0:
            return
        self._written = now
        self.job.done, self.job.total = done, total
        Job.objects.filter(pk=self.job.pk).update(done=done, total=total, heartbeat_at=timezone.now())


def claim(job_id: int) -> Job | None:
    """Mark the job running for this worker; None if it is done, failed or running elsewhere."""
    now = timezone.now()
    claimable = Q(status=Job.Status.QUEUED) | Q(status=Job.Status.RUNNING, heartbeat_at__lt=stale_before())
    taken = Job.objects.filter(claimable, pk=job_id).update(
        status=Job.Status.RUNNING, attempts=F("attempts") + 1, heartbeat_at=now
    )
    return Job.objects.get(pk=job_id) if taken else None


@contextlib.contextmanager
def beating(job_id: int) -> Iterator[None]:
    """While the block runs, a thread moves the job's heartbeat every quarter of ``JOBS_STALE_SECONDS``,
    so a long step that reports no progress (a big query) is not taken for a dead worker."""
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(settings.JOBS_STALE_SECONDS / 4):
                Job.objects.filter(pk=job_id, status=Job.Status.RUNNING).update(heartbeat_at=timezone.now())
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=beat, name=f"murmur-job-{job_id}-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def run(job_id: int) -> str:
    """Run one job if it can be claimed; its final status (or "skipped")."""
    job = claim(job_id)
    if job is None:
        return "skipped"
    function = tasks.task(job.task)
    try:
        with guard.in_job(), beating(job.pk):
            result = function(job, Progress(job))
    except Exception:
        log.exception("job %s (%s) failed on attempt %s", job.pk, job.task, job.attempts)
        failed = job.attempts >= MAX_ATTEMPTS
        Job.objects.filter(pk=job.pk).update(
            status=Job.Status.FAILED if failed else Job.Status.QUEUED,
            error=traceback.format_exc(limit=5)[-4000:],
            finished_at=timezone.now() if failed else None,
        )
        if not failed and settings.JOBS_QUEUE != "sync":  # a synchronous caller sees the failure now
            dispatch(Job.objects.get(pk=job.pk))
        return str(Job.Status.FAILED if failed else Job.Status.QUEUED)
    finished: dict[str, Any] = {"status": Job.Status.DONE, "result": result or {}, "finished_at": timezone.now()}
    if job.file:
        finished["file"] = job.file.name
    if job.expires_at:
        finished["expires_at"] = job.expires_at
    Job.objects.filter(pk=job.pk).update(**finished, error="")
    return str(Job.Status.DONE)


def requeue_stale() -> int:
    """Queue again the running jobs whose worker stopped beating (killed, or its machine gone)."""
    stale = list(
        Job.objects.filter(status=Job.Status.RUNNING, heartbeat_at__lt=stale_before()).values_list("pk", flat=True)
    )
    requeued = Job.objects.filter(pk__in=stale, status=Job.Status.RUNNING, heartbeat_at__lt=stale_before())
    count = requeued.update(status=Job.Status.QUEUED)
    if count and settings.JOBS_QUEUE == "rq":
        for pk in stale:
            rq_enqueue(pk)
    return count


def next_queued() -> int | None:
    """The oldest queued job's id (the ``db`` transport)."""
    return Job.objects.filter(status=Job.Status.QUEUED).order_by("pk").values_list("pk", flat=True).first()


def run_pending(limit: int = 1000) -> int:
    """Run queued jobs until none is left (tests, and the ``db`` worker); how many ran."""
    ran = 0
    while ran < limit and (job_id := next_queued()) is not None:
        run(job_id)
        ran += 1
    return ran


def dispatch(job: Job) -> None:
    """Tell the transport that ``job`` (committed, or about to be) waits for a worker."""
    mode = settings.JOBS_QUEUE
    if mode == "sync":
        run(job.pk)
        job.refresh_from_db()
    elif mode == "rq":
        transaction.on_commit(lambda: rq_enqueue(job.pk))
    # "db": the worker polls the table; nothing to do.


def rq_enqueue(job_id: int) -> None:
    """Put a job's id on the RQ queue; the worker reads everything else from its row."""
    import django_rq

    queue = django_rq.get_queue(RQ_QUEUE)
    queue.enqueue("surveys.jobs.worker.run", job_id, job_id=f"murmur-job-{job_id}-{_attempt_suffix(job_id)}")


def _attempt_suffix(job_id: int) -> int:
    """The job's attempts so far: a requeued job gets a fresh RQ id (RQ refuses to re-add a finished one)."""
    return Job.objects.filter(pk=job_id).values_list("attempts", flat=True).first() or 0
