"""A declared pair: :class:`PairKind` and its summary, shares over k1 k2 combinations shown as a cross-tab.

Two choice questions randomized as one answer (first * k2 + second) with one epsilon
(:func:`surveys.actions.do_declare_pair`); the card is the joint estimate's cross-tab with each
question's marginal shares (:func:`ldp.crosstab.declared_joint`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.utils.translation import gettext as _

from ldp.crosstab import JointEstimate, crosses_post_hoc, declared_joint, encode_pair, expected_errors
from surveys.kinds.base import BAND_KINDS, KindError, QuestionKind, ResultView, common_columns, randomization_digest
from surveys.kinds.shares import SharesSummary
from surveys.models import Question
from surveys.results import charts
from surveys.results.crosstab_tables import cell_bands, cell_rows, conditionals, marginal_rows


class PairKind(QuestionKind):
    """A declared pair (:func:`surveys.actions.do_declare_pair`): two choice questions randomized as one
    answer over their k1 k2 combinations, with one epsilon that replaces both questions' own.

    Its result card is the pair's cross-tab with each question's marginal shares (:class:`PairSummary`).
    """

    def options(self, data: dict[str, Any], question: Question | None) -> list[str]:
        if question is not None and question.pair_first_id is not None:
            return list(question.options)
        raise KindError("kind", _("Declared pairs are made with “Ask two questions jointly”."))

    def skip_index(self, question: Question) -> int | None:
        """Both questions left empty send the pair (Prefer not to say, Prefer not to say), the last of the
        k1 k2 combinations, when both offer it; otherwise the uniform fake of every pair."""
        first, second = question.pair_first, question.pair_second
        if first is None or second is None or first.prefer_not_index is None or second.prefer_not_index is None:
            return None
        return int(encode_pair(first.prefer_not_index, second.prefer_not_index, second.k))

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

    def demo_truth(self, sources: Any) -> Any:
        return sources.joint


def declared_crosstab(result: ResultView) -> JointEstimate:
    """A declared pair's joint estimate: its mechanism's estimate over k1 k2 answers, reshaped.

    Made from the result's own estimate, so the card's cells, n and cache key all name one tally.
    """
    question = result.question
    assert question.pair_first is not None and question.pair_second is not None
    assert result.unbiased is not None
    k1, k2 = question.pair_first.k, question.pair_second.k
    return declared_joint(result.mechanism, result.unbiased, result.n, k1, k2)


def heatmap(name: str, estimate: JointEstimate, rows: list[str], columns: list[str], bands: str) -> str:
    """A cross-tab's heatmap with the bands chosen, drawn once per (``name``: its tally, bands, labels, language)."""

    def draw() -> str:
        low, high = cell_bands(estimate, bands)
        return charts.crosstab_heatmap(rows, columns, estimate.consistent_cells, low, high)

    return charts.cached_chart(name, [bands, charts.short_digest(json.dumps([rows, columns]))], draw)


class PairSummary(SharesSummary):
    """Shares over the k1 k2 combinations, shown and exported as a cross-tab with both marginals."""

    name = "pair"
    samples = False

    def card(self, result: ResultView, kind: str, view: dict[str, Any]) -> None:
        """The cross-tab (heatmap, cells with bands, conditional shares) and both marginals."""
        question = result.question
        first, second = question.pair_first, question.pair_second
        assert first is not None and second is not None
        estimate, bands = declared_crosstab(result), view["bands"]
        view["first"], view["second"] = first, second
        view["rows"] = cell_rows(estimate, first.options, second.options, bands)
        view["conditionals"] = conditionals(estimate, first, second, bands)
        view["marginals"] = [
            {"question": q, "rows": marginal_rows(estimate, which, q.options, bands)}
            for which, q in (("first", first), ("second", second))
        ]
        name = f"pair-chart:{randomization_digest(result.randomization)}:{result.digest}"
        view["chart"] = heatmap(name, estimate, first.options, second.options, bands)

    def export_rows(self, result: ResultView) -> Iterator[dict[str, Any]]:
        """Each combination's share (``share`` rows, option "A × B"), then each question's marginal
        shares derived from them (``first_share``, ``second_share``; normal bands)."""
        yield from super().export_rows(result)
        estimate = declared_crosstab(result)
        question = result.question
        for which, member in (("first", question.pair_first), ("second", question.pair_second)):
            assert member is not None
            for i, row in enumerate(marginal_rows(estimate, which, member.options)):
                yield {
                    **common_columns(result),
                    "statistic": f"{which}_share",
                    "option_index": i,
                    "option": row["label"],
                    "unbiased": row["unbiased"],
                    "standard_error": row["standard_error"],
                    "unbiased_low": row["unbiased_low"],
                    "unbiased_high": row["unbiased_high"],
                    "unbiased_band": BAND_KINDS["unbiased"],
                    "consistent": row["estimate"],
                    "consistent_low": row["low"],
                    "consistent_high": row["high"],
                    "consistent_method": "clip",
                    "consistent_band": BAND_KINDS["unbiased"],
                }
