"""The receipt a respondent gets after sending: what left the browser, in words.

Each row names the question, says what the stored report *is* in plain language (the option a
k-RR report names, the options a bit vector marks, the noisy number a numeric report decodes to)
and how much it says about the true answer: for k-RR the chance that the report is the true
answer (e^ε / (e^ε + k − 1), seed 001); otherwise the chance that someone who sees it guesses the
answer right (``Mechanism.guess_probability``). The exact report stays beside it for the curious.
Both depend only on the mechanism, the report's bytes, the options and the language, so they are
remembered per mechanism (:mod:`surveys.responding.memo`); a remembered ``stored`` is shared
between receipts and must not be changed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from django.utils import translation

from surveys.kinds import adaptive, summary_of
from surveys.responding import memo
from surveys.responding.submissions import ParsedReport


def receipt_rows(reports: Iterable[ParsedReport], version: int | None = None) -> list[dict[str, Any]]:
    """One JSON-ready row per stored report (``version`` overrides the randomization's: previews)."""
    rows = []
    language = translation.get_language()
    for r in reports:
        mechanism = r.randomization.build_mechanism()
        options = tuple(r.question.options)
        stored, described = memo.remembered(
            "receipt",
            mechanism,
            (r.packed, options, language),
            lambda: _described(r, mechanism, options),  # noqa: B023
        )
        chance = memo.remembered(
            "chance",
            mechanism,
            language,
            lambda: summary_of(r.randomization.mechanism).chance(mechanism),  # noqa: B023
        )
        rows.append(
            {
                "question": r.question.pk,
                "text": r.question.text,
                "version": r.randomization.version if version is None else version,
                "mechanism": r.randomization.mechanism,
                "epsilon": r.randomization.epsilon if math.isfinite(r.randomization.epsilon) else None,
                "stored": stored,
                "summary": described,
                "chance": chance,
                "design": adaptive.receipt_words(r.question, r.randomization),
            }
        )
    return rows


def _described(report: ParsedReport, mechanism: Any, options: tuple[str, ...]) -> tuple[dict[str, Any], str]:
    """The stored report as JSON and in words (:meth:`surveys.kinds.base.Summary.describe`)."""
    stored = mechanism.unpack_report(report.packed)
    return stored, summary_of(report.randomization.mechanism).describe(mechanism, list(options), stored)
