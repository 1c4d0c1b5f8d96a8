"""Under ``make run``: a worker thread inside runserver, so that one command serves and works.

Started by :meth:`surveys.apps.SurveysConfig.ready` in the process that serves (runserver's
reloaded child, or the only process with ``--noreload``) when ``JOBS_EMBEDDED`` is on (the default
with ``DEBUG`` and the ``db`` transport). It runs the same loop as ``manage.py run_jobs``.
"""

from __future__ import annotations

import os
import sys
import threading

from django.conf import settings

_started = threading.Event()


def should_start(argv: list[str]) -> bool:
    """runserver's serving process, with the embedded worker on and the ``db`` transport."""
    if not (settings.JOBS_EMBEDDED and settings.JOBS_QUEUE == "db") or "runserver" not in argv[1:2]:
        return False
    return os.environ.get("RUN_MAIN") == "true" or "--noreload" in argv


def start() -> None:
    if _started.is_set() or not should_start(sys.argv):
        return
    _started.set()
    from surveys.jobs.loop import poll_forever

    threading.Thread(target=poll_forever, name="murmur-jobs", daemon=True).start()
