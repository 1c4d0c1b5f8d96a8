"""Question kinds: the one place that says how single choice, yes/no, number and rating differ.

Every kind answers the same few questions (as every Django model field answers ``formfield()``
and ``get_prep_value()``): which mechanisms it may use, how the builder's fields become its
options and range, which widget the answer page shows, and how its reports are summarized.
Everything else (submit, storage, tallies, raw exports) is the same for every kind, because every
``ldp`` mechanism has the same report interface: ``parse_report`` validates one report strictly,
``tally`` turns reports into integer counts per report cell, and those counts are the sufficient
statistics kept in the sharded tally cells (:mod:`surveys.responding.tallies`). For a numeric mechanism the
cells count each report index on its output grid; mean and variance are ``counts @ decode`` and
``counts @ decode**2`` (:meth:`ldp.numeric.base.NumericMechanism.estimate`), so a numeric
submission costs the same constant upsert as a choice.

A randomization's *summary* follows its mechanism's family (:func:`family`): categorical
mechanisms give shares, numeric ones a mean; the dashboard draws each with
``templates/surveys/kinds/<family>_result.html`` (``surveys.results.cards.SUMMARY_CARDS``). A
rating question may use either: the organizer picks which (``Question.rating_estimate``) and
:func:`recommend_rating_estimate` advises. A number question gives its mean, or with histogram
``bins`` the shares of equal-width ranges through a categorical mechanism. A short-answer (free
text) question reports hashed, normalized strings (``ldp.textreports``: text-cms, text-hcms or
RAPPOR); its summary is the "text" family: candidate strings the organizer queries afterwards,
each with its estimated count (``templates/surveys/kinds/text_result.html``). A multi-select
("choose all that apply") question reports a set of at most l of its options
(``ldp.multiselect``: unary encodings of the set, or padding-and-sampling); its summary is the
"multi" family: each option's share of respondents and the mean number of options chosen
(``templates/surveys/kinds/multi_result.html``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from ldp.advisor import Z_95, recommend
from ldp.crosstab import crosses_post_hoc, expected_errors
from ldp.estimates import FrequencyEstimate
from ldp.multiselect import SET_MECHANISMS, recommend_multiselect
from ldp.numeric import NUMERIC_MECHANISMS
from ldp.registry import family_of
from ldp.text import MAX_TEXT_LENGTH, candidate_list
from ldp.textreports import TEXT_MECHANISMS
from surveys.models import MAX_CANDIDATES, MAX_OPTIONS, MIN_OPTIONS, Question

CATEGORICAL_MECHANISMS = ("krr", "subset", "oue", "olh", "hadamard", "sue", "cms", "hcms", "dbitflip")
NUMERIC = tuple(NUMERIC_MECHANISMS)

#: A number question's range: finite, at most this far from zero (the browser's input must hold it).
RANGE_LIMIT = 1e9


class KindError(ValueError):
    """A builder field that does not fit the kind: ``field`` names it, the message says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def family(mechanism: str) -> str:
    """The mechanism's family (:func:`ldp.registry.family_of`): "shares", "mean", "multi" or "text"."""
    return family_of(mechanism)


@dataclass(frozen=True)
class QuestionKind:
    """What a kind of question is: its mechanisms, its options or range, its answer widget."""

    name: str
    answer_template: str
    """The answer page's widget (a partial under templates/surveys/kinds/)."""
    builder_template: str
    """What the builder's question card shows of its options or range."""
    families: tuple[str, ...] = ("shares",)
    result_card: str = ""
    """The dashboard card replacing its family's (``surveys/kinds/<card>_result.html``); empty: the family's."""
    frozen_fields: tuple[str, ...] = ()
    """Builder fields beyond kind, epsilon and mechanism that the randomization depends on."""

    def mechanisms(self, estimate: str | None = None) -> tuple[str, ...]:
        """The mechanisms a question of this kind may use (for one estimate family, if given)."""
        wanted = (estimate,) if estimate else self.families
        every = (*CATEGORICAL_MECHANISMS, *NUMERIC, *TEXT_MECHANISMS, *SET_MECHANISMS)
        return tuple(m for m in every if family(m) in wanted)

    def estimate_family(self, data: dict[str, Any]) -> str:
        """Which family the builder's data asks for ("shares" unless the kind says otherwise)."""
        return self.families[0]

    def options(self, data: dict[str, Any], question: Question | None) -> list[str]:
        """The answer labels from the builder's data; raise KindError."""
        return clean_option_lines(data.get("options_text") or [])

    def value_range(self, data: dict[str, Any]) -> tuple[float, float] | None:
        """The range [lo, hi] of a numeric report, or None for a categorical question."""
        return None

    def advice(self, scale: str, k: int, epsilon: float, n: int) -> str:
        """A sentence the builder shows under the question's costs (empty: none)."""
        return ""

    def mechanism_params(self, data: dict[str, Any]) -> dict[str, Any] | None:
        """The randomization's parameters the kind itself fixes (None: the mechanism's knobs decide)."""
        return None

    def advised_mechanism(self, data: dict[str, Any], n: int) -> str | None:
        """The mechanism "Automatic" picks for this kind (None: the choice advisor decides)."""
        return None

    def point_weights(self, question: Question) -> dict[str, list[float]]:
        """Linear summaries c . p of the question's shares p, by name (empty: none)."""
        return {}

    def builder_facts(self, question: Question, n: int) -> dict[str, Any]:
        """Extra figures its builder card shows at n expected respondents (empty: none)."""
        return {}


