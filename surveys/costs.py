"""What a question's privacy choice costs, in numbers an organizer or respondent can read."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.utils.translation import gettext_lazy

from ldp.advisor import Z_95, Recommendation, expected_half_width, recommend
from ldp.mechanisms import Mechanism
from ldp.multiselect import SetRecommendation, recommend_multiselect
from ldp.numeric import NumericMechanism
from ldp.numeric.advisor import MeanRecommendation, recommend_mean
from ldp.privacy import posterior_bound
from ldp.textreports import TextReports
from surveys.templatetags.murmur import points

#: The prior in the plain-language statement "someone who thought there was a 10 % chance...".
STATEMENT_PRIOR = 0.10

#: Figures that cost milliseconds (OLH's guess probability takes hundreds at k = 64), per process,
#: keyed by what defines the mechanism (its class, k, epsilon and ``params()``) rather than by the
#: object: the builder builds a new mechanism for every request, equal to the last one.
_FIGURES: dict[tuple[Any, ...], float] = {}


def figure_key(mechanism: Any, figure: str, n: int | None = None) -> tuple[Any, ...]:
    """The cache key of one figure of ``mechanism``: equal for equal parameters, whatever the object."""
    params = json.dumps(mechanism.params(), sort_keys=True, default=str)
    return (figure, type(mechanism).__qualname__, mechanism.k, float(mechanism.epsilon), params, n)


def cached_figure(mechanism: Any, figure: str, compute: Callable[[], float], n: int | None = None) -> float:
    key = figure_key(mechanism, figure, n)
    value = _FIGURES.get(key)
    if value is None:
        if len(_FIGURES) >= 1024:
            _FIGURES.clear()
        value = _FIGURES[key] = float(compute())
    return value


class PrivacyStatement:
    """The privacy figures every cost shows: epsilon, and seed 001's prior-to-posterior bound."""

    mechanism: Any

    @property
    def epsilon(self) -> float:
        return float(self.mechanism.epsilon)

    @property
    def posterior(self) -> float:
        """Most an observer's 10 % prior that the answer is X can rise to after one report."""
        return float(posterior_bound(STATEMENT_PRIOR, self.epsilon))

    @property
    def prior(self) -> float:
        return STATEMENT_PRIOR


