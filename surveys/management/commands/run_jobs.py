"""Run Murmur's job worker: ``make serve`` starts it beside gunicorn (docs/deployment.md).

With ``JOBS_QUEUE=rq`` an RQ worker on the ``murmur`` queue, with a thread that sweeps (stale jobs
queued again, the hourly schedule); with ``db`` a loop that polls the job table and sweeps.
``--burst`` runs what is queued and stops.
"""

from __future__ import annotations

import threading
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from surveys.jobs import loop, worker


class Command(BaseCommand):
    help = "Run Murmur's job worker (exports, decoding, mail, scheduled rounds)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--burst", action="store_true", help="run the queued jobs, then stop")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["burst"]:
            loop.sweep()
            if settings.JOBS_QUEUE == "rq":
                self._rq_worker().work(burst=True)
            ran = worker.run_pending()
            self.stdout.write(f"Ran {ran} queued jobs.")
            return
        if settings.JOBS_QUEUE == "rq":
            stop = threading.Event()
            threading.Thread(target=self._sweep_forever, args=(stop,), daemon=True).start()
            try:
                self._rq_worker().work(with_scheduler=False)
            finally:
                stop.set()
        else:
            loop.poll_forever()

    @staticmethod
    def _rq_worker() -> Any:
        import django_rq

        return django_rq.get_worker(worker.RQ_QUEUE)

    @staticmethod
    def _sweep_forever(stop: threading.Event) -> None:
        while not stop.wait(loop.SWEEP_SECONDS):
            try:
                loop.sweep()
            except Exception:  # keep sweeping through a database hiccup
                worker.log.exception("job sweep")
