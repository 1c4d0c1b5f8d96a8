"""Number formatting for privacy and accuracy figures, in the active language's format."""

from __future__ import annotations

from django import template
from django.utils.formats import get_format, number_format
from django.utils.translation import pgettext

register = template.Library()


@register.filter
def percent(value: float | None, digits: int = 1) -> str:
    """0.1234 -> "12.3 %" (locale-aware decimal separator)."""
    if value is None:
        return ""
    # Translators: a percentage; Korean writes the sign without a space ("12.3%").
    return pgettext("a number with a percent sign", "%(number)s %%") % {"number": points(value, digits)}


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
    return f"{float(value):.4g}".replace(".", get_format("DECIMAL_SEPARATOR"))


@register.filter
def count(value: int | None) -> str:
    """A count with the language's thousands separator: 12000 -> "12,000"."""
    if value is None:
        return ""
    return number_format(int(value), force_grouping=True)