def clean_option_lines(options: list[str]) -> list[str]:
    if not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
        raise KindError(
            "options_text",
            _("Give between %(low)s and %(high)s options; you gave %(count)s.")
            % {"low": MIN_OPTIONS, "high": MAX_OPTIONS, "count": len(options)},
        )
    seen: set[str] = set()
    for option in options:
        if option.casefold() in seen:
            raise KindError("options_text", _("The option “%(option)s” appears twice.") % {"option": option})
        seen.add(option.casefold())
        if len(option) > 200:
            raise KindError("options_text", _("Options are at most 200 characters long."))
    return options


class YesNoKind(QuestionKind):
    def options(self, data: dict[str, Any], question: Question | None) -> list[str]:
        if question is not None and question.kind == Question.Kind.YES_NO and len(question.options) == 2:
            return list(question.options)  # keep their wording (and language) once set
        return [str(_("Yes")), str(_("No"))]


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
        return "shares" if data.get("bins") else "mean"

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


#: A number question's histogram: from 2 to 20 equal-width bins.
MIN_BINS, MAX_BINS = 2, 20


class RatingKind(QuestionKind):
    def estimate_family(self, data: dict[str, Any]) -> str:
        return "mean" if data.get("rating_estimate") == Question.RatingEstimate.MEAN else "shares"

    def options(self, data: dict[str, Any], question: Question | None) -> list[str]:
        low, high = scale_points(data.get("scale") or "")
        return [str(point) for point in range(low, high + 1)]

    def value_range(self, data: dict[str, Any]) -> tuple[float, float] | None:
        if self.estimate_family(data) != "mean":
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


class FreeTextKind(QuestionKind):
    """A short answer: no options; reported as a hashed, normalized string (``ldp.textreports``).

    The organizer may give candidate strings ("how many wrote X?") now or after reports arrive:
    they are normalized as the browser normalizes answers and do not change the randomization.
    """

    def options(self, data: dict[str, Any], question: Question | None) -> list[str]:
        return []


class MultiSelectKind(QuestionKind):
    """Choose all that apply: options as for a single choice, and at most l of them (``max_choices``;
    blank = no limit, l = k). The set is randomized as a whole under the question's epsilon
    (``ldp.multiselect``); l is a parameter of the randomization, so it is frozen with it.
    """

    def options(self, data: dict[str, Any], question: Question | None) -> list[str]:
        options = clean_option_lines(data.get("options_text") or [])
        limit = data.get("max_choices")
        if limit is not None and not 1 <= limit <= len(options):
            message = _("The most options one may choose must lie between 1 and the number of options (%(k)s).")
            raise KindError("max_choices", message % {"k": len(options)})
        return options

    def mechanism_params(self, data: dict[str, Any]) -> dict[str, Any] | None:
        return {"max_choices": data.get("max_choices") or len(data["options"])}

    def advised_mechanism(self, data: dict[str, Any], n: int) -> str | None:
        """:func:`ldp.multiselect.recommend_multiselect` for (k, l, epsilon, n)."""
        k = len(data["options"])
        return recommend_multiselect(k, self.mechanism_params(data)["max_choices"], data["epsilon"], n).best.mechanism


