"""The two descriptions every question has: its kind (:class:`QuestionKind`) and its summary (:class:`Summary`).

A *kind* says what the builder asks and the respondent sees (options or range, the mechanisms it may
use, the knobs it fixes, its answer and builder templates); a *summary* says what a randomization's
tally becomes (estimates, the results card, export rows, trend values, receipt words). The summary
follows the mechanism's family (:func:`ldp.registry.family_of`), except where a kind overrides it
(a declared pair's cross-tab): :func:`surveys.kinds.summary_for` is the one place that decides.

A summary reads a question's results through :class:`ResultView`, the part of
:class:`surveys.results.estimates.QuestionResult` it needs: :mod:`surveys.results` imports this
package, never the other way round, not even for the type checker.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np
from django.utils.translation import gettext as _

import ldp
from ldp.estimates import FrequencyEstimate, Interval
from ldp.multiselect import SharesEstimate
from ldp.numeric import MeanEstimate
from ldp.registry import family_of, names
from ldp.textreports import CandidateCounts
from surveys.models import MAX_OPTIONS, MIN_OPTIONS, Question, Randomization
from surveys.results import charts
from surveys.results.integrity import IntegrityCheck

#: Below this many reports, or while the expected error exceeds an even share, no estimate is shown.
MIN_REPORTS = 10
#: A mean is shown once its expected 95 % half-width is at most this share of the question's range.
MEAN_PRECISION = 0.10
#: A free-text question's reports needed: a candidate's share known within ± 10 points (95 %);
#: a multi-select option's share is shown once known this well, if an even share is narrower.
READABLE_SHARE = 0.10
#: Bump when the estimators change, so cached estimates from older code are not served.
ESTIMATES_VERSION = 7
#: Cached estimates never go stale (their key names the exact tally); this only bounds memory.
CACHE_SECONDS = 7 * 24 * 3600

#: How each estimate's 95 % band is made, as the page draws it (exported beside the numbers).
BAND_KINDS = {
    "unbiased": "normal",  # estimate +/- 1.96 standard errors (analytic covariance)
    "consistent": "unified",  # Feldman-Cousins intervals on [0, 1] (ldp.intervals.unified_interval)
}


class ResultView(Protocol):
    """One randomization's results as a summary reads them (read-only), which
    :class:`surveys.results.estimates.QuestionResult` satisfies."""

    @property
    def question(self) -> Question: ...
    @property
    def randomization(self) -> Randomization: ...
    @property
    def mechanism(self) -> Any: ...
    @property
    def n(self) -> int: ...
    @property
    def raw_counts(self) -> np.ndarray: ...
    @property
    def unbiased(self) -> FrequencyEstimate | None: ...
    @property
    def consistent(self) -> FrequencyEstimate | None: ...
    @property
    def expected_half_width(self) -> float | None: ...
    @property
    def digest(self) -> str: ...
    @property
    def integrity(self) -> IntegrityCheck | None: ...
    @property
    def mean(self) -> MeanEstimate | None: ...
    @property
    def text(self) -> CandidateCounts | None: ...
    @property
    def multi(self) -> SharesEstimate | None: ...
    @property
    def pooled(self) -> tuple[Randomization, ...]: ...
    @property
    def question_kind(self) -> QuestionKind: ...
    @property
    def summary(self) -> Summary: ...
    @property
    def enough(self) -> bool: ...
    @property
    def reports_needed(self) -> int: ...
    def estimate(self, which: Literal["consistent", "unbiased"]) -> FrequencyEstimate | None: ...
    def bands(self, kind: Literal["consistent", "unbiased"], bands: str) -> Interval: ...


class KindError(ValueError):
    """A builder field that does not fit the kind: ``field`` names it, the message says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Estimates:
    """What a tally yields; computed once per (randomization, tally digest) and cached."""

    unbiased: FrequencyEstimate | None
    consistent: FrequencyEstimate | None
    expected_half_width: float | None
    """Expected 95 % half-width at the current n (evenly spread answers); None before any report.

    For a numeric mechanism: of the mean, in the question's units (worst case over values)."""
    mean: MeanEstimate | None = None
    joint: Interval | None = None
    """95 % bands that hold for all options at once (``Mechanism.simultaneous_bands``: Šidák's level)."""
    multi: SharesEstimate | None = None
    """Multi-select: each option's share, their bands and the mean number of options chosen."""


