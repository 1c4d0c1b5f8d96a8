"""A randomization's stored parameters in words, for the pages that list them (the transparency
page's version history, the folded exact parameters on result and builder cards).

Each parameter name a mechanism stores (``params()`` of every :mod:`ldp.registry` mechanism, and a
number's range ``lo`` / ``hi``) has a label in words, translated; the raw names appear only in the
folded "as stored" values. Values read as a person would: a mechanism's name by its label, a long
fraction to four significant digits (the stored value stays in the raw detail).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

#: Every stored parameter's label: what it is, in words.
LABELS: dict[str, Promise] = {
    "bits": _("Bits in each report's filter"),
    "cohorts": _("Groups of respondents with their own hash functions"),
    "d": _("Buckets each respondent reports on"),
    "delta": _("Chance the guarantee may fail (δ)"),
    "f": _("Share of the filter's bits randomized once for good"),
    "focus": _("Options asked about in focus"),
    "forced": _("Weights of the forced answers"),
    "grid": _("Points the number is rounded to"),
    "hash_count": _("Hash functions"),
    "hash_seed": _("Seed of the hash functions"),
    "hi": _("Highest value"),
    "lo": _("Lowest value"),
    "max_choices": _("Most options one respondent may choose"),
    "oracle": _("Mechanism reporting the sampled option"),
    "p": _("Probability p of the method above"),
    "pi": _("Shares of the unrelated question's answers"),
    "q": _("Probability q of the method above"),
    "range_size": _("Values each answer is hashed to"),
    "subset_size": _("Options in each reported subset"),
    "variant": _("Encoding"),
    "width": _("Columns of the sketch"),
    "within": _("Split of the other options' share"),
}


@dataclass(frozen=True)
class Parameter:
    """One stored parameter: its raw name, its label in words and its value as a reader sees it."""

    name: str
    label: str
    value: str


def shown(value: Any) -> str:
    """A parameter's value for reading: a mechanism's name by its label, a fraction to four
    significant digits, a list item by item.

    >>> shown(0.37564699822840386), shown([1, 2.5]), shown(True)
    ('0.3756', '1, 2.5', 'True')
    """
    from surveys.models import Question

    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, str):
        names = Question.MechanismName
        return str(names(value).label) if value in names.values else value
    if isinstance(value, list | tuple):
        return ", ".join(shown(item) for item in value)
    return str(value)


def in_words(params: dict[str, Any] | None) -> list[Parameter]:
    """The parameters in the stored order, each with its label (its raw name if it has none)."""
    return [Parameter(name, str(LABELS.get(name, name)), shown(value)) for name, value in (params or {}).items()]
