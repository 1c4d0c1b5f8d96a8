"""Question kinds and summaries: the one place that knows what a kind, a family or a mechanism is.

Add a question kind
-------------------
1. ``ldp/``: its mechanism(s), if no existing family fits (the checklist in :mod:`ldp.registry`:
   the class, its name in ``NAMES``, the JavaScript mirror and fixture, exact privacy tests).
2. One module here, ``surveys/kinds/<kind>.py``: a :class:`~surveys.kinds.base.QuestionKind`
   subclass that fills what differs from a single choice (each hook has a default):
   ``options`` (validate the builder's fields, raise ``KindError``), ``value_range``,
   ``estimate_family``, ``mechanism_params`` (knobs the kind fixes), ``candidates``, ``advice``,
   ``point_weights``, ``builder_facts``, ``demo_truth`` and ``demo_reports``; its attributes
   ``families`` (which summaries its mechanisms give), ``frozen_fields``, ``made_elsewhere``
   and ``summary`` (a summary of its own, as a declared pair's cross-tab).
   For a new family, a :class:`~surveys.kinds.base.Summary` in the same module, entered in
   :data:`SUMMARIES`: the builder's ``advise`` ("Automatic"), ``form_params``, ``knob_fields``,
   ``misfit``, ``cost``; the results' ``estimates``, ``raw_counts``, ``enough``,
   ``reports_needed``, ``card``, ``export_rows``, ``tally_record``, ``trend_labels``,
   ``round_values``; the receipt's ``describe`` and ``chance``; ``takes`` (what the browser
   randomizes), ``per_option``, ``percent``, ``queries_candidates``, ``tally_export``.
3. Its entry in :data:`KINDS` and its value in ``surveys.models.Question.Kind`` (a migration).
4. Templates: ``templates/surveys/kinds/<kind>_answer.html`` (the answer widget) and
   ``<kind>_builder.html`` (the builder card); for a new summary ``<summary>_result.html``; the
   builder form's ``data-kinds`` fields in ``templates/surveys/survey_detail.html``.
5. Tests: ``tests/surveys/test_<kind>.py`` (builder, answer page, submit, results, exports), a
   browser walkthrough if it has a new widget, and ``tests/surveys/test_dispatch.py`` stays green
   (no module outside this package may branch on the new kind's name).

Every kind answers the same few questions (as every Django model field answers ``formfield()``
and ``get_prep_value()``): which mechanisms it may use, how the builder's fields become its
options and range, which widget the answer page shows. A randomization's *summary* follows its
mechanism's family (:func:`ldp.registry.family_of`): categorical mechanisms give shares
(:mod:`~surveys.kinds.shares`), numeric ones a mean (:mod:`~surveys.kinds.mean`), set mechanisms a
multi-select's shares (:mod:`~surveys.kinds.multi_select`), text mechanisms candidate counts
(:mod:`~surveys.kinds.text`); a declared pair shows its shares as a cross-tab
(:mod:`~surveys.kinds.pair`). :func:`summary_for` is the only function that decides which.
Everything else (submit, storage, tallies, raw exports) is the same for every kind, because every
``ldp`` mechanism has the same report interface (:class:`ldp.registry.LDPMechanism`).
"""

from __future__ import annotations

from typing import Any

from ldp import registry
from ldp.registry import family_of
from surveys.kinds.base import (
    BAND_KINDS,
    CACHE_SECONDS,
    ESTIMATES_VERSION,
    MEAN_PRECISION,
    MIN_REPORTS,
    READABLE_SHARE,
    Estimates,
    KindError,
    QuestionKind,
    Summary,
    clean_option_lines,
    randomization_digest,
)
from surveys.kinds.choice import ChoiceKind, YesNoKind, prefer_not_labels
from surveys.kinds.direct import DirectSummary
from surveys.kinds.matrix import MatrixItemKind
from surveys.kinds.mean import MeanSummary, Synthetic, synthetic
from surveys.kinds.multi_select import MultiSelectKind, MultiSummary
from surveys.kinds.number import MAX_BINS, MIN_BINS, RANGE_LIMIT, NumberKind
from surveys.kinds.pair import PairKind, PairSummary
from surveys.kinds.rating import (
    NPS_SCALE,
    RATING_ADVICE,
    SHARES_PRECISE_ENOUGH,
    RatingKind,
    recommend_rating_estimate,
    scale_points,
)
from surveys.kinds.shares import SharesSummary, linear_summary
from surveys.kinds.text import TEXT_ALPHA, UNCOUNTABLE, FreeTextKind, TextSummary, cached_text_query, clean_candidates
from surveys.models import Question, build_mechanism

