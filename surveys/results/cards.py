"""The results cards: what each question's card shows, and its chart drawn once and cached.

A card is filled by its summary (:data:`SUMMARY_CARDS`); every chart comes from :func:`cached_chart`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from django.core.cache import cache
from django.utils.translation import get_language

from ldp.advisor import Z_95
from ldp.crosstab import JointEstimate, declared_joint
from surveys.kinds import kind_of, linear_summary
from surveys.results import charts, crosstabs
from surveys.results.estimates import CACHE_SECONDS, QuestionResult, randomization_digest, synthetic


def cached_chart(name: str, parts: Sequence[object], draw: Callable[[], str]) -> str:
    """The SVG ``draw()`` makes, drawn once per (``name``, ``parts``, chart version, language) and then
    served from Django's cache: ``parts`` must name everything the chart shows (tally digests, labels,
    estimate kind, bands), so a cached chart never goes stale; :data:`CACHE_SECONDS` only bounds memory.
    """
    key = ":".join(["murmur", name, str(charts.CHART_VERSION), *map(str, parts), get_language()])
    svg = cache.get(key)
    if svg is None:
        svg = draw()
        cache.set(key, svg, CACHE_SECONDS)
    return svg


def short_digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def estimate_chart(result: QuestionResult, kind: str, bands: str = "option") -> str:
    """The result's bar chart, drawn once per (randomization, tally, kind, bands, labels, language)."""
    labels = result.question.options

    def draw() -> str:
        estimate = result.estimate(kind)  # type: ignore[arg-type]
        assert estimate is not None
        low, high = result.bands(kind, bands)  # type: ignore[arg-type]
        return charts.estimate_bars(labels, estimate.proportions, low, high)

    parts = [randomization_digest(result.randomization), result.digest, kind, bands, short_digest(json.dumps(labels))]
    return cached_chart("chart", parts, draw)


def result_view(result: QuestionResult, kind: str, bands: str = "option") -> dict[str, Any]:
    """What the shared result card shows for one question (one version of its randomization)."""
    anchor = f"result-{result.question.pk}" + (f"-v{result.randomization.version}" if result.earlier else "")
    view: dict[str, Any] = {"result": result, "question": result.question, "rows": [], "chart": "", "bands": bands}
    view["anchor"] = anchor
    view["outer"] = "surveys/_result_card.html"
    card = summary_card(result)
    view["template"] = f"surveys/kinds/{card}_result.html"
    if result.n and result.enough:
        SUMMARY_CARDS[card](result, kind, view)
    return view


def summary_card(result: QuestionResult) -> str:
    """Which card shows the result: its kind's own (a declared pair's cross-tab), else its family's."""
    return kind_of(result.question.kind).result_card or result.summary


def declared_crosstab(result: QuestionResult) -> JointEstimate:
    """A declared pair's joint estimate: its mechanism's estimate over k1 k2 answers, reshaped.

    Made from the result's own estimate, so the card's cells, n and cache key all name one tally.
    """
    question = result.question
    assert question.pair_first is not None and question.pair_second is not None
    assert result.unbiased is not None
    k1, k2 = question.pair_first.k, question.pair_second.k
    return declared_joint(result.mechanism, result.unbiased, result.n, k1, k2)  # type: ignore[arg-type]


def pair_card(result: QuestionResult, kind: str, view: dict[str, Any]) -> None:
    """A declared pair: the cross-tab (heatmap, cells with bands, conditional shares) and both marginals."""
    question = result.question
    first, second = question.pair_first, question.pair_second
    assert first is not None and second is not None
    estimate, bands = declared_crosstab(result), view["bands"]
    view["first"], view["second"] = first, second
    view["rows"] = crosstabs.cell_rows(estimate, first.options, second.options, bands)
    view["conditionals"] = crosstabs.conditionals(estimate, first, second, bands)
    view["marginals"] = [
        {"question": q, "rows": crosstabs.marginal_rows(estimate, which, q.options, bands)}
        for which, q in (("first", first), ("second", second))
    ]
    name = f"pair-chart:{randomization_digest(result.randomization)}:{result.digest}"
    view["chart"] = heatmap(name, estimate, first.options, second.options, bands)


def heatmap(name: str, estimate: JointEstimate, rows: list[str], columns: list[str], bands: str) -> str:
    """A cross-tab's heatmap with the bands chosen, drawn once per (``name``: its tally, bands, labels, language)."""

    def draw() -> str:
        low, high = crosstabs.cell_bands(estimate, bands)
        return charts.crosstab_heatmap(rows, columns, estimate.consistent_cells, low, high)

    return cached_chart(name, [bands, short_digest(json.dumps([rows, columns]))], draw)


def shares_card(result: QuestionResult, kind: str, view: dict[str, Any]) -> None:
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
    view["summaries"] = linear_summaries(result)


def linear_summaries(result: QuestionResult) -> dict[str, dict[str, float]]:
    """A rating's mean and NPS from its unbiased shares (:func:`surveys.kinds.linear_summary`)."""
    if result.unbiased is None:
        return {}
    weights = kind_of(result.question.kind).point_weights(result.question)
    return {name: linear_summary(c, result.unbiased) for name, c in weights.items()}


