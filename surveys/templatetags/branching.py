"""``{% branching_panel survey %}``: the builder's display-logic panel (:mod:`surveys.views.branching`)."""

from __future__ import annotations

from typing import Any

from django import template

from surveys.models import Survey
from surveys.views.branching import panel_context

register = template.Library()


@register.inclusion_tag("surveys/_branching.html", takes_context=True)
def branching_panel(context: dict[str, Any], survey: Survey) -> dict[str, Any]:
    return {**panel_context(survey), "csrf_token": context.get("csrf_token")}