@dataclass(frozen=True)
class QuestionCost(PrivacyStatement):
    """A mechanism's costs at n respondents; each figure is computed when first read.

    The answer page shows only the privacy figures, so it never pays for the variance behind
    ``half_width``.
    """

    mechanism: Mechanism
    n: int
    advice: str = ""
    """A plain sentence the builder shows under the figures (a rating's recommended estimate)."""
    recurring: bool = False
    """The question is in a recurring survey: "Automatic" picks among the memoized mechanisms."""
    report_is_answer_probability: float | None = None
    """k-RR only: chance that the report *is* the true answer (:meth:`surveys.kinds.shares.SharesSummary.cost`)."""
    is_mean = False

    @property
    def k(self) -> int:
        return self.mechanism.k

    @cached_property
    def half_width(self) -> float:
        """Half-width of the 95 % band of each option's share at n respondents (evenly spread answers)."""
        return cached_figure(self.mechanism, "half_width", lambda: expected_half_width(self.mechanism, self.n), self.n)

    @cached_property
    def guess_probability(self) -> float | None:
        """Chance that an observer of one report guesses the answer right (1/k by blind guessing);
        None where there is no single answer to guess (:class:`SetCost`)."""
        return cached_figure(self.mechanism, "guess_probability", self.mechanism.guess_probability)

    @property
    def chance(self) -> float:
        return 1.0 / self.k

    @property
    def relative_half_width(self) -> float:
        """The half-width as a share (points / 100), comparable across kinds (:mod:`surveys.budget`)."""
        return self.half_width

    @property
    def too_wide(self) -> bool:
        """Whether each share is expected to be uncertain by more than :data:`READABLE_HALF_WIDTH`."""
        return self.half_width > READABLE_HALF_WIDTH

    @property
    def respondents_needed(self) -> int:
        """Respondents for a ± 10-point band: the half-width shrinks as 1/sqrt(n)."""
        return respondents_for(self.half_width, READABLE_HALF_WIDTH, self.n)

    @cached_property
    def recommendation(self) -> Recommendation:
        return recommend(self.k, self.epsilon, self.n)

    @property
    def why(self) -> str:
        """The advisor's choice in one sentence: the narrowest band at this k and ε, and the runner-up."""
        from surveys.models import Question

        ranking = self.recommendation.ranking
        best = ranking[0]
        values = {
            "mechanism": Question.MechanismName(best.mechanism).label,
            "k": self.k,
            "epsilon": f"{self.epsilon:g}",
            "width": points(best.half_width),
        }
        if self.recurring:
            return self._recurring_why(values)
        if len(ranking) == 1:
            return str(ADVISOR_ONLY) % values
        runner_up = ranking[1]
        values.update(other=Question.MechanismName(runner_up.mechanism).label, other_width=points(runner_up.half_width))
        return str(ADVISOR_WHY) % values

    def _recurring_why(self, best: dict[str, Any]) -> str:
        """In a recurring survey: the memoized pick (:func:`surveys.series.memoization.memoized_choice`) beside the
        narrowest band, or why none is memoized at this epsilon."""
        from surveys.models import Question
        from surveys.series.memoization import memoized_choice

        memoized = memoized_choice(self.k, self.epsilon, self.n)
        if memoized is None:
            return f"{str(ADVISOR_ONLY) % best} {NO_MEMOIZED_CHOICE}"
        values = {**best, "other": best["mechanism"], "other_width": best["width"]}
        values.update(mechanism=Question.MechanismName(memoized.mechanism).label, width=points(memoized.half_width))
        if memoized == self.recommendation.best:
            return str(RECURRING_BEST) % values
        return str(RECURRING_WHY) % values


#: Above this expected half-width a share (or a mean, as a fraction of its range) says little.
READABLE_HALF_WIDTH = 0.10


def respondents_for(half_width: float, target: float, n: int) -> int:
    """n * (half_width / target)^2, rounded up: respondents for a band of half-width ``target``."""
    return math.ceil(n * (half_width / target) ** 2)


ADVISOR_WHY = gettext_lazy(
    "Automatic picks %(mechanism)s: for %(k)s options at ε = %(epsilon)s it gives the narrowest error band "
    "(± %(width)s points), ahead of %(other)s (± %(other_width)s)."
)
ADVISOR_ONLY = gettext_lazy(
    "Automatic picks %(mechanism)s: for %(k)s options at ε = %(epsilon)s it gives the narrowest error band "
    "(± %(width)s points)."
)
RECURRING_BEST = gettext_lazy(
    "Automatic picks %(mechanism)s: for %(k)s options at ε = %(epsilon)s it gives the narrowest error band "
    "(± %(width)s points), and this recurring survey memoizes it across rounds."
)
RECURRING_WHY = gettext_lazy(
    "This survey recurs, so Automatic picks among the mechanisms memoized across rounds: %(mechanism)s, "
    "± %(width)s points for %(k)s options at ε = %(epsilon)s. The narrowest band, %(other)s's ± %(other_width)s, "
    "would be randomized afresh, spending ε again every round."
)
NO_MEMOIZED_CHOICE = gettext_lazy(
    "At this ε no mechanism for choices is memoized across rounds (dBitFlip's memoized form needs ε below "
    "about 4.39, or 2.2 with one bucket), so every round spends ε again."
)


