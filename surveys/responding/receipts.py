"""The receipt a respondent gets after sending: what left the browser, in words.

Each row names the question, says what the stored report *is* in plain language (the option a
k-RR report names, the options a bit vector marks, the noisy number a numeric report decodes to)
and how much it says about the true answer: for k-RR the chance that the report is the true
answer (e^ε / (e^ε + k − 1), seed 001); otherwise the chance that someone who sees it guesses the
answer right (``Mechanism.guess_probability``). The exact report stays beside it for the curious.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from surveys.kinds import summary_of
from surveys.responding.submissions import ParsedReport


def receipt_rows(reports: Iterable[ParsedReport], version: int | None = None) -> list[dict[str, Any]]:
    """One JSON-ready row per stored report (``version`` overrides the randomization's: previews)."""
    rows = []
    for r in reports:
        mechanism = r.randomization.build_mechanism()
        stored = mechanism.unpack_report(r.packed)
        summary = summary_of(r.randomization.mechanism)  # its words: :meth:`surveys.kinds.base.Summary.describe`
        rows.append(
            {
                "question": r.question.pk,
                "text": r.question.text,
                "version": r.randomization.version if version is None else version,
                "mechanism": r.randomization.mechanism,
                "epsilon": r.randomization.epsilon if math.isfinite(r.randomization.epsilon) else None,
                "stored": stored,
                "summary": summary.describe(mechanism, list(r.question.options), stored),
                "chance": summary.chance(mechanism),
            }
        )
    return rows