__all__ = [
    "CACHE_SECONDS",
    "ESTIMATES_VERSION",
    "KINDS",
    "MAX_BINS",
    "MEAN_PRECISION",
    "MIN_BINS",
    "MIN_REPORTS",
    "NPS_SCALE",
    "RANGE_LIMIT",
    "RATING_ADVICE",
    "READABLE_SHARE",
    "SHARES_PRECISE_ENOUGH",
    "SUMMARIES",
    "BAND_KINDS",
    "TEXT_ALPHA",
    "UNCOUNTABLE",
    "Estimates",
    "KindError",
    "QuestionKind",
    "Summary",
    "Synthetic",
    "cached_text_query",
    "clean_candidates",
    "clean_option_lines",
    "adaptive_kinds",
    "advise",
    "build_randomization",
    "cost_of",
    "knob_fields",
    "misfit",
    "kind_of",
    "linear_summary",
    "randomization_digest",
    "randomized_only",
    "recommend_rating_estimate",
    "prefer_not_kinds",
    "options_as_written",
    "scale_points",
    "skip_index",
    "summary_for",
    "summary_of",
    "synthetic",
]


def _templates(name: str) -> tuple[str, str]:
    return f"surveys/kinds/{name}_answer.html", f"surveys/kinds/{name}_builder.html"


KINDS: dict[str, QuestionKind] = {
    # "Prefer not to say" on single choice and yes/no only: a rating's mean and NPS are linear in its
    # points' shares, which an option without a value would break; a number, a multi-select and a short
    # answer have no single option for it; a matrix's options are its block's (docs/branching.md).
    Question.Kind.SINGLE_CHOICE: ChoiceKind(
        "single",
        *_templates("choice"),
        frozen_fields=("prefer_not_to_say", "adaptive", "adaptive_percent"),
        condition_operators=("in",),
        shuffles_options=True,
        offers_prefer_not_to_say=True,
        adapts=True,
    ),
    Question.Kind.YES_NO: YesNoKind(
        "yes_no",
        *_templates("choice"),
        frozen_fields=("prefer_not_to_say",),
        condition_operators=("in",),
        offers_prefer_not_to_say=True,
    ),
    Question.Kind.NUMERIC: NumberKind(
        "numeric",
        *_templates("number"),
        families=("mean", "shares"),
        frozen_fields=("range_low", "range_high", "bins"),
        condition_operators=("between",),
    ),
    Question.Kind.RATING: RatingKind(
        "rating",
        *_templates("rating"),
        families=("shares", "mean"),
        frozen_fields=("scale", "rating_estimate"),
        condition_operators=("in", "between"),
    ),
    Question.Kind.FREE_TEXT: FreeTextKind("text", *_templates("text"), families=("text",)),
    Question.Kind.MULTI_SELECT: MultiSelectKind(
        "multi_select", *_templates("multi"), families=("multi",), frozen_fields=("max_choices",), shuffles_options=True
    ),
    Question.Kind.MATRIX: MatrixItemKind("matrix", *_templates("matrix"), made_elsewhere=True),
    Question.Kind.PAIR: PairKind("pair", *_templates("pair"), made_elsewhere=True, summary=PairSummary()),
}

#: Each family's summary (:func:`ldp.registry.family_of`).
SUMMARIES: dict[str, Summary] = {
    "shares": SharesSummary(),
    "mean": MeanSummary(),
    "text": TextSummary(),
    "multi": MultiSummary(),
}

#: A question asked directly (:data:`ldp.registry.NOT_RANDOMIZED`): its own summary in the shares family.
DIRECT = DirectSummary()


def kind_of(name: str) -> QuestionKind:
    return KINDS[name]


def summary_of(mechanism: str) -> Summary:
    """The summary of the mechanism's family, whatever the question (costs, receipts, raw tallies); a
    question asked directly has its own (:class:`~surveys.kinds.direct.DirectSummary`)."""
    if not registry.randomized(mechanism):
        return DIRECT  # asked directly: counts of groups large enough only (surveys.kinds.direct)
    return SUMMARIES[family_of(mechanism)]


