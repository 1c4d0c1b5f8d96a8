"""``{{ params|in_words }}``: a randomization's parameters with labels in words (:mod:`surveys.parameters`)."""

from __future__ import annotations

from typing import Any

from django import template

from surveys import parameters

register = template.Library()


@register.filter
def in_words(params: dict[str, Any] | None) -> list[parameters.Parameter]:
    return parameters.in_words(params)
