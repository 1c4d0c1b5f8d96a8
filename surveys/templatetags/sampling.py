"""``{% sampling_panel survey %}``: the builder's question-sampling panel (:mod:`surveys.views.sampling`)."""

from __future__ import annotations

from typing import Any

from django import template

from surveys.models import Survey
from surveys.views.sampling import panel_context

register = template.Library()


@register.inclusion_tag("surveys/_sampling.html", takes_context=True)
def sampling_panel(context: dict[str, Any], survey: Survey) -> dict[str, Any]:
    return {**panel_context(survey), "csrf_token": context.get("csrf_token")}
