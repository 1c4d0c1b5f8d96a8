"""The summary of a question asked directly: each option's count and share, shown only for groups
of at least :data:`~surveys.kinds.designs.SMALL_GROUP` respondents.

A direct answer is not randomized (:class:`ldp.direct.DirectAnswer`, epsilon infinite), so a small
group is a handful of identifiable people. Cell suppression (the statistical agencies' rule of a
minimum cell size, e.g. Hundepool et al. 2012, *Statistical Disclosure Control*, section 5.2):
every option with fewer than the threshold is hidden, and while the hidden options add up to fewer
than the threshold, the next smallest is hidden too (secondary suppression), so that no hidden
count can be worked out from the total; below the threshold in all, nothing is shown. Direct
questions are not crossed post hoc or declared in pairs (``choice_reports`` is False): grouping
the randomized answers by them is the analysis page's (:mod:`surveys.results.analysis`), which
applies the same threshold.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from django.utils.translation import gettext as _

import ldp
from surveys.kinds.base import Found, ResultView, common_columns
from surveys.kinds.designs import SMALL_GROUP
from surveys.kinds.shares import SharesSummary, option_labels


def hidden_groups(counts: Any, threshold: int = SMALL_GROUP) -> np.ndarray:
    """Which groups (options) to hide: those below ``threshold``, then the smallest others until
    the hidden ones add up to at least ``threshold`` (all of them when the total is below it).

    >>> hidden_groups([30, 4, 12, 20]).tolist()
    [False, True, True, False]
    >>> hidden_groups([30, 0, 12]).tolist()
    [False, False, False]
    >>> hidden_groups([5, 3]).tolist()
    [True, True]
    """
    c = np.asarray(counts, dtype=np.int64)
    hidden = (c > 0) & (c < threshold)
    if c.sum() < threshold:
        return np.ones(c.size, dtype=bool)
    for i in np.argsort(c, kind="stable"):
        if not hidden.any() or c[hidden].sum() >= threshold:
            break
        if not hidden[i] and c[i] > 0:
            hidden[i] = True
    return hidden


class DirectSummary(SharesSummary):
    name = "direct"
    per_option = True
    choice_reports = False
    samples = False  # sent only when answered: a sampled question's absence would tell the draw

    def enough(self, result: ResultView) -> bool:
        return result.n >= SMALL_GROUP

    def reports_needed(self, result: ResultView) -> int:
        return SMALL_GROUP

    def rows(self, result: ResultView) -> list[dict[str, Any]]:
        counts = np.asarray(result.raw_counts, dtype=np.int64)
        hidden = hidden_groups(counts)
        return [
            {
                "label": label,
                "hidden": bool(hidden[i]),
                "count": None if hidden[i] else int(counts[i]),
                "share": None if hidden[i] else float(counts[i] / max(result.n, 1)),
            }
            for i, label in enumerate(result.question.options)
        ]

    def card(self, result: ResultView, kind: str, view: dict[str, Any]) -> None:
        view["groups"] = self.rows(result)
        view["small_group"] = SMALL_GROUP

    def few(self, result: ResultView, view: dict[str, Any]) -> None:
        view["small_group"] = SMALL_GROUP

    def export_rows(self, result: ResultView) -> Iterator[dict[str, Any]]:
        if result.n < SMALL_GROUP:
            return
        for i, row in enumerate(self.rows(result)):
            yield {
                **common_columns(result),
                "epsilon": None,
                "statistic": "direct_share",
                "option_index": i,
                "option": row["label"],
                "raw_count": row["count"],
                "unbiased": row["share"],
            }

    def round_values(self, result: ResultView, labels: list[str], tally: ldp.Tally) -> Found:
        return None  # no trends of small groups across rounds

    def describe(self, mechanism: Any, options: list[str], report: dict[str, Any]) -> str:
        return _("your answer as given, not randomized: %(option)s") % {
            "option": option_labels(options, [report["value"]])
        }

    def chance(self, mechanism: Any) -> str:
        return _("Asked directly: stored exactly as you gave it; results show only groups of at least %(n)s.") % {
            "n": SMALL_GROUP
        }
