"""Numbers for privacy and accuracy figures, and dates, in the active language's format and zone."""

from __future__ import annotations

import functools
import math
from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.formats import date_format, get_format, number_format
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import get_language, pgettext

register = template.Library()


@register.filter
def percent(value: float | None, digits: int = 1) -> str:
    """0.1234 -> "12.3 %" (locale-aware decimal separator)."""
    if value is None:
        return ""
    rounded = round(100 * float(value), digits)
    return _percent(get_language(), rounded, math.copysign(1.0, rounded), digits)


@register.filter
def points(value: float | None, digits: int = 1) -> str:
    """A proportion's error as percentage points: 0.042 -> "4.2"."""
    if value is None:
        return ""
    # number_format truncates the digits it drops; round first.
    rounded = round(100 * float(value), digits)
    return _points(get_language(), rounded, math.copysign(1.0, rounded), digits)


# A results page prints thousands of percentages, nearly all among the 1,001 of one decimal in
# [0, 100]: each is formatted once per language and process (the language is part of the key;
# the sign too, since -0.0 == 0.0 but they print differently).
@functools.lru_cache(maxsize=8192)
def _points(language: str | None, rounded: float, sign: float, digits: int) -> str:
    return number_format(rounded, decimal_pos=digits)


@functools.lru_cache(maxsize=8192)
def _percent(language: str | None, rounded: float, sign: float, digits: int) -> str:
    number = _points(language, rounded, sign, digits)
    # Translators: a percentage; Korean writes the sign without a space ("12.3%").
    return pgettext("a number with a percent sign", "%(number)s %%") % {"number": number}


@register.filter
def epsilon(value: float | None) -> str:
    """An epsilon without trailing zeros: 1.0 -> "1", 0.25 -> "0.25"; infinite (a question asked
    directly, not randomized) -> "∞"."""
    if value is None:
        return ""
    if math.isinf(float(value)):
        return "∞"
    return f"{float(value):.4g}".replace(".", get_format("DECIMAL_SEPARATOR"))


@register.filter
def count(value: int | None) -> str:
    """A count with the language's thousands separator: 12000 -> "12,000"."""
    if value is None:
        return ""
    return number_format(int(value), force_grouping=True)


@register.filter
def local_time(value: datetime | None) -> SafeString | str:
    """A ``<time>`` in the active zone, with the zone's name; the browser re-renders it in its own.

    ``static/surveys/timezone.js`` rewrites every ``time[data-local]`` with ``Intl.DateTimeFormat``,
    so a respondent whose zone the server does not know still reads the time in theirs.
    """
    if value is None:
        return ""
    local = timezone.localtime(value)
    return format_html(
        '<time datetime="{}" data-local>{} ({})</time>',
        value.isoformat(),
        date_format(local, "DATETIME_FORMAT"),
        timezone.get_current_timezone_name(),
    )


@register.filter
def pvalue(value: float | None) -> str:
    """A p-value as "p = 0.034" (two significant digits) or "p < 0.0001" (locale-aware decimals)."""
    if value is None:
        return ""
    if value < 1e-4:
        return "p < " + number_format(0.0001, decimal_pos=4)
    return "p = " + number_format(float(f"{value:.2g}"), decimal_pos=max(2, 1 - math.floor(math.log10(value))))


@register.filter
def number(value: float | None) -> str:
    """A value in the question's units, at most 4 significant digits past the integer part: 2.50 -> "2.5"."""
    if value is None:
        return ""
    value = float(value)
    digits = 0 if value == int(value) else max(0, 3 - len(str(int(abs(value)))))
    rounded = round(value, max(digits, 1) if digits else 0)
    text = number_format(rounded, decimal_pos=digits, force_grouping=True)
    if digits:
        separator = get_format("DECIMAL_SEPARATOR")
        text = text.rstrip("0").rstrip(separator)
    return text


@register.simple_tag
def javascript_catalog_src() -> str:
    """The browser translations' URL in the active language, versioned so that browsers keep it."""
    from surveys.views.catalog import catalog_src

    return catalog_src()