def mean_card(result: QuestionResult, kind: str, view: dict[str, Any]) -> None:
    """The unbiased mean with its standard error and 95 % interval, drawn on the question's range."""
    assert result.mean is not None
    low, high = result.mean.confidence_interval(0.95)
    view["mean"] = {"value": result.mean.mean, "standard_error": result.mean.standard_error, "low": low, "high": high}
    mechanism, mean = result.mechanism, result.mean.mean
    view["chart"] = cached_chart(
        "mean-chart",
        [randomization_digest(result.randomization), result.digest],
        lambda: charts.mean_interval(mechanism.lo, mechanism.hi, mean, low, high),  # type: ignore[union-attr]
    )
    view["synthetic"] = synthetic(result)


def text_card(result: QuestionResult, kind: str, view: dict[str, Any]) -> None:
    """Each candidate answer's estimated count and share with 95 % intervals; the ones found listed."""
    rows = view["candidates"] = candidate_rows(result)
    view["found"] = [row for row in rows if row["found"]]
    view["text_method"] = result.text.method if result.text is not None else ""
    if rows:
        columns = [(row["share"], row["share_low"], row["share_high"]) for row in rows]
        view["chart"] = bars_chart(result, "text-chart", [row["label"] for row in rows], columns)


def bars_chart(result: QuestionResult, name: str, labels: list[str], columns: list[Any], *parts: str) -> str:
    """:func:`surveys.results.charts.estimate_bars` of (share, low, high) per label, drawn once per
    (randomization, tally, ``parts``, labels, language)."""
    material = [randomization_digest(result.randomization), result.digest, *parts, short_digest(json.dumps(labels))]
    return cached_chart(name, material, lambda: charts.estimate_bars(labels, *np.array(columns, dtype=float).T))


def candidate_rows(result: QuestionResult) -> list[dict[str, Any]]:
    """Per candidate: count, share (count / n), standard error, 95 % interval, p-value, found."""
    text = result.text
    if text is None:
        return []
    low, high = text.interval(0.95)
    return [
        {
            "label": label,
            "count": float(text.counts[i]),
            "share": float(text.counts[i]) / text.n,
            "standard_error": float(text.standard_errors[i]),
            "low": float(low[i]),
            "high": float(high[i]),
            "share_low": float(low[i]) / text.n,
            "share_high": float(high[i]) / text.n,
            "p_value": float(text.p_values[i]),
            "found": bool(text.found[i]),
        }
        for i, label in enumerate(text.candidates)
    ]


def multi_card(result: QuestionResult, kind: str, view: dict[str, Any]) -> None:
    """Multi-select: each option's share of respondents with its band, and the mean number chosen."""
    rows = view["rows"] = multi_option_rows(result, kind, view["bands"])
    view["mean_count"] = mean_count(result)
    columns = [(row["estimate"], row["low"], row["high"]) for row in rows]
    view["chart"] = bars_chart(result, "multi-chart", [row["label"] for row in rows], columns, kind, view["bands"])


def mean_count(result: QuestionResult) -> dict[str, float]:
    """Multi-select: the mean number of options chosen, its standard error and 95 % interval (cut to [0, k])."""
    assert result.multi is not None
    low, high = result.multi.mean_count_interval(0.95)
    error = float(np.sqrt(max(result.multi.mean_count_variance, 0.0)))
    return {"value": result.multi.mean_count, "standard_error": error, "low": low, "high": high}


def multi_option_rows(result: QuestionResult, kind: str, bands: str) -> list[dict[str, Any]]:
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


#: How each summary card fills it: a family's ("shares", "mean", "text" or "multi", :func:`surveys.kinds.family`)
#: or a kind's own ("pair", :attr:`surveys.kinds.QuestionKind.result_card`).
SUMMARY_CARDS = {"shares": shares_card, "mean": mean_card, "text": text_card, "multi": multi_card, "pair": pair_card}


def matrix_cards(cards: list[dict[str, Any]], kind: str, bands: str) -> list[dict[str, Any]]:
    """The result cards with each matrix's items gathered into one compact card (stacked bars and a table).

    An item's reports under an earlier version of its randomization keep their own card, after the matrix's.
    """
    grouped: list[dict[str, Any]] = []
    matrices: dict[int, dict[str, Any]] = {}
    for card in cards:
        question, result = card["question"], card["result"]
        if question.matrix_id is None:
            grouped.append(card)
            continue
        head = matrices.get(question.matrix_id)
        if head is None:
            head = matrices[question.matrix_id] = {"matrix": question.matrix, "items": [], "earlier": []}
            head |= {"outer": "surveys/_matrix_result.html", "anchor": f"matrix-{question.matrix_id}"}
            grouped.append(head)
        (head["earlier"] if result.earlier else head["items"]).append(card)
    for card in grouped:
        if card.get("matrix") is not None:
            card["chart"] = matrix_chart(card["items"], kind, bands)
    return grouped


def matrix_chart(items: list[dict[str, Any]], kind: str, bands: str) -> str:
    """Stacked bars of a matrix's items that have enough reports, drawn once per state of their tallies."""
    shown = [card["result"] for card in items if card["result"].n and card["result"].enough]
    if not shown:
        return ""
    parts = [f"{randomization_digest(r.randomization)}{r.digest}" for r in shown]
    labels = json.dumps([[r.question.text for r in shown], shown[0].question.options])

    def draw() -> str:
        shares = np.array([r.estimate(kind).proportions for r in shown])  # type: ignore[arg-type, union-attr]
        low, high = (np.array(side) for side in zip(*(r.bands(kind, bands) for r in shown), strict=True))  # type: ignore[arg-type]
        return charts.matrix_bars([r.question.text for r in shown], shown[0].question.options, shares, low, high)

    return cached_chart("matrix-chart", [short_digest(":".join(parts) + labels), kind, bands], draw)
