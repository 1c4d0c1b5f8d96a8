"""The results cards: what each question's card shows, and its chart drawn once and cached.

A card is filled by its summary (:meth:`surveys.kinds.base.Summary.card`); every chart comes from
:func:`cached_chart` (:mod:`surveys.results.charts`).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from surveys.results import charts
from surveys.results.charts import cached_chart, short_digest
from surveys.results.estimates import QuestionResult, randomization_digest


def result_view(result: QuestionResult, kind: str, bands: str = "option") -> dict[str, Any]:
    """What the shared result card shows for one question (one version of its randomization)."""
    anchor = f"result-{result.question.pk}" + (f"-v{result.randomization.version}" if result.earlier else "")
    view: dict[str, Any] = {"result": result, "question": result.question, "rows": [], "chart": "", "bands": bands}
    view["anchor"] = anchor
    view["outer"] = "surveys/_result_card.html"
    summary = result.summary
    view["template"] = f"surveys/kinds/{summary.name}_result.html"
    if result.n and result.enough:
        summary.card(result, kind, view)
    elif result.n:
        summary.few(result, view)
    return view


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
            options = card["items"][0]["question"].options if card["items"] else []
            card["legend"] = list(zip(options, charts.matrix_colors(len(options)), strict=True))
    return grouped


def matrix_chart(items: list[dict[str, Any]], kind: str, bands: str) -> str:
    """Stacked bars of a matrix's items that have enough reports, drawn once per state of their tallies."""
    shown = [card["result"] for card in items if card["result"].n and card["result"].enough]
    if not shown:
        return ""
    parts = [f"{randomization_digest(r.randomization)}{r.digest}" for r in shown]
    labels = json.dumps([[r.question.text for r in shown], shown[0].question.options])

    def draw() -> str:
        shares = np.array([r.estimate(kind).proportions for r in shown])
        low, high = (np.array(side) for side in zip(*(r.bands(kind, bands) for r in shown), strict=True))
        return charts.matrix_bars([r.question.text for r in shown], shown[0].question.options, shares, low, high)

    return cached_chart("matrix-chart", [short_digest(":".join(parts) + labels), kind, bands], draw)


def responses_timeline(survey_id: int, hourly: list[tuple[Any, int]]) -> tuple[int, str, str]:
    """(responses, chart, digest) from hourly counts; the chart is drawn once per state of the counts."""
    total = sum(count for _, count in hourly)
    if not hourly:
        return 0, "", ""
    digest = short_digest(repr(hourly))
    chart = cached_chart(
        "over-time",
        [survey_id, digest],
        lambda: charts.responses_over_time([h for h, _ in hourly], [c for _, c in hourly]),
    )
    return total, chart, digest
