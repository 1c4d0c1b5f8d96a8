"""Every task a job can run, by name, and the schedule the worker loop keeps.

A task is ``function(job, progress) -> dict``: it reads its parameters from ``job.params``, calls
``progress(done, total)`` as it goes, may set ``job.file``, and returns the result to store. The
functions live beside what they do and are imported by dotted path when first run, so this module
imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any

TaskFunction = Callable[..., dict[str, Any] | None]

TASKS: dict[str, str] = {
    "export": "surveys.results.export_files.run_export",
    "invitation_mail": "surveys.responding.invitations.run_invitation_mail",
    "open_due_rounds": "surveys.series.rounds.run_open_due_rounds",
    "expire_exports": "surveys.results.export_files.run_expire_exports",
    "refresh_results": "surveys.results.refresh.run_refresh",
    "count_pairs": "surveys.results.pair_counts.run_count_pairs",
    "deliver_webhooks": "surveys.webhooks.run_deliver_webhooks",
    "retune": "surveys.responding.retune.run_retune",
}


def task(name: str) -> TaskFunction:
    """The function of a task name; KeyError names an unknown one."""
    try:
        path = TASKS[name]
    except KeyError:
        raise KeyError(f"no job task named {name!r}") from None
    module, _, attribute = path.rpartition(".")
    function: TaskFunction = getattr(import_module(module), attribute)
    return function