def randomization_digest(randomization: Randomization) -> str:
    """Names a randomization by id *and* parameters, so a reused id can never meet a stale entry."""
    material = json.dumps([randomization.pk, *randomization.key()], sort_keys=True)
    return hashlib.blake2b(material.encode(), digest_size=8).hexdigest()


Found = tuple[np.ndarray, np.ndarray] | None


class Summary:
    """What a randomization's tally becomes, for one family of mechanisms (the result-side hooks).

    ``name`` names its card (``templates/surveys/kinds/<name>_result.html``); ``takes`` is what the
    browser randomizes ("index", "value", "set" or "text": the answer page's ``data-takes``);
    ``tally_export``: the estimates export's key for its raw tallies;
    ``per_option``: its trend has one value per option, so rounds whose options differ are not compared;
    ``percent``: its values are shares (a mean's are in the question's units).
    """

    name = ""
    takes = "index"
    per_option = False
    percent = True
    tally_export = ""
    choice_reports = False
    """Each report randomizes one option of k (a categorical mechanism): it may be declared a pair."""
    queries_candidates = False
    """Its estimates count candidate strings the organizer gives (free text): the results page asks for them."""
    """The estimates export's key for its raw tallies (:meth:`tally_record`); empty: none."""

    misfit: Any = ""
    """The builder's error when the chosen mechanism does not give this summary."""
    keeps_built_params = False
    """The built mechanism's own parameters (a number's grid, a sketch's shape) are stored with the form's."""
    samples = False
    """Its question may be one of a sampled pool (:mod:`surveys.sampling`): a fake answer's report is
    a uniform option's, which :meth:`sampled_estimates` corrects for."""

    def advise(self, data: dict[str, Any], value_range: Any, n: int, recurring: bool) -> tuple[str, dict[str, Any]]:
        """What "Automatic" picks for the builder's data at n expected respondents: (mechanism, its knobs)."""
        raise NotImplementedError

    def form_params(self, data: dict[str, Any], value_range: Any, previous_seed: int | None) -> dict[str, Any]:
        """The randomization's parameters from the builder's data and the chosen mechanism; raise KindError.

        Where the parameters fix epsilon (a design given in the literature's parameters, a question
        asked directly) it restates ``data["epsilon"]``."""
        return {}

    def knob_fields(self, mechanism: str) -> set[str]:
        """The builder fields that are the mechanism's knobs (frozen with its randomization)."""
        return set()

    def estimates(self, mechanism: Any, tally: ldp.Tally) -> Estimates:
        """The tally's estimates (at least one report)."""
        raise NotImplementedError

    def sampled_estimates(self, mechanism: Any, tally: ldp.Tally, m: int, q: int) -> Estimates:
        """The tally's estimates when each respondent really answered the question with chance m / q
        and sent a fake answer's report otherwise (only where :attr:`samples`)."""
        raise NotImplementedError

    def raw_counts(self, mechanism: Any, counts: np.ndarray) -> np.ndarray:
        """The per-option number a reader can relate to the reports (:attr:`raw_count_label`)."""
        return counts

    def raw_count_label(self, mechanism_name: str) -> str:
        return ""

    def text_query(self, randomization: Randomization, tally: ldp.Tally, digest: str, candidates: list[str]) -> Any:
        """(candidate counts, why not): free text's query of the organizer's candidates; (None, "") elsewhere."""
        return None, ""

    def target(self, result: ResultView) -> float:
        """The largest expected 95 % half-width at which the page shows the estimate."""
        raise NotImplementedError

    def enough(self, result: ResultView) -> bool:
        """Whether the estimate means something: MIN_REPORTS reports, and its error within :meth:`target`."""
        raise NotImplementedError

    def reports_needed(self, result: ResultView) -> int:
        """Reports needed for the expected half-width :meth:`enough` asks for; error ~ 1/sqrt(n)."""
        raise NotImplementedError

    def card(self, result: ResultView, kind: str, view: dict[str, Any]) -> None:
        """Fill the results card's ``view`` (rows, chart...) for a result with enough reports."""
        raise NotImplementedError

    def few(self, result: ResultView, view: dict[str, Any]) -> None:
        """Fill ``view`` with what can honestly be said of a result with reports but too few for its
        card (:meth:`enough` is False): nothing unless overridden."""

    def export_rows(self, result: ResultView) -> Iterator[dict[str, Any]]:
        """The estimates export's rows of a result with reports."""
        raise NotImplementedError

    def tally_record(self, question: Question, randomization: Randomization, tally: ldp.Tally) -> dict[str, Any]:
        """The raw-tally export's record of a randomization with reports (when :attr:`tally_export` is set)."""
        raise NotImplementedError

    def trend_labels(self, question: Question) -> list[str]:
        """A trend's labels: one per value of :meth:`round_values`."""
        return list(question.options) if self.per_option else [""]

    def bounds(self, result: ResultView) -> tuple[float, float]:
        """The feasible range of each value of :meth:`round_values`: a share's [0, 1] unless overridden."""
        return 0.0, 1.0

    def round_values(self, result: ResultView, labels: list[str], tally: ldp.Tally) -> Found:
        """One round's unbiased values and standard errors (None: not estimated)."""
        raise NotImplementedError

    def cost(self, mechanism: Any, n: int, unit: str, advice: str, recurring: bool) -> Any:
        """The builder's and answer page's cost description (:mod:`surveys.costs`)."""
        raise NotImplementedError

    def describe(self, mechanism: Any, options: list[str], report: dict[str, Any]) -> str:
        """A stored report in words, for the respondent's receipt."""
        raise NotImplementedError

    def chance(self, mechanism: Any) -> str:
        """How much the report says about the true answer, in one sentence (empty: nothing to say)."""
        return ""


