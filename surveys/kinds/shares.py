"""The "shares" summary: each option's share of one choice (the categorical mechanisms, :mod:`ldp.mechanisms`).

Estimates are the mechanism's unbiased shares and their consistent adjustment
(:meth:`ldp.mechanisms.base.Mechanism.consistent_estimate`), with bands for each option and for all
at once (Šidák's level, :meth:`~ldp.mechanisms.base.Mechanism.simultaneous_bands`). A rating's mean
and NPS are linear summaries c . p of the shares (:func:`linear_summary`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

import ldp
from ldp.advisor import Z_95, expected_half_width, recommend
from ldp.estimates import FrequencyEstimate, Interval
from ldp.mechanisms import HadamardResponse, KRandomizedResponse, make_mechanism
from ldp.mechanisms.bitflip import SampledUnaryEncoding
from ldp.mechanisms.local_hashing import optimal_range_size
from ldp.mechanisms.subset import optimal_subset_size
from ldp.sampling import expected_sampled_half_width, sampled_estimate
from surveys.costs import QuestionCost, cached_figure, respondents_for
from surveys.kinds.base import (
    BAND_KINDS,
    MIN_REPORTS,
    Estimates,
    Found,
    KindError,
    ResultView,
    Summary,
    common_columns,
    feasible_summary,
    randomization_digest,
    summary_columns,
)
from surveys.kinds.designs import DESIGN_KNOBS, design_form_params, is_design, is_direct
from surveys.results import charts, integrity
from surveys.series import memoization
from surveys.templatetags.murmur import percent

#: What :meth:`SharesSummary.raw_counts` counts, per mechanism, as the results table's column heading.
RAW_COUNT_LABELS = {
    "krr": gettext_lazy("Reports naming it"),
    "subset": gettext_lazy("Reports whose set holds it"),
    "olh": gettext_lazy("Reports hashing it to their value"),
    "hadamard": gettext_lazy("Reports in its half"),
    "cms": gettext_lazy("Reports with +1 at its cell"),
    "hcms": gettext_lazy("Reports agreeing with its sign"),
    "dbitflip": gettext_lazy("Reports with its bit = 1"),
    "sue": gettext_lazy("Reports with its bit = 1"),
    "oue": gettext_lazy("Reports with its bit = 1"),
    "forced-response": gettext_lazy("Reports naming it"),
    "unrelated-question": gettext_lazy("Reports naming it"),
    "warner": gettext_lazy("Reports amounting to it"),
    "crosswise": gettext_lazy("Reports “same” (for yes) or “different” (for no)"),
    "direct": gettext_lazy("Respondents"),
}


def linear_summary(weights: list[float], estimate: FrequencyEstimate) -> dict[str, float]:
    """c . p for unbiased shares p, its standard error sqrt(c' Cov(p) c), and its 95 % interval.

    Unbiased because p is; the covariance is the mechanism's analytic one (at a plug-in distribution).
    """
    c = np.asarray(weights, dtype=float)
    value = float(c @ estimate.proportions)
    error = float(np.sqrt(max(float(c @ estimate.covariance @ c), 0.0)))
    return {"value": value, "standard_error": error, "low": value - Z_95 * error, "high": value + Z_95 * error}


def option_labels(options: list[str], indexes: Iterable[int]) -> str:
    """The options at ``indexes``, quoted, for a receipt ("none" when there are none)."""
    chosen = [f"“{options[i]}”" for i in indexes if 0 <= i < len(options)]
    return ", ".join(chosen) if chosen else _("none")


#: Builder fields that are a mechanism's knobs, frozen with its randomization.
KNOB_FIELDS = {"dbitflip": {"d"}, "cms": {"hash_count", "width"}, "hcms": {"hash_count", "width"}}


class SharesSummary(Summary):
    name = "shares"
    per_option = True
    choice_reports = True
    samples = True
    misfit = gettext_lazy("This estimate needs a mechanism for choices (k-RR, OUE, …), not one for numbers.")

    def advise(self, data: dict[str, Any], value_range: Any, n: int, recurring: bool) -> tuple[str, dict[str, Any]]:
        """The narrowest band (:func:`ldp.advisor.recommend`) with its knobs d / hash_count / width; in a
        recurring survey the best memoized one (:func:`surveys.series.memoization.memoized_choice`)."""
        k, epsilon = len(data["options"]), data["epsilon"]
        best = (memoization.memoized_choice(k, epsilon, n) if recurring else None) or recommend(k, epsilon, n).best
        return best.mechanism, {name: best.params[name] for name in ("d", "hash_count", "width") if name in best.params}

    def form_params(self, data: dict[str, Any], value_range: Any, previous_seed: int | None) -> dict[str, Any]:
        """The chosen mechanism's knobs: dBitFlip's d, CMS / HCMS's hash functions, width and a working
        hash seed; OLH's range size and subset selection's size, chosen from k and epsilon and stored
        so that reports stay tied to exact parameters."""
        k, name = len(data["options"]), data["mechanism"]
        if is_design(name) or is_direct(name):
            return design_form_params(name, k, data)
        if name == "dbitflip":
            d = data.get("d") or k
            if d > k:
                raise KindError("d", _("d cannot exceed the number of options (%(k)s).") % {"k": k})
            return {"d": d}
        if name in ("cms", "hcms"):
            hash_count = data.get("hash_count") or 512
            width = data.get("width") or 128
            if name == "hcms" and width & (width - 1):
                raise KindError("width", _("HCMS needs a power of 2 for the sketch width m (e.g. 64, 128, 256)."))
            seed = hash_seed(name, k, hash_count, width, previous_seed)
            return {"hash_count": hash_count, "width": width, "hash_seed": seed}
        if name == "olh":
            return {"range_size": optimal_range_size(k, data["epsilon"])}
        if name == "subset":
            return {"subset_size": optimal_subset_size(k, data["epsilon"])}
        return {}

    def knob_fields(self, mechanism: str) -> set[str]:
        return KNOB_FIELDS.get(mechanism, set()) | DESIGN_KNOBS.get(mechanism, set())

    def estimates(self, mechanism: Any, tally: ldp.Tally) -> Estimates:
        return Estimates(
            unbiased=mechanism.estimate(tally),
            consistent=mechanism.consistent_estimate(tally, "auto"),
            expected_half_width=expected_half_width(mechanism, tally.n),
            joint=mechanism.simultaneous_bands(tally),
        )

    def sampled_estimates(self, mechanism: Any, tally: ldp.Tally, m: int, q: int) -> Estimates:
        """RS+FD's correction (:func:`ldp.sampling.sampled_estimate`): f = (g - (1 - m/q) / k) / (m/q), its
        covariance the mixture's divided by (m/q)^2; the consistent shares are its Norm-Sub projection
        with the unbiased bands cut to [0, 1]."""
        unbiased = sampled_estimate(mechanism, tally, m, q)
        low, high = unbiased.confidence_interval(0.95)
        bands = Interval(np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0))
        return Estimates(
            unbiased=unbiased,
            consistent=unbiased.consistent("norm-sub", bands=bands),
            expected_half_width=expected_sampled_half_width(mechanism, tally.n, m / q),
        )

    def raw_counts(self, mechanism: Any, counts: np.ndarray) -> np.ndarray:
        """Unary encodings tally sampled and one-bits: the second half. Hadamard response tallies report
        indices: the reports in each option's half are summed from them."""
        if isinstance(mechanism, SampledUnaryEncoding):
            return counts[mechanism.k :]
        if isinstance(mechanism, HadamardResponse):
            return (counts @ mechanism.membership.T).astype(np.int64)
        return counts

    def raw_count_label(self, mechanism_name: str) -> str:
        return str(RAW_COUNT_LABELS[mechanism_name])

    def target(self, result: ResultView) -> float:
        """An even share, 1/k."""
        return 1 / result.mechanism.k

    def enough(self, result: ResultView) -> bool:
        """MIN_REPORTS reports, and an expected half-width below an even share (1/k)."""
        return (
            result.unbiased is not None
            and result.n >= MIN_REPORTS
            and result.expected_half_width is not None
            and result.expected_half_width <= self.target(result)
        )

    def reports_needed(self, result: ResultView) -> int:
        return respondents_for(expected_half_width(result.mechanism, 1), self.target(result), 1)

    def card(self, result: ResultView, kind: str, view: dict[str, Any]) -> None:
        """Each option's share with its band; for a rating scale also its mean (and NPS on 0-10)."""
        estimate = result.estimate(kind)  # type: ignore[arg-type]
        assert estimate is not None and result.unbiased is not None
        low, high = result.bands(kind, view["bands"])  # type: ignore[arg-type]
        view["chart"] = estimate_chart(result, kind, view["bands"])
        view["rows"] = [
            {
                "label": label,
                "estimate": estimate.proportions[i],
                "standard_error": estimate.standard_errors[i],
                "low": low[i],
                "high": high[i],
                "raw": int(result.raw_counts[i]),
            }
            for i, label in enumerate(result.question.options)
        ]
        view["summaries"] = linear_summaries(result, kind)

    def few(self, result: ResultView, view: dict[str, Any]) -> None:
        """Each option's consistent 95 % band (unified intervals, within [0, 1]): however wide, it says
        "at most ... chose it" (and "at least ..." once its low end leaves 0)."""
        if result.consistent is None:
            return
        low, high = result.bands("consistent", "option")
        view["few"] = [
            {"label": label, "low": float(low[i]), "high": float(high[i])}
            for i, label in enumerate(result.question.options)
        ]

    def export_rows(self, result: ResultView) -> Iterator[dict[str, Any]]:
        unbiased, consistent = result.unbiased, result.consistent
        if unbiased is None or consistent is None:
            return
        u_low, u_high = unbiased.confidence_interval(0.95)
        c_low, c_high = consistent.confidence_interval(0.95)
        for i, label in enumerate(result.question.options):
            yield {
                **common_columns(result),
                "statistic": "share",
                "option_index": i,
                "option": label,
                "prefer_not_to_say": i == result.question.prefer_not_index,
                "raw_count": int(result.raw_counts[i]),
                "unbiased": float(unbiased.proportions[i]),
                "standard_error": float(unbiased.standard_errors[i]),
                "unbiased_low": float(u_low[i]),
                "unbiased_high": float(u_high[i]),
                "consistent": float(consistent.proportions[i]),
                "consistent_low": float(c_low[i]),
                "consistent_high": float(c_high[i]),
                "consistent_method": consistent.method,
                "unbiased_band": BAND_KINDS["unbiased"],
                "consistent_band": BAND_KINDS["consistent"] if consistent.bands is not None else "normal",
                **integrity.export_fields(result.integrity, i),
            }
        weights = result.question_kind.point_weights(result.question)
        for statistic, value in linear_summaries(result, "unbiased").items():
            bounds = (min(weights[statistic]), max(weights[statistic]))
            yield {**common_columns(result), **summary_columns(statistic, value, bounds)}

    def round_values(self, result: ResultView, labels: list[str], tally: ldp.Tally) -> Found:
        if result.unbiased is None:
            return None
        return np.asarray(result.unbiased.proportions), np.asarray(result.unbiased.standard_errors)

    def cost(self, mechanism: Any, n: int, unit: str, advice: str, recurring: bool) -> Any:
        """k-RR's report *is* the answer with its keep probability; the cost says so."""
        keep = mechanism.keep_probability if isinstance(mechanism, KRandomizedResponse) else None
        return QuestionCost(mechanism, n, advice, recurring, report_is_answer_probability=keep)

    def describe(self, mechanism: Any, options: list[str], report: dict[str, Any]) -> str:
        name = mechanism.name
        if name == "crosswise":
            same = report["value"] == 0
            return _("“same” (your answer and a random harmless one agree)") if same else _("“different”")
        if name in ("krr", "forced-response", "unrelated-question", "warner"):
            return _("the option %(option)s") % {"option": option_labels(options, [report["value"]])}
        if name == "subset":
            return _("a set of options: %(options)s") % {"options": option_labels(options, report["subset"])}
        if name in ("oue", "sue"):
            marked = [i for i, bit in enumerate(report["bits"]) if bit]
            return _("a yes/no mark for every option, marked for: %(options)s") % {
                "options": option_labels(options, marked)
            }
        if name == "dbitflip":
            marked = [b for b, bit in zip(report["buckets"], report["bits"], strict=True) if bit]
            return _("marks for %(count)s options, marked for: %(options)s") % {
                "count": len(report["buckets"]),
                "options": option_labels(options, marked),
            }
        if name == "olh":
            return _("a hashed code: %(value)s of %(size)s") % {
                "value": report["value"] + 1,
                "size": mechanism.range_size,
            }
        if name in ("cms", "hcms", "hadamard"):
            return _("one coded piece of a sketch of all answers, which alone names no option")
        return ""

    def chance(self, mechanism: Any) -> str:
        if isinstance(mechanism, KRandomizedResponse):
            return _("Chance that this is your true answer: %(p)s") % {"p": percent(mechanism.keep_probability)}
        return _("Chance that someone who sees it guesses your answer: %(p)s (%(blind)s by pure chance)") % {
            "p": percent(guess_probability(mechanism)),
            "blind": percent(1 / mechanism.k),
        }


def hash_seed(mechanism: str, k: int, hash_count: int, width: int, previous: int | None) -> int:
    """Keep the question's seed when it still works; else the first that tells options apart; raise KindError."""
    seeds = ([previous] if previous is not None else []) + list(range(32))
    for seed in seeds:
        try:
            make_mechanism(mechanism, k=k, epsilon=1.0, hash_count=hash_count, width=width, hash_seed=seed)
        except ValueError:
            continue
        return seed
    raise KindError("width", _("These options collide under every hash function; use more of them."))


def guess_probability(mechanism: Any) -> float:
    """The mechanism's guess probability, once per parameter set and process (OLH and CMS take
    milliseconds: too much for every submission's receipt); the cost panel's cache
    (:func:`surveys.costs.cached_figure`)."""
    return cached_figure(mechanism, "guess_probability", mechanism.guess_probability)


def estimate_chart(result: ResultView, kind: str, bands: str = "option") -> str:
    """The result's bar chart, drawn once per (randomization, tally, kind, bands, labels, language)."""
    labels = result.question.options

    def draw() -> str:
        estimate = result.estimate(kind)  # type: ignore[arg-type]
        assert estimate is not None
        low, high = result.bands(kind, bands)  # type: ignore[arg-type]
        return charts.estimate_bars(labels, estimate.proportions, low, high)

    parts = [
        randomization_digest(result.randomization),
        result.digest,
        kind,
        bands,
        charts.short_digest(json.dumps(labels)),
    ]
    return charts.cached_chart("chart", parts, draw)


def linear_summaries(result: ResultView, kind: str = "unbiased") -> dict[str, dict[str, float]]:
    """A rating's mean and NPS from its unbiased shares (:func:`linear_summary`); in the "consistent"
    view each cut to its feasible range [min c, max c], where c . p lies for every distribution p."""
    if result.unbiased is None:
        return {}
    weights = result.question_kind.point_weights(result.question)
    made = {name: linear_summary(c, result.unbiased) for name, c in weights.items()}
    if kind == "consistent":
        made = {name: feasible_summary(value, (min(weights[name]), max(weights[name]))) for name, value in made.items()}
    return made
