"""Number formatting for privacy and accuracy figures."""

from __future__ import annotations

from django import template
from django.utils.formats import number_format

register = template.Library()


@register.filter
def percent(value: float | None, digits: int = 1) -> str:
    """0.1234 -> "12.3 %" (locale-aware decimal separator)."""
    if value is None:
        return ""
    return f"{points(value, digits)} %"


@register.filter
def points(value: float | None, digits: int = 1) -> str:
    """A proportion's error as percentage points: 0.042 -> "4.2"."""
    if value is None:
        return ""
    # number_format truncates the digits it drops; round first.
    return number_format(round(100 * float(value), digits), decimal_pos=digits)


@register.filter
def epsilon(value: float | None) -> str:
    """An epsilon without trailing zeros: 1.0 -> "1", 0.25 -> "0.25"."""
    if value is None:
        return ""
    return f"{float(value):.4g}"
