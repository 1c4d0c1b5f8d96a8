"""Choose all that apply: :class:`MultiSelectKind` and its "multi" summary (:mod:`ldp.multiselect`).

Each option's share of respondents (the shares need not sum to 1) and the mean number of options
chosen, from unary encodings of the set or padding-and-sampling (Wang et al. 2018).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

import ldp
from ldp.advisor import Z_95
from ldp.multiselect import PaddingAndSampling, SetUnaryEncoding, recommend_multiselect
from ldp.multiselect.advisor import reference_variance
from surveys.costs import SetCost, respondents_for
from surveys.kinds.base import (
    BAND_KINDS,
    MIN_REPORTS,
    READABLE_SHARE,
    Estimates,
    Found,
    KindError,
    QuestionKind,
    ResultView,
    Summary,
    bars_chart,
    clean_option_lines,
    common_columns,
    summary_columns,
)
from surveys.kinds.shares import option_labels
from surveys.models import Question, Randomization


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

    def mechanism_params(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"max_choices": data.get("max_choices") or len(data["options"])}

    def demo_reports(self, question: Question, mechanism: Any, truth: Any, size: int, rng: Any) -> list[bytes]:
        """Sets of options, each picked with its chance in ``truth``, cut to l picks kept at random."""
        picked = rng.random((size, len(truth))) < np.asarray(truth)
        order = np.argsort(np.where(picked, rng.random(picked.shape), 2.0), axis=1)
        answers = picked & (np.argsort(order, axis=1) < question.mechanism_params["max_choices"])
        return [row.tobytes() for row in mechanism.randomize(answers, rng=rng)]


#: What :meth:`MultiSummary.raw_counts` counts, per mechanism, as the results table's column heading.
RAW_COUNT_LABELS = {
    "set-sue": gettext_lazy("Reports with its bit = 1"),
    "set-oue": gettext_lazy("Reports with its bit = 1"),
    "padding-krr": gettext_lazy("Reports naming it"),
    "padding-olh": gettext_lazy("Reports hashing it to their value"),
}


class MultiSummary(Summary):
    name = "multi"
    misfit = gettext_lazy(
        "A multi-select question needs a mechanism for sets of options: a unary encoding of the set, or "
        "padding and sampling."
    )

    def advise(self, data: dict[str, Any], value_range: Any, n: int, recurring: bool) -> tuple[str, dict[str, Any]]:
        """:func:`ldp.multiselect.recommend_multiselect` for (k, l, epsilon, n); no set mechanism is memoized."""
        k = len(data["options"])
        limit = data.get("max_choices") or k
        return recommend_multiselect(k, limit, data["epsilon"], n).best.mechanism, {}

    takes = "set"
    tally_export = "multi_select_tallies"
    per_option = True

    def estimates(self, mechanism: Any, tally: ldp.Tally) -> Estimates:
        half_width = Z_95 * float(np.sqrt(reference_variance(mechanism) / tally.n))
        return Estimates(None, None, half_width, multi=mechanism.estimate(tally))

    def raw_counts(self, mechanism: Any, counts: np.ndarray) -> np.ndarray:
        if isinstance(mechanism, PaddingAndSampling):  # the options' items; the dummies' come after them
            return counts[: mechanism.k]
        return counts

    def raw_count_label(self, mechanism_name: str) -> str:
        return str(RAW_COUNT_LABELS[mechanism_name])

    def target(self, result: ResultView) -> float:
        """The largest expected half-width of each option's share that the page shows.

        An even share (1 / k) as for a single choice, or :data:`READABLE_SHARE` if that is wider:
        the shares of a multi-select question do not sum to 1, so many options do not make each one small.
        """
        return max(1 / result.mechanism.k, READABLE_SHARE)

    def enough(self, result: ResultView) -> bool:
        return (
            result.multi is not None
            and result.n >= MIN_REPORTS
            and result.expected_half_width is not None
            and result.expected_half_width <= self.target(result)
        )

    def reports_needed(self, result: ResultView) -> int:
        at_one = Z_95 * float(np.sqrt(reference_variance(result.mechanism)))
        return respondents_for(at_one, self.target(result), 1)

    def card(self, result: ResultView, kind: str, view: dict[str, Any]) -> None:
        """Each option's share of respondents with its band, and the mean number chosen."""
        rows = view["rows"] = multi_option_rows(result, kind, view["bands"])
        view["mean_count"] = mean_count(result)
        columns = [(row["estimate"], row["low"], row["high"]) for row in rows]
        view["chart"] = bars_chart(result, "multi-chart", [row["label"] for row in rows], columns, kind, view["bands"])

    def few(self, result: ResultView, view: dict[str, Any]) -> None:
        """Each option's 95 % band on [0, 1] (:attr:`ldp.multiselect.SharesEstimate.bands`), however wide."""
        if result.multi is None:
            return
        low, high = result.multi.bands
        view["few"] = [
            {"label": label, "low": float(low[i]), "high": float(high[i])}
            for i, label in enumerate(result.question.options)
        ]

    def export_rows(self, result: ResultView) -> Iterator[dict[str, Any]]:
        """One row per option (its share of respondents, unbiased and clipped, each with its own band),
        then the mean number of options chosen (statistic ``mean_count``)."""
        if result.multi is None:
            return
        unbiased = multi_option_rows(result, "unbiased", "option")
        consistent = multi_option_rows(result, "consistent", "option")
        for i, (u, c) in enumerate(zip(unbiased, consistent, strict=True)):
            yield {
                **common_columns(result),
                "statistic": "share",
                "option_index": i,
                "option": u["label"],
                "raw_count": u["raw"],
                "unbiased": u["estimate"],
                "standard_error": u["standard_error"],
                "unbiased_low": u["low"],
                "unbiased_high": u["high"],
                "consistent": c["estimate"],
                "consistent_low": c["low"],
                "consistent_high": c["high"],
                "consistent_method": "clip",
                "unbiased_band": BAND_KINDS["unbiased"],
                "consistent_band": BAND_KINDS["consistent"],
            }
        yield {**common_columns(result), **summary_columns("mean_count", mean_count(result))}

    def tally_record(self, question: Question, randomization: Randomization, tally: ldp.Tally) -> dict[str, Any]:
        """The tally, enough to re-estimate every share and the mean number chosen.

        ``counts`` is the mechanism's tally (:mod:`ldp.multiselect`): per option, the reports with its
        bit set (set-sue, set-oue); per item of the k options then the l padding items, the reports naming
        it (padding-krr) or hashing to their value from it (padding-olh). ``max_choices`` is l.
        """
        return {
            "question_id": question.pk,
            "version": randomization.version,
            "mechanism": randomization.mechanism,
            "k": randomization.k,
            "max_choices": randomization.params["max_choices"],
            "epsilon": randomization.epsilon,
            "params": randomization.params,
            "n": tally.n,
            "counts": tally.counts.tolist(),
        }

    def round_values(self, result: ResultView, labels: list[str], tally: ldp.Tally) -> Found:
        """Each option's unbiased share of respondents (the shares need not sum to 1)."""
        if result.multi is None:
            return None
        return np.asarray(result.multi.shares), np.asarray(result.multi.standard_errors)

    def cost(self, mechanism: Any, n: int, unit: str, advice: str, recurring: bool) -> Any:
        return SetCost(mechanism, n, advice, unary=isinstance(mechanism, SetUnaryEncoding))

    def describe(self, mechanism: Any, options: list[str], report: dict[str, Any]) -> str:
        if isinstance(mechanism, SetUnaryEncoding):
            marked = [i for i, bit in enumerate(report["bits"]) if bit]
            return _("a yes/no mark for every option, marked for: %(options)s") % {
                "options": option_labels(options, marked)
            }
        return padded_item(mechanism, options, report)