def summary_for(kind: str, mechanism: str) -> Summary:
    """Which summary a question of this kind randomized by this mechanism uses: the one dispatch point.

    The mechanism's family decides (:func:`summary_of`), except that a declared pair's shares are
    shown and exported as its cross-tab (:class:`~surveys.kinds.pair.PairSummary`).
    """
    return KINDS[kind].summary or summary_of(mechanism)


def skip_index(question: Question) -> int | None:
    """The option a shown question left empty sends (:meth:`~surveys.kinds.base.QuestionKind.skip_index`):
    the answer page's spec entry carries it as ``skip``; None: the family's fill answer."""
    return KINDS[question.kind].skip_index(question)


def adaptive_kinds() -> str:
    """The kinds whose builder offers a two-phase design, space-separated (the form's ``data-kinds``)."""
    return " ".join(name for name, kind in KINDS.items() if kind.adapts)


def prefer_not_kinds() -> str:
    """The kinds whose builder offers "Prefer not to say", space-separated (the form's ``data-kinds``)."""
    return " ".join(name for name, kind in KINDS.items() if kind.offers_prefer_not_to_say)


def options_as_written(kind: str, options: list[str], prefer_not_to_say: bool, question: Question | None) -> list[str]:
    """``options`` as the builder's option lines take them: the organizer's own. A question offering
    "Prefer not to say" is read back with Murmur's label last (the API's ``options``); given back so,
    with the offer kept, that last label is Murmur's and is dropped, as the builder adds it again. A
    label anywhere else stays, and the builder refuses it."""
    described = KINDS.get(kind)
    if not (options and prefer_not_to_say and described is not None and described.offers_prefer_not_to_say):
        return options
    return options[:-1] if options[-1].casefold() in prefer_not_labels(question) else options


def randomized_only(reports: Any) -> Any:
    """A queryset of reports without the answers of questions asked directly: a raw row is a group of
    one, and no group of a direct question smaller than :data:`~surveys.kinds.designs.SMALL_GROUP`
    may leave the server (:mod:`surveys.kinds.direct`)."""
    return reports.exclude(randomization__mechanism__in=registry.NOT_RANDOMIZED)


def build_randomization(
    kind: QuestionKind, data: dict[str, Any], value_range: Any, previous_seed: int | None = None
) -> tuple[dict[str, Any], Any]:
    """(parameters, mechanism) of the builder's cleaned data: the kind's own parameters where it fixes
    them (a multi-select question's l), else the summary's (:meth:`~surveys.kinds.base.Summary.form_params`),
    with the built mechanism's own where the summary keeps them. Raise KindError for a knob that does
    not fit, ValueError for parameters the mechanism refuses."""
    summary = SUMMARIES[kind.estimate_family(data)]
    k, name = len(data["options"]), data["mechanism"]
    params = kind.mechanism_params(data)
    if params is not None:
        return params, build_mechanism(name, k, data["epsilon"], params)
    # A design's literature parameters (or a question asked directly) restate data["epsilon"].
    params = summary.form_params(data, value_range, previous_seed)
    built = registry.build(name, epsilon=data["epsilon"], k=k, **params)
    return ({**params, **built.params()} if summary.keeps_built_params else params), built


def misfit(estimate: str) -> Any:
    """The builder's error when the mechanism chosen does not give the ``estimate`` family's summary."""
    return SUMMARIES[estimate].misfit


def advise(
    kind: QuestionKind, data: dict[str, Any], value_range: Any, n: int, recurring: bool
) -> tuple[str, dict[str, Any]]:
    """What "Automatic" picks for the builder's data: its estimate family's advisor
    (:meth:`~surveys.kinds.base.Summary.advise`)."""
    return SUMMARIES[kind.estimate_family(data)].advise(data, value_range, n, recurring)


def knob_fields(mechanism: str) -> set[str]:
    """The builder fields that are the mechanism's knobs (:meth:`~surveys.kinds.base.Summary.knob_fields`)."""
    return summary_of(mechanism).knob_fields(mechanism)


def cost_of(mechanism: Any, n: int, unit: str = "", advice: str = "", recurring: bool = False) -> Any:
    """The cost description of any mechanism (:mod:`surveys.costs`), by its summary. ``recurring``: the
    question is in a recurring survey, where "Automatic" picks among the memoized mechanisms."""
    return summary_of(mechanism.name).cost(mechanism, n, unit, advice, recurring)
