"""Strict validation of one report as a browser sends it: the ``require_*`` checks and their error.

Every mechanism's ``parse_report`` (frequency, numeric, multi-select, free text) is built from
these checks; a report that fails one raises :class:`InvalidReport`, whose ``code`` and ``params``
say what is wrong without repeating anything the sender chose.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "InvalidReport",
    "require_bits",
    "require_distinct",
    "require_fields",
    "require_int",
    "require_list",
]


class InvalidReport(ValueError):
    """A report that does not fit its mechanism; the message says what is wrong, in English.

    ``code`` names the fault and ``params`` its details, so that an application can say it in its
    own words (the survey app translates them); no code or parameter repeats a string the sender
    chose (the message may show a received number or type):

    ==================  ===================================================================
    code                params
    ==================  ===================================================================
    ``not-an-object``   (none): the report is not a JSON object
    ``wrong-fields``    ``fields``: the sorted field names a report must have, exactly
    ``not-an-integer``  ``field``, ``position``: the value is not an integer
    ``out-of-range``    ``field``, ``position``, ``low``, ``high``, ``value``: outside [low, high]
    ``not-a-list``      ``field``: the value is not a list
    ``wrong-length``    ``field``, ``length``, ``got``: a list of ``got`` entries, not ``length``
    ``not-a-bit``       ``field``, ``position``: an entry is not the integer 0 or 1
    ``repeated``        ``field``: a list repeats an entry it must not
    ``packed-width``    ``width``, ``got``: a stored (packed) report has the wrong number of bytes
    ==================  ===================================================================

    ``field`` is the report's field name; ``position`` the entry's index in that field's list, or
    None for the field itself.

    >>> error = InvalidReport("cohort must lie in [0, 63], got 64", "out-of-range", field="cohort",
    ...     position=None, low=0, high=63, value=64)
    >>> error.code, error.params["high"], str(error)
    ('out-of-range', 63, 'cohort must lie in [0, 63], got 64')
    """

    def __init__(self, message: str, code: str, **params: Any) -> None:
        super().__init__(message)
        self.code = code
        self.params = params


def _entry(name: str, position: int | None) -> str:
    return name if position is None else f"{name}[{position}]"


def require_int(obj: Any, name: str, low: int, high: int, position: int | None = None) -> int:
    """A JSON integer in [low, high]; booleans and floats are refused. ``position``: its index in the
    list ``name`` (for the error only)."""
    where = {"field": name, "position": position}
    if isinstance(obj, bool) or not isinstance(obj, int):
        raise InvalidReport(
            f"{_entry(name, position)} must be an integer, got {type(obj).__name__}", "not-an-integer", **where
        )
    if not low <= obj <= high:
        raise InvalidReport(
            f"{_entry(name, position)} must lie in [{low}, {high}], got {obj}",
            "out-of-range",
            **where,
            low=low,
            high=high,
            value=obj,
        )
    return obj


def require_list(obj: Any, name: str, length: int) -> list[Any]:
    """A JSON list of exactly ``length`` entries."""
    if not isinstance(obj, list):
        raise InvalidReport(f"{name} must be a list, got {type(obj).__name__}", "not-a-list", field=name)
    if len(obj) != length:
        raise InvalidReport(
            f"{name} must have {length} entries, got {len(obj)}",
            "wrong-length",
            field=name,
            length=length,
            got=len(obj),
        )
    return obj


def require_bits(obj: Any, name: str, length: int) -> list[int]:
    """A JSON list of exactly ``length`` entries, each the integer 0 or 1."""
    bits = require_list(obj, name, length)
    if set(map(type, bits)) <= {int} and set(bits) <= {0, 1}:  # at C speed; ``type`` rules out True and False
        return obj
    for i, bit in enumerate(bits):
        if isinstance(bit, bool) or bit not in (0, 1) or not isinstance(bit, int):
            raise InvalidReport(f"{name}[{i}] must be 0 or 1, got {bit!r}", "not-a-bit", field=name, position=i)
    return obj


def require_distinct(values: list[Any], name: str) -> None:
    """No entry of the list ``name`` repeats."""
    if len(set(values)) != len(values):
        raise InvalidReport(f"{name} must not repeat an entry", "repeated", field=name)


def require_fields(obj: Any, fields: set[str]) -> dict[str, Any]:
    """A JSON object with exactly the given keys."""
    if not isinstance(obj, dict):
        raise InvalidReport(f"a report must be an object, got {type(obj).__name__}", "not-an-object")
    if set(obj) != fields:
        raise InvalidReport(
            f"a report must have exactly the fields {sorted(fields)}, got {sorted(obj)}",
            "wrong-fields",
            fields=sorted(fields),
        )
    return obj
