"""Per-mechanism memos for the submit path: values that depend only on a mechanism and a key.

A mechanism is immutable and built once per process per parameter set
(``surveys.randomizations.build_mechanism``), so anything computed from it and a report (a
receipt's words and chance sentence in one language) can be remembered beside it. Each memo
holds the mechanism itself, so its ``id`` cannot be reused while the entry lives, and stays
bounded: at most :data:`MECHANISMS` mechanisms, :data:`ENTRIES` keys each; past that a value is
computed and not kept (a mechanism with a huge report space, such as OLH's hashed reports or
CMS's sketch rows, then simply computes every time).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")

MECHANISMS = 1024
ENTRIES = 4096
_MEMOS: dict[tuple[str, int], tuple[Any, dict[Hashable, Any]]] = {}


def remembered(kind: str, mechanism: Any, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, remembered per (``kind``, mechanism, ``key``) within the bounds above."""
    slot = _MEMOS.get((kind, id(mechanism)))
    if slot is None or slot[0] is not mechanism:
        if len(_MEMOS) >= MECHANISMS:
            _MEMOS.clear()
        slot = _MEMOS[(kind, id(mechanism))] = (mechanism, {})
    values = slot[1]
    try:
        return values[key]
    except KeyError:
        value = compute()
        if len(values) < ENTRIES:
            values[key] = value
        return value
