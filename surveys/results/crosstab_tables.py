"""A cross-tab's tables: cells, conditional shares and marginals with their 95 % bands (:mod:`ldp.crosstab`).

Shared by the post-hoc cross-tab (:mod:`surveys.results.crosstabs`) and a declared pair's card
(:mod:`surveys.kinds.pair`); pure functions of a :class:`ldp.crosstab.JointEstimate`.
"""

from __future__ import annotations

import math
from typing import Any

from ldp.crosstab import JointEstimate
from ldp.estimates import Interval
from surveys.models import Question


def cell_bands(estimate: JointEstimate, bands: str = "option") -> Interval:
    """The cells' 95 % bands as drawn: each cell's own, or (``bands="joint"``) all cells' at once."""
    return estimate.simultaneous if bands == "joint" else estimate.bands


def cell_rows(
    estimate: JointEstimate, row_labels: list[str], column_labels: list[str], bands: str = "option"
) -> list[dict[str, Any]]:
    """Per option of the first question: its label and, per option of the second, the cell's numbers."""
    consistent, errors = estimate.consistent_cells, estimate.standard_errors
    low, high = cell_bands(estimate, bands)
    return [
        {
            "label": label,
            "cells": [
                {
                    "column": column,
                    "estimate": float(consistent[a, b]),
                    "unbiased": float(estimate.cells[a, b]),
                    "standard_error": float(errors[a, b]),
                    "low": float(low[a, b]),
                    "high": float(high[a, b]),
                }
                for b, column in enumerate(column_labels)
            ],
        }
        for a, label in enumerate(row_labels)
    ]


def conditional_rows(
    estimate: JointEstimate,
    row_labels: list[str],
    column_labels: list[str],
    given: str = "first",
    bands: str = "option",
) -> list[dict[str, Any]]:
    """Of those who chose each option of the ``given`` question, the share choosing each of the other's.

    ``row_labels`` are the given question's options, ``column_labels`` the other's. With ``bands="joint"``
    the intervals hold for all the shares given that question at once (``JointEstimate.conditional``).
    """
    conditional = estimate.conditional(given, simultaneous=bands == "joint")
    low, high = conditional.bands
    rows = []
    for a, label in enumerate(row_labels):
        defined = not math.isnan(float(conditional.shares[a, 0]))
        shares = [
            {
                "column": column,
                "share": float(conditional.shares[a, b]),
                "low": float(low[a, b]),
                "high": float(high[a, b]),
            }
            for b, column in enumerate(column_labels)
        ]
        rows.append(
            {"label": label, "noisy": bool(conditional.noisy[a]) or not defined, "shares": shares if defined else []}
        )
    return rows


def marginal_rows(
    estimate: JointEstimate, which: str, labels: list[str], bands: str = "option"
) -> list[dict[str, Any]]:
    """One question's shares derived from the joint estimate (``JointEstimate.marginal``), with bands:
    each option's own, or (``bands="joint"``) all of the question's options at once. ``estimate``,
    ``low`` and ``high`` are cut to [0, 1]; ``unbiased*`` are as estimated."""
    marginal = estimate.marginal(which, simultaneous=bands == "joint")
    low, high = marginal.bands
    return [
        {
            "label": label,
            "estimate": clip_share(marginal.shares[i]),
            "standard_error": float(marginal.standard_errors[i]),
            "low": clip_share(low[i]),
            "high": clip_share(high[i]),
            "unbiased": float(marginal.shares[i]),
            "unbiased_low": float(low[i]),
            "unbiased_high": float(high[i]),
        }
        for i, label in enumerate(labels)
    ]


def clip_share(value: float) -> float:
    """A share or a band's end cut to [0, 1], where every share lies (the band keeps its coverage)."""
    return min(max(float(value), 0.0), 1.0)


def conditionals(
    estimate: JointEstimate, first: Question, second: Question, bands: str = "option"
) -> list[dict[str, Any]]:
    """Conditional shares both ways: given each option of the first question, then of the second."""
    return [
        {"question": first, "rows": conditional_rows(estimate, first.options, second.options, "first", bands)},
        {"question": second, "rows": conditional_rows(estimate, second.options, first.options, "second", bands)},
    ]