@dataclass(frozen=True)
class MeanCost(PrivacyStatement):
    """A numeric mechanism's cost at n respondents: the expected 95 % half-width of the mean.

    Beside it, every numeric mechanism's half-width for the same range, epsilon and n
    (:func:`ldp.numeric.advisor.recommend_mean`), the recommended one, and why.
    """

    mechanism: NumericMechanism
    n: int
    unit: str = ""
    advice: str = ""
    recurring: bool = False
    """The question is in a recurring survey: "Automatic" picks 1BitMean where it is memoized."""
    is_mean = True

    @property
    def delta(self) -> float:
        return self.mechanism.privacy_guarantee()[1]

    @cached_property
    def half_width(self) -> float:
        """Worst case over the respondents' values: z_0.975 * sqrt(max variance of one report / n)."""
        return Z_95 * self.mechanism.expected_standard_error(self.n)

    @cached_property
    def recommendation(self) -> MeanRecommendation:
        return recommend_mean(self.mechanism.lo, self.mechanism.hi, self.epsilon, self.n)

    @property
    def ranking(self) -> list[tuple[str, float, bool]]:
        """(mechanism label, half-width, whether it is this question's) per numeric mechanism, best first."""
        from surveys.models import Question

        return [
            (str(Question.MechanismName(c.mechanism).label), c.half_width, c.mechanism == self.mechanism.name)
            for c in self.recommendation.ranking
        ]

    @cached_property
    def memoized(self) -> Any:
        """In a recurring survey, the memoized pick (:func:`surveys.series.memoization.memoized_mean`), else None."""
        from surveys.series.memoization import memoized_mean

        if not self.recurring:
            return None
        return memoized_mean(self.mechanism.lo, self.mechanism.hi, self.epsilon, self.n)

    @property
    def recommended_label(self) -> str:
        from surveys.models import Question

        return str(Question.MechanismName((self.memoized or self.recommendation.best).mechanism).label)

    @property
    def relative_half_width(self) -> float:
        """The half-width as a share of the range (:mod:`surveys.budget`): ± 0.1 is a tenth of it."""
        return self.half_width / (self.mechanism.hi - self.mechanism.lo)

    @property
    def too_wide(self) -> bool:
        """Whether the mean is expected to be uncertain by more than a tenth of its range."""
        return self.half_width > READABLE_HALF_WIDTH * (self.mechanism.hi - self.mechanism.lo)

    @property
    def respondents_needed(self) -> int:
        target = READABLE_HALF_WIDTH * (self.mechanism.hi - self.mechanism.lo)
        return respondents_for(self.half_width, target, self.n)

    @property
    def why(self) -> str:
        """One plain sentence: the published crossover, on the side of it this epsilon is; in a recurring
        survey, why 1BitMean (memoized), or that no mechanism for numbers is memoized at this epsilon."""
        if self.memoized is not None:
            return str(MEAN_RECURRING)
        crossover = CROSSOVER_BELOW if self.recommendation.regime == "one-bit" else CROSSOVER_ABOVE
        return f"{crossover} {NO_MEMOIZED_MEAN}" if self.recurring else str(crossover)


CROSSOVER_BELOW = gettext_lazy(
    "Below ε ≈ 1.29 a single randomized bit (1BitMean) estimates a mean more precisely than Piecewise; "
    "Hybrid mixes the two and is never worse. The sources are on the survey's public parameter page."
)
CROSSOVER_ABOVE = gettext_lazy(
    "Above ε ≈ 1.29 Piecewise, which reports a value near the true one, beats a single randomized bit "
    "(1BitMean); Hybrid mixes the two and is never worse. The sources are on the survey's public parameter page."
)
MEAN_RECURRING = gettext_lazy(
    "This survey recurs, so Automatic picks 1BitMean: its one bit is memoized across rounds (possible below "
    "ε = ln 3 ≈ 1.1), at most a few percent less precise than the best here. Any other would be randomized "
    "afresh, spending ε again every round."
)
NO_MEMOIZED_MEAN = gettext_lazy(
    "At this ε no mechanism for numbers is memoized across rounds (1BitMean's memoized form needs ε below "
    "ln 3 ≈ 1.1), so every round spends ε again."
)


