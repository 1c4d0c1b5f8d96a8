"""A rating on a scale: each point's share (:mod:`surveys.kinds.shares`, with the mean and NPS derived),
or its mean (:mod:`surveys.kinds.mean`), as the organizer picks and :func:`recommend_rating_estimate` advises."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from ldp.advisor import recommend
from surveys.kinds.base import KindError, QuestionKind
from surveys.models import Question

#: NPS: promoters (9-10) minus detractors (0-6), as shares of respondents.
NPS_SCALE = "0-10"


class RatingKind(QuestionKind):
    def estimate_family(self, data: dict[str, Any]) -> str:
        return self.families[1] if data.get("rating_estimate") == Question.RatingEstimate.MEAN else self.families[0]

    def options(self, data: dict[str, Any], question: Question | None) -> list[str]:
        low, high = scale_points(data.get("scale") or "")
        return [str(point) for point in range(low, high + 1)]

    def value_range(self, data: dict[str, Any]) -> tuple[float, float] | None:
        if data.get("rating_estimate") != Question.RatingEstimate.MEAN:
            return None
        low, high = scale_points(data.get("scale") or "")
        return float(low), float(high)

    def advice(self, scale: str, k: int, epsilon: float, n: int) -> str:
        """Which estimate the advisor recommends for this scale, epsilon and n, in one sentence."""
        shares_half_width = recommend(k, epsilon, n).best.half_width
        return str(RATING_ADVICE[recommend_rating_estimate(scale, shares_half_width)[1]])

    def point_weights(self, question: Question) -> dict[str, list[float]]:
        """The rating's mean, and NPS on the 0-10 scale (promoters 9-10 minus detractors 0-6).

        Each is c . p for the shares p, so its variance is c' Cov(p) c (the shares' analytic covariance).
        """
        if not question.scale:
            return {}
        low, high = scale_points(question.scale)
        points = list(range(low, high + 1))
        weights = {"mean": [float(v) for v in points]}
        if question.scale == NPS_SCALE:
            weights["nps"] = [1.0 if v >= 9 else -1.0 if v <= 6 else 0.0 for v in points]
        return weights


def scale_points(scale: str) -> tuple[int, int]:
    """A rating scale's lowest and highest point: "1-5" -> (1, 5)."""
    if scale not in Question.Scale.values:
        raise KindError("scale", _("Choose a rating scale."))
    low, high = scale.split("-")
    return int(low), int(high)


RATING_ADVICE = {
    "shares": gettext_lazy(
        "Recommended: the share of each point. On the 0–10 scale the Net Promoter Score needs the shares of "
        "promoters and detractors, and the mean is derived from the shares too."
    ),
    "mean": gettext_lazy(
        "Recommended: the mean. At this ε and number of respondents the share of each point would be "
        "uncertain by more than 10 percentage points, while one number, the mean, is estimated far more precisely."
    ),
    "shares-precise": gettext_lazy(
        "Recommended: the share of each point. At this ε and number of respondents each share is known to "
        "within 10 percentage points, and the mean is derived from the shares too."
    ),
}

#: Above this expected half-width of each point's share, a rating is better summarized by its mean.
SHARES_PRECISE_ENOUGH = 0.10


def recommend_rating_estimate(scale: str, shares_half_width: float) -> tuple[str, str]:
    """(estimate, reason key of :data:`RATING_ADVICE`) for a rating scale and its shares' expected error."""
    if scale == NPS_SCALE:
        return "shares", "shares"
    if shares_half_width > SHARES_PRECISE_ENOUGH:
        return "mean", "mean"
    return "shares", "shares-precise"
