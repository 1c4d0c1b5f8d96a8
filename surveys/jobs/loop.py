"""The worker loop of the ``db`` transport, and the housekeeping every worker does.

Every :data:`SWEEP_SECONDS` a worker queues again the jobs whose worker died
(:func:`surveys.jobs.worker.requeue_stale`) and the schedule's hourly jobs (:func:`schedule`).
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta

from django.db import close_old_connections
from django.utils import timezone

from surveys.jobs import queue, worker
from surveys.responding import tallies

#: How often the worker loop queues stale jobs again and the schedule's jobs.
SWEEP_SECONDS = 30


#: At most this many batches of pending tally rows folded a sweep (``surveys.responding.tallies.fold_deltas``).
FOLDS_PER_SWEEP = 20

#: How often the webhooks that are due get their summary (each still gets at most one an hour).
WEBHOOK_MINUTES = 5


def schedule() -> None:
    """Queue the schedule's jobs: once per hour due rounds opened and expired exports deleted; every
    :data:`WEBHOOK_MINUTES` the webhooks' summaries that are due (:func:`surveys.webhooks.deliver_due`),
    so a failed delivery is retried on its backoff rather than on the next hour."""
    now = timezone.now()
    hour = now.replace(minute=0, second=0, microsecond=0)
    for name in ("open_due_rounds", "expire_exports"):
        queue.enqueue_once(name, key=f"{name}:{hour.isoformat()}", since=hour - timedelta(hours=1))
    slot = now.replace(minute=now.minute - now.minute % WEBHOOK_MINUTES, second=0, microsecond=0)
    since = slot - timedelta(minutes=WEBHOOK_MINUTES)
    queue.enqueue_once("deliver_webhooks", key=f"deliver_webhooks:{slot.isoformat()}", since=since)


def sweep() -> None:
    """The worker loop's housekeeping: stale jobs queued again, the schedule's jobs, old files removed,
    submissions' pending tally increments folded into the cells."""
    worker.requeue_stale()
    schedule()
    for _ in range(FOLDS_PER_SWEEP):  # bounded: submissions arriving meanwhile never starve the jobs
        if not tallies.fold_deltas():
            break


def poll_forever(stop: threading.Event | None = None, interval: float = 1.0) -> None:
    """The ``db`` transport's worker loop: run queued jobs, sweep every :data:`SWEEP_SECONDS`."""
    stop = stop or threading.Event()
    swept = 0.0
    while not stop.is_set():
        close_old_connections()
        try:
            if time.monotonic() - swept > SWEEP_SECONDS:
                sweep()
                swept = time.monotonic()
            if not worker.run_pending(limit=10):
                stop.wait(interval)
        except Exception:  # a database hiccup must not end the worker
            worker.log.exception("job worker loop")
            stop.wait(5 * interval)