@dataclass(frozen=True)
class TextCost(PrivacyStatement):
    """A free-text mechanism's cost at n respondents: the error of one candidate answer's share.

    The half-width is z_0.975 times :meth:`ldp.textreports.TextReports.share_standard_error`, a
    bound that leaves out collisions with answers not asked about.
    """

    mechanism: TextReports
    n: int
    advice: str = ""
    recurring: bool = False
    """The question is in a recurring survey: "Automatic" picks RAPPOR, memoized across rounds."""
    is_mean = False
    is_text = True

    @property
    def why(self) -> str:
        """Why "Automatic" picked this mechanism, in a recurring survey (empty otherwise)."""
        return str(TEXT_RECURRING) if self.recurring else ""

    @cached_property
    def half_width(self) -> float:
        return Z_95 * self.mechanism.share_standard_error(max(self.n, 1))

    @property
    def relative_half_width(self) -> float:
        return self.half_width

    @property
    def too_wide(self) -> bool:
        return self.half_width > READABLE_HALF_WIDTH

    @property
    def respondents_needed(self) -> int:
        return respondents_for(self.half_width, READABLE_HALF_WIDTH, max(self.n, 1))


TEXT_RECURRING = gettext_lazy(
    "This survey recurs, so Automatic picks RAPPOR: its permanent randomized response is memoized across "
    "rounds, so answering again with the same answer spends at most its ε∞ in all. A count-mean sketch would "
    "be randomized afresh, spending ε again every round."
)


@dataclass(frozen=True)
class SetCost(QuestionCost):
    """A multi-select mechanism's cost at n respondents: the expected 95 % half-width of each option's share.

    The half-width is the advisor's (:func:`ldp.multiselect.recommend_multiselect`): the widest
    option's, at a reference population that chooses l / 2 options on average, spread evenly.
    There is no single answer to guess (a set is chosen), so the guess figures of one choice are None.
    """

    mechanism: Any
    unary: bool = False
    """A unary encoding of the set (set-sue, set-oue); else padding-and-sampling."""
    is_set = True
    guess_probability = None

    @property
    def max_choices(self) -> int:
        return self.mechanism.ell

    @cached_property
    def recommendation(self) -> SetRecommendation:
        return recommend_multiselect(self.k, self.max_choices, self.epsilon, max(self.n, 1))

    @cached_property
    def half_width(self) -> float:
        name = self.mechanism.mechanism_name
        return next(c.half_width for c in self.recommendation.ranking if c.mechanism == name)

    @property
    def explanation(self) -> str:
        """How the browser randomizes a set, in one sentence for the respondent."""
        from surveys.models import Question

        label = Question.MechanismName(self.mechanism.mechanism_name).label
        if self.unary:
            return str(SET_UNARY_EXPLANATION) % {"mechanism": label}
        return str(SET_PADDING_EXPLANATION) % {"mechanism": label, "l": self.max_choices}

    @property
    def why(self) -> str:
        """The advisor's choice in one sentence: the narrowest band at this k, l and ε, and the runner-up."""
        from surveys.models import Question

        best, runner_up = self.recommendation.ranking[:2]
        return str(SET_ADVISOR_WHY) % {
            "mechanism": Question.MechanismName(best.mechanism).label,
            "k": self.k,
            "l": self.max_choices,
            "epsilon": f"{self.epsilon:g}",
            "width": points(best.half_width),
            "other": Question.MechanismName(runner_up.mechanism).label,
            "other_width": points(runner_up.half_width),
        }


SET_ADVISOR_WHY = gettext_lazy(
    "Automatic picks %(mechanism)s: for %(k)s options of which at most %(l)s may be chosen, at ε = %(epsilon)s "
    "it gives the narrowest error band for each option's share (± %(width)s points), ahead of %(other)s "
    "(± %(other_width)s)."
)
SET_UNARY_EXPLANATION = gettext_lazy(
    "Your browser marks every option yes or no and flips each mark at random before sending "
    "(%(mechanism)s), so any option may look chosen or not, whatever you chose."
)
SET_PADDING_EXPLANATION = gettext_lazy(
    "Your browser fills your choices up to %(l)s with blanks, keeps one of them at random and sends it "
    "randomized (%(mechanism)s), so the report may name an option you did not choose."
)