class MatrixItemKind(QuestionKind):
    """One row of a matrix (:class:`surveys.models.Matrix`): a choice question on the block's options.

    Items are made and their shared options reworded by the matrix's own form; an item's editor
    changes its wording, epsilon and mechanism only, so every row keeps the same options.
    """

    def options(self, data: dict[str, Any], question: Question | None) -> list[str]:
        if question is not None and question.matrix_id is not None:
            return list(question.options)
        raise KindError("kind", _("Matrix items are added with “Add a matrix”."))


class PairKind(QuestionKind):
    """A declared pair (:func:`surveys.actions.do_declare_pair`): two choice questions randomized as one
    answer over their k1 k2 combinations, with one epsilon that replaces both questions' own.

    Its result card is the pair's cross-tab with each question's marginal shares.
    """

    def options(self, data: dict[str, Any], question: Question | None) -> list[str]:
        if question is not None and question.pair_first_id is not None:
            return list(question.options)
        raise KindError("kind", _("Declared pairs are made with “Ask two questions jointly”."))

    def builder_facts(self, question: Question, n: int) -> dict[str, Any]:
        """Both ways' expected errors (widest 95 % cell band at evenly spread answers) and their epsilons;
        ``posthoc`` is False when a question's mechanism cannot be crossed post hoc (a count-mean sketch)."""
        first, second = question.pair_first, question.pair_second
        assert first is not None and second is not None
        try:
            mechanisms = (first.build_mechanism(), second.build_mechanism(), question.build_mechanism())
            errors = expected_errors(*mechanisms, n)  # type: ignore[arg-type]
        except ValueError:
            return {}
        posthoc = all(crosses_post_hoc(m) for m in mechanisms[:2])  # type: ignore[arg-type]
        return {"errors": errors, "first": first, "second": second, "posthoc": posthoc}


#: Kinds made by their own builder forms (a matrix's items, a declared pair), never chosen in the question form.
MADE_ELSEWHERE = (Question.Kind.MATRIX, Question.Kind.PAIR)


def clean_candidates(lines: list[str]) -> list[str]:
    """Candidate strings, normalized (:func:`ldp.text.candidate_list`), at most MAX_CANDIDATES; raise KindError."""
    too_long = [line for line in lines if len(line) > MAX_TEXT_LENGTH]
    if too_long:
        message = _("Candidate answers are at most %(length)s characters long.") % {"length": MAX_TEXT_LENGTH}
        raise KindError("candidates_text", message)
    candidates = list(candidate_list(lines))
    if len(candidates) > MAX_CANDIDATES:
        raise KindError("candidates_text", _("Give at most %(count)s candidate answers.") % {"count": MAX_CANDIDATES})
    return candidates


def _templates(name: str) -> tuple[str, str]:
    return f"surveys/kinds/{name}_answer.html", f"surveys/kinds/{name}_builder.html"


KINDS: dict[str, QuestionKind] = {
    Question.Kind.SINGLE_CHOICE: QuestionKind("single", *_templates("choice")),
    Question.Kind.YES_NO: YesNoKind("yes_no", *_templates("choice")),
    Question.Kind.NUMERIC: NumberKind(
        "numeric", *_templates("number"), families=("mean", "shares"), frozen_fields=("range_low", "range_high", "bins")
    ),
    Question.Kind.RATING: RatingKind(
        "rating", *_templates("rating"), families=("shares", "mean"), frozen_fields=("scale", "rating_estimate")
    ),
    Question.Kind.FREE_TEXT: FreeTextKind("text", *_templates("text"), families=("text",)),
    Question.Kind.MULTI_SELECT: MultiSelectKind(
        "multi_select", *_templates("multi"), families=("multi",), frozen_fields=("max_choices",)
    ),
    Question.Kind.MATRIX: MatrixItemKind("matrix", *_templates("matrix")),
    Question.Kind.PAIR: PairKind("pair", *_templates("pair"), result_card="pair"),
}


def kind_of(name: str) -> QuestionKind:
    return KINDS[name]


#: NPS: promoters (9-10) minus detractors (0-6), as shares of respondents.
NPS_SCALE = "0-10"


def linear_summary(weights: list[float], estimate: FrequencyEstimate) -> dict[str, float]:
    """c . p for unbiased shares p, its standard error sqrt(c' Cov(p) c), and its 95 % interval.

    Unbiased because p is; the covariance is the mechanism's analytic one (at a plug-in distribution).
    """
    c = np.asarray(weights, dtype=float)
    value = float(c @ estimate.proportions)
    error = float(np.sqrt(max(float(c @ estimate.covariance @ c), 0.0)))
    return {"value": value, "standard_error": error, "low": value - Z_95 * error, "high": value + Z_95 * error}


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
