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

#: How often the worker loop queues stale jobs again and the schedule's jobs.
SWEEP_SECONDS = 30


def schedule() -> None:
    """Queue the schedule's jobs once per hour: due rounds opened, expired exports deleted."""
    hour = timezone.now().replace(minute=0, second=0, microsecond=0)
    for name in ("open_due_rounds", "expire_exports"):
        queue.enqueue_once(name, key=f"{name}:{hour.isoformat()}", since=hour - timedelta(hours=1))


def sweep() -> None:
    """The worker loop's housekeeping: stale jobs queued again, the schedule's jobs, old files removed."""
    worker.requeue_stale()
    schedule()


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