def common_columns(result: ResultView) -> dict[str, Any]:
    """The estimates export's columns that every row of a result shares. ``versions``: the versions of
    the randomization whose reports the estimate combines, oldest first (a two-phase design's two,
    :mod:`surveys.kinds.adaptive`; else ``version`` alone); ``version``, ``mechanism``, ``k``,
    ``epsilon`` and ``params`` are the newest's, as the raw counts."""
    r = result.randomization
    return {
        "round": result.question.survey.round_number,
        "question_id": result.question.pk,
        "question": result.question.text,
        "kind": result.question.kind,
        "version": r.version,
        "versions": [v.version for v in result.pooled] or [r.version],
        "mechanism": r.mechanism,
        "k": r.k,
        "epsilon": r.epsilon,
        "params": r.params,
        "n": result.n,
        "enough": result.enough,
        "expected_half_width": result.expected_half_width,
        "reports_needed": result.reports_needed,
    }


def summary_columns(
    statistic: str, value: dict[str, float], bounds: tuple[float, float] | None = None
) -> dict[str, Any]:
    """A mean's or NPS's row: the unbiased columns hold it; option columns stay empty. With ``bounds``
    the consistent columns hold it clipped to them (:func:`feasible_summary`)."""
    row = {
        "statistic": statistic,
        "unbiased": value["value"],
        "standard_error": value["standard_error"],
        "unbiased_low": value["low"],
        "unbiased_high": value["high"],
        "unbiased_band": BAND_KINDS["unbiased"],
    }
    if bounds is not None:
        clipped = feasible_summary(value, bounds)
        row |= {"consistent": clipped["value"], "consistent_low": clipped["low"], "consistent_high": clipped["high"]}
        row |= {"consistent_method": "clip", "consistent_band": BAND_KINDS["unbiased"]}
    return row


def feasible_summary(value: dict[str, float], bounds: tuple[float, float]) -> dict[str, float]:
    """A mean (or any c . p) and its 95 % interval cut to its feasible range [lo, hi]: clip(v, lo, hi).

    The true value lies in [lo, hi], so the projection is never farther from it than the unbiased
    value, and the interval intersected with [lo, hi] covers it exactly when the interval does.
    """
    lo, hi = bounds
    return {**value, **{key: min(max(float(value[key]), lo), hi) for key in ("value", "low", "high")}}


