"""A question's display logic (``Question.logic``) across the app: its valid conditions, and its
copy into another survey (a duplicate, or a recurring survey's next round)."""

from __future__ import annotations

from typing import Any

from ldp.branching import Condition, parse_condition
from surveys.models import Question


def conditions_of(questions: list[Question]) -> dict[int, Condition]:
    """The questions' valid conditions by question id (one on a question that is gone, or later, is dropped)."""
    conditions: dict[int, Condition] = {}
    seen: set[int] = set()
    for question in questions:
        raw = (question.logic or {}).get("show_if")
        if raw is not None:
            try:
                condition = parse_condition(raw)
            except ValueError:
                condition = None
            if condition is not None and condition.question in seen:
                conditions[question.pk] = condition
        seen.add(question.pk)
    return conditions


def remapped(logic: dict[str, Any], new_ids: dict[int, int]) -> dict[str, Any]:
    """The logic of a copied question: its condition names the copy of the question it tests."""
    condition = logic.get("show_if")
    if not isinstance(condition, dict) or condition.get("question") not in new_ids:
        return {key: value for key, value in logic.items() if key != "show_if"}
    return {**logic, "show_if": {**condition, "question": new_ids[condition["question"]]}}