def padded_item(mechanism: PaddingAndSampling, options: list[str], report: dict[str, Any]) -> str:
    """Padding-and-sampling's report: one randomized item, an option or a blank (k-RR), or a hashed code."""
    if mechanism.oracle_name == "olh":
        size = mechanism.oracle.range_size  # type: ignore[attr-defined]
        return _("one hashed code of one of your choices or a blank, randomized: %(value)s of %(size)s") % {
            "value": report["value"] + 1,
            "size": size,
        }
    if report["value"] < len(options):
        return _("one option, randomized (not necessarily one you chose): %(option)s") % {
            "option": option_labels(options, [report["value"]])
        }
    return _("a blank, randomized (it names no option)")


def mean_count(result: ResultView) -> dict[str, float]:
    """The mean number of options chosen, its standard error and 95 % interval (cut to [0, k])."""
    assert result.multi is not None
    low, high = result.multi.mean_count_interval(0.95)
    error = float(np.sqrt(max(result.multi.mean_count_variance, 0.0)))
    return {"value": result.multi.mean_count, "standard_error": error, "low": low, "high": high}


def multi_option_rows(result: ResultView, kind: str, bands: str) -> list[dict[str, Any]]:
    """Per option: its share (clipped to [0, 1] for "consistent", as estimated for "unbiased"), the
    standard error, and the 95 % band drawn: each option's own (unified intervals on [0, 1] beside
    the clipped share, estimate +/- 1.96 standard errors beside the unbiased one) or, with
    ``bands="joint"``, the bands for all options at once (:class:`ldp.multiselect.SharesEstimate`)."""
    multi = result.multi
    assert multi is not None
    errors = multi.standard_errors
    shares = multi.consistent_shares if kind == "consistent" else multi.shares
    if bands == "joint":
        low, high = multi.simultaneous
    elif kind == "consistent":
        low, high = multi.bands
    else:
        low, high = multi.shares - Z_95 * errors, multi.shares + Z_95 * errors
    return [
        {
            "label": label,
            "estimate": float(shares[i]),
            "unbiased": float(multi.shares[i]),
            "standard_error": float(errors[i]),
            "low": float(low[i]),
            "high": float(high[i]),
            "raw": int(result.raw_counts[i]),
        }
        for i, label in enumerate(result.question.options)
    ]