@dataclass(frozen=True)
class QuestionKind:
    """What a kind of question is: its mechanisms, its options or range, its answer widget."""

    name: str
    answer_template: str
    """The answer page's widget (a partial under templates/surveys/kinds/)."""
    builder_template: str
    """What the builder's question card shows of its options or range."""
    families: tuple[str, ...] = ("shares",)
    frozen_fields: tuple[str, ...] = ()
    """Builder fields beyond kind, epsilon and mechanism that the randomization depends on."""
    made_elsewhere: bool = False
    """Made by its own builder form (a matrix's items, a declared pair), never chosen in the question form."""
    summary: Summary | None = None
    """The summary its results use whatever the mechanism (a declared pair's cross-tab); None: the family's."""
    condition_operators: tuple[str, ...] = ()
    """How a later question's condition may test its answer (:data:`ldp.branching.OPERATORS`): "in"
    (the option chosen is one of several), "between" (the answer's value lies in a range); empty:
    it cannot decide a branch."""
    shuffles_options: bool = False
    """Its options may be shown in a random order per respondent (drawn in the browser, never sent)."""
    offers_prefer_not_to_say: bool = False
    """The builder may add a last option, "Prefer not to say", randomized like the others, whose report
    a skip sends (:meth:`skip_index`)."""
    adapts: bool = False
    """The builder may give it a two-phase design, re-tuned after the first respondents
    (:mod:`surveys.kinds.adaptive`)."""

    def mechanisms(self, estimate: str | None = None) -> tuple[str, ...]:
        """The mechanisms a question of this kind may use (for one estimate family, if given)."""
        wanted = (estimate,) if estimate else self.families
        return tuple(m for m in names() if family_of(m) in wanted)

    def estimate_family(self, data: dict[str, Any]) -> str:
        """Which family the builder's data asks for (the kind's first unless it says otherwise)."""
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

    def candidates(self, data: dict[str, Any]) -> list[str] | None:
        """The candidate strings the organizer gave, cleaned; raise KindError (None: the kind has none)."""
        return None

    def allows(self, mechanism: str, estimate: str) -> bool:
        """Whether a question of this kind may use the mechanism for this estimate family."""
        return mechanism in self.mechanisms(estimate)

    def point_weights(self, question: Question) -> dict[str, list[float]]:
        """Linear summaries c . p of the question's shares p, by name (empty: none)."""
        return {}

    def builder_facts(self, question: Question, n: int) -> dict[str, Any]:
        """Extra figures its builder card shows at n expected respondents (empty: none)."""
        return {}

    def skip_index(self, question: Question) -> int | None:
        """The option whose randomized report the browser sends when the respondent sees the question and
        leaves it empty: its "Prefer not to say" (:attr:`surveys.models.Question.prefer_not_index`); None:
        the family's fill answer (:data:`ldp.families.FILLS`), as for a question not shown."""
        return question.prefer_not_index

    def demo_truth(self, sources: Any) -> Any:
        """The demo survey's truth for a question of this kind (:func:`surveys.demo.demo_truths`):
        ``sources.plain`` (the next plain question's shares), ``sources.matrix`` (the next matrix
        item's) or ``sources.joint`` (a declared pair's joint shares)."""
        return next(sources.plain)

    def demo_reports(self, question: Question, mechanism: Any, truth: Any, size: int, rng: Any) -> list[bytes]:
        """``size`` simulated respondents' packed reports, randomized as their browsers would:
        each answer drawn from ``truth`` (the shares of the options)."""
        answers = rng.choice(len(truth), size=size, p=truth)
        return [row.tobytes() for row in mechanism.randomize(answers, rng=rng)]


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


def bars_chart(result: ResultView, name: str, labels: list[str], columns: list[Any], *parts: str) -> str:
    """:func:`surveys.results.charts.estimate_bars` of (share, low, high) per label, drawn once per
    (randomization, tally, ``parts``, labels, language)."""
    material = [
        randomization_digest(result.randomization),
        result.digest,
        *parts,
        charts.short_digest(json.dumps(labels)),
    ]
    return charts.cached_chart(name, material, lambda: charts.estimate_bars(labels, *np.array(columns, dtype=float).T))
