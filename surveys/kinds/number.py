"""A number in [lo, hi]: its mean (:mod:`surveys.kinds.mean`), or with ``bins`` a histogram's shares."""

from __future__ import annotations

from typing import Any

import numpy as np
from django.utils.translation import gettext as _

from surveys.kinds.base import KindError, QuestionKind
from surveys.models import Question

#: A number question's range: finite, at most this far from zero (the browser's input must hold it).
RANGE_LIMIT = 1e9
#: A number question's histogram: from 2 to 20 equal-width bins.
MIN_BINS, MAX_BINS = 2, 20


class NumberKind(QuestionKind):
    """A number in [lo, hi]: its mean (numeric mechanisms), or with ``bins`` the share of values in
    each of that many equal-width ranges (a choice mechanism on the range's index: honest bands)."""

    def options(self, data: dict[str, Any], question: Question | None) -> list[str]:
        lo, hi = self.checked_range(data)
        bins = data.get("bins")
        if not bins:
            return []
        if not MIN_BINS <= bins <= MAX_BINS:
            raise KindError("bins", _("Give between %(low)s and %(high)s bins.") % {"low": MIN_BINS, "high": MAX_BINS})
        edges = [lo + (hi - lo) * b / bins for b in range(bins + 1)]
        return [f"{edges[b]:g}–{edges[b + 1]:g}" for b in range(bins)]

    def estimate_family(self, data: dict[str, Any]) -> str:
        return self.families[1] if data.get("bins") else self.families[0]

    def value_range(self, data: dict[str, Any]) -> tuple[float, float] | None:
        return None if data.get("bins") else self.checked_range(data)

    def checked_range(self, data: dict[str, Any]) -> tuple[float, float]:
        lo, hi = data.get("range_low"), data.get("range_high")
        if lo is None or hi is None:
            message = _("A number question needs its lowest and highest value: they bound the noise.")
            raise KindError("range_low", message)
        if not (abs(lo) <= RANGE_LIMIT and abs(hi) <= RANGE_LIMIT):
            raise KindError("range_low", _("Keep the range within ± 1,000,000,000."))
        if not lo < hi:
            raise KindError("range_high", _("The highest value must be above the lowest."))
        return float(lo), float(hi)

    def demo_reports(self, question: Question, mechanism: Any, truth: Any, size: int, rng: Any) -> list[bytes]:
        """Whole numbers in the range, normal with ``truth`` = (mean, standard deviation)."""
        mean, sd = truth
        answers = np.clip(np.rint(rng.normal(mean, sd, size)), question.range_low, question.range_high)
        return [row.tobytes() for row in mechanism.randomize(answers, rng=rng)]
