"""Results read from a streaming replica when one is configured (``DATABASE_REPLICA_URL``).

Only the results pages read there, and only while :func:`results_reads` is active: everything
else, the builder above all, reads its own writes from the primary. A replica lags the primary by
a moment, so a dashboard may show a report a poll later; tallies on the replica are still exact
sums of the reports on the replica (they commit together), so nothing is ever shown half-counted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from functools import wraps
from typing import Any

from django.conf import settings

REPLICA = "replica"
_reading_results: ContextVar[bool] = ContextVar("murmur_reading_results", default=False)


@contextlib.contextmanager
def results_reads() -> Iterator[None]:
    """Within this block, reads go to the replica if there is one."""
    token = _reading_results.set(True)
    try:
        yield
    finally:
        _reading_results.reset(token)


def reads_results(view: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a read-only results view so its queries may go to the replica."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with results_reads():
            return view(*args, **kwargs)

    return wrapper


class ResultsReplicaRouter:
    """Django database router: results reads to the replica, everything else to the primary."""

    def db_for_read(self, model: type, **hints: Any) -> str | None:
        # The database cache holds rate-limit counters: always the primary, never a lagging copy.
        cache_table = getattr(getattr(model, "_meta", None), "app_label", None) == "django_cache"
        if _reading_results.get() and REPLICA in settings.DATABASES and not cache_table:
            return REPLICA
        return None

    def db_for_write(self, model: type, **hints: Any) -> str | None:
        return "default"

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool | None:
        return True

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool | None:
        return db == "default"
