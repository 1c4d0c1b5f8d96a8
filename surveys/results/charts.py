"""matplotlib Figure -> SVG text, for the results pages (never pyplot: it is not thread-safe)."""

from __future__ import annotations

import hashlib
import io
import re
import warnings
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.core.cache import cache
from django.utils.translation import get_language, pgettext
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter
from matplotlib.typing import RcKeyType

INK = "#1d2230"
ACCENT = "#3d5afe"
MUTED = "#5b6275"
#: Keep text as text: selectable, translatable fonts.
RC: dict[RcKeyType, Any] = {"svg.fonttype": "none", "font.size": 10}
#: Part of every cached chart's key: bump when the SVG markup changes.
CHART_VERSION = 3

_STYLE_ATTRIBUTE = re.compile(r' style="([^"]*)"')
_STYLE_ELEMENT = re.compile(r"\s*<style[^>]*>\*\{([^}]*)\}</style>")


def _svg(figure: Figure) -> str:
    buffer = io.StringIO()
    with warnings.catch_warnings():
        # Text stays text in the SVG and the browser draws it with its own fonts (Hangul included);
        # matplotlib only measures it, with DejaVu Sans, and warns about glyphs that font lacks.
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from font", category=UserWarning)
        figure.savefig(buffer, format="svg", bbox_inches="tight")
    svg = buffer.getvalue()
    # Drop the XML prolog and fixed size so the chart scales with its container (phones).
    svg = svg[svg.index("<svg") :]
    svg = svg.replace('width="', 'data-width="', 1).replace('height="', 'data-height="', 1)
    return without_inline_css(svg)


def without_inline_css(svg: str) -> str:
    """The SVG with its CSS as presentation attributes, which the page's Content-Security-Policy
    (``style-src 'self'``, no inline styles) allows.

    matplotlib writes ``style="fill: #3d5afe; opacity: 0.85"`` on each element and one
    ``<style>*{stroke-linejoin: round; stroke-linecap: butt}</style>``. Every property it writes has
    an SVG presentation attribute of the same name; the ``*`` rule's two properties are inherited,
    so they move to the root ``<svg>``, below every element's own.
    """

    def attributes(declarations: str) -> str:
        pairs = (part.split(":", 1) for part in declarations.split(";") if ":" in part)
        return "".join(f' {name.strip()}="{value.strip()}"' for name, value in pairs)

    defaults = _STYLE_ELEMENT.search(svg)
    svg = _STYLE_ELEMENT.sub("", svg)
    if defaults is not None:
        svg = svg.replace("<svg ", "<svg" + attributes(defaults.group(1)) + " ", 1)
    return _STYLE_ATTRIBUTE.sub(lambda match: attributes(match.group(1)), svg)


def estimate_bars(labels: Sequence[str], proportions: np.ndarray, low: np.ndarray, high: np.ndarray) -> str:
    """Horizontal bars of each option's estimated share with its 95 % interval as an error bar."""
    import matplotlib

    with matplotlib.rc_context(RC):
        figure = Figure(figsize=(6.4, 0.45 * len(labels) + 0.9))
        axes = figure.add_subplot()
        positions = np.arange(len(labels))[::-1]
        shown = np.clip(proportions, 0, None)
        axes.barh(positions, shown, color=ACCENT, alpha=0.85, height=0.6)
        errors = np.vstack([proportions - low, high - proportions]).clip(0, None)
        axes.errorbar(proportions, positions, xerr=errors, fmt="none", ecolor=INK, capsize=4, linewidth=1.2)
        axes.set_yticks(positions, labels=[_short(label) for label in labels])
        axes.xaxis.set_major_formatter(PercentFormatter(xmax=1, decimals=0))
        axes.set_xlim(min(0.0, float(low.min())) - 0.02, max(1.0, float(high.max())) + 0.02)
        axes.axvline(0, color=MUTED, linewidth=0.8)
        axes.grid(axis="x", alpha=0.3)
        axes.spines[["top", "right"]].set_visible(False)
        return _svg(figure)


def responses_over_time(hours: Sequence[datetime], counts: Sequence[int]) -> str:
    """A small step chart of cumulative responses by hour."""
    import matplotlib

    with matplotlib.rc_context(RC):
        figure = Figure(figsize=(6.4, 1.8))
        axes = figure.add_subplot()
        if hours:
            # Each count covers its hour: draw to the end of the last one, and show at least a day.
            # (matplotlib converts datetimes through its units registry; its stubs only allow floats.)
            edges = [*hours, hours[-1] + timedelta(hours=1)]
            totals = np.cumsum([*counts, 0])
            axes.step(edges, totals, where="post", color=ACCENT)  # type: ignore[arg-type]  # stubs: no datetime x
            axes.fill_between(edges, totals, step="post", color=ACCENT, alpha=0.15)  # type: ignore[arg-type]  # stubs: no datetime x
            axes.set_xlim(min(edges[0], edges[-1] - timedelta(days=1)), edges[-1])  # type: ignore[arg-type]  # stubs: no datetime x
            locator = AutoDateLocator()
            axes.xaxis.set_major_locator(locator)
            axes.xaxis.set_major_formatter(ConciseDateFormatter(locator, **_date_formats()))
        axes.set_ylim(bottom=0)
        axes.spines[["top", "right"]].set_visible(False)
        axes.tick_params(axis="x", labelsize=8)
        return _svg(figure)


def _date_formats() -> dict[str, list[str]]:
    """ConciseDateFormatter's strftime formats in the active language (strftime's %b is always English)."""
    # Translators: the chart date formats are strftime formats (%Y year, %b month name, %m month, %d day).
    year = pgettext("chart date: year", "%Y")
    month = pgettext("chart date: month", "%b")
    day = pgettext("chart date: day of the month", "%d")
    year_month = pgettext("chart date: year and month", "%b %Y")
    date = pgettext("chart date: full date", "%d %b %Y")
    return {
        "formats": [year, month, day, "%H:%M", "%H:%M", "%S.%f"],
        "zero_formats": ["", year, month, day, "%H:%M", "%H:%M"],
        "offset_formats": ["", year, year_month, date, date, date + " %H:%M"],
    }


def _short(label: str, limit: int = 28) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


def mean_interval(lo: float, hi: float, mean: float, low: float, high: float) -> str:
    """The estimated mean as a dot with its 95 % interval, on the question's whole range [lo, hi]."""
    import matplotlib

    with matplotlib.rc_context(RC):
        figure = Figure(figsize=(6.4, 1.1))
        axes = figure.add_subplot()
        axes.axhline(0, color=MUTED, linewidth=0.8, alpha=0.5)
        errors = np.array([[max(mean - low, 0.0)], [max(high - mean, 0.0)]])
        axes.errorbar([mean], [0], xerr=errors, fmt="o", color=ACCENT, ecolor=INK, capsize=6, linewidth=1.6)
        margin = 0.02 * (hi - lo)
        axes.set_xlim(min(lo, low) - margin, max(hi, high) + margin)
        axes.set_yticks([])
        axes.grid(axis="x", alpha=0.3)
        axes.spines[["top", "right", "left"]].set_visible(False)
        return _svg(figure)


def trend_lines(
    labels: Sequence[str], rounds: Sequence[int], values: np.ndarray, low: np.ndarray, high: np.ndarray, percent: bool
) -> str:
    """Each label's estimate round by round (rows: rounds, columns: labels) with its 95 % interval.

    Labels are drawn side by side around each round (a small offset), so their bars do not overlap.
    """
    import matplotlib

    with matplotlib.rc_context(RC):
        figure = Figure(figsize=(6.4, 2.6))
        axes = figure.add_subplot()
        x = np.asarray(rounds, dtype=float)
        width = 0.3 / max(len(labels), 1)
        for j, label in enumerate(labels):
            shift = (j - (len(labels) - 1) / 2) * width
            errors = np.vstack([values[:, j] - low[:, j], high[:, j] - values[:, j]]).clip(0, None)
            axes.errorbar(x + shift, values[:, j], yerr=errors, fmt="o-", capsize=3, linewidth=1.2, label=_short(label))
        axes.set_xticks(
            x,
            labels=[
                pgettext("chart axis: round of a recurring survey", "Round %(number)s") % {"number": r} for r in rounds
            ],
        )
        if percent:
            axes.yaxis.set_major_formatter(PercentFormatter(xmax=1, decimals=0))
        axes.grid(axis="y", alpha=0.3)
        axes.spines[["top", "right"]].set_visible(False)
        if len(labels) > 1 or labels[0]:
            axes.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1, 1))
        return _svg(figure)


def crosstab_heatmap(
    row_labels: Sequence[str], column_labels: Sequence[str], cells: np.ndarray, low: np.ndarray, high: np.ndarray
) -> str:
    """A cross-tab's joint shares as a heatmap (vector cells, no raster image), each cell with its 95 % band."""
    import matplotlib

    rows, columns = cells.shape
    with matplotlib.rc_context(RC):
        figure = Figure(figsize=(1.2 * columns + 2.4, 0.7 * rows + 1.2))
        axes = figure.add_subplot()
        top = max(float(cells.max()), 1e-9)
        axes.pcolormesh(np.clip(cells, 0, None)[::-1], cmap="Blues", vmin=0, vmax=top, edgecolors="white")
        for a in range(rows):
            for b in range(columns):
                dark = cells[a, b] > 0.6 * top
                text = f"{100 * cells[a, b]:.0f} %\n{100 * low[a, b]:.0f}–{100 * high[a, b]:.0f}"
                axes.text(
                    b + 0.5, rows - a - 0.5, text, ha="center", va="center", fontsize=8, color="white" if dark else INK
                )
        axes.set_xticks(np.arange(columns) + 0.5, labels=[_short(label, 16) for label in column_labels])
        axes.set_yticks(np.arange(rows) + 0.5, labels=[_short(label) for label in row_labels[::-1]])
        axes.xaxis.tick_top()
        axes.tick_params(length=0)
        axes.spines[:].set_visible(False)
        return _svg(figure)


def matrix_colors(columns: int) -> list[str]:
    """The colour of each option's segment in :func:`matrix_bars` (viridis, its ends left out), as the
    page's legend names them: ``#rrggbb``."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    return [to_hex(color) for color in colormaps["viridis"](np.linspace(0.15, 0.85, columns))]


def matrix_bars(
    item_labels: Sequence[str], option_labels: Sequence[str], shares: np.ndarray, low: np.ndarray, high: np.ndarray
) -> str:
    """A matrix's items as stacked bars of their options' shares (rows of ``shares``), option ``j`` in
    ``matrix_colors(k)[j]``; the page draws the legend in HTML, so that every label shows whole and
    wraps on a phone (``option_labels`` only size the colours).

    Each option's 95 % band is drawn as an error bar at the right end of its segment: where that
    boundary could lie by the option's own uncertainty.
    """
    import matplotlib

    rows, columns = shares.shape
    assert len(option_labels) == columns
    colors = matrix_colors(columns)
    with matplotlib.rc_context(RC):
        figure = Figure(figsize=(6.4, 0.5 * rows + 0.9))
        axes = figure.add_subplot()
        positions = np.arange(rows)[::-1]
        left = np.zeros(rows)
        for j in range(columns):
            width = np.clip(shares[:, j], 0, None)
            axes.barh(positions, width, left=left, color=colors[j], height=0.6)
            errors = np.vstack([shares[:, j] - low[:, j], high[:, j] - shares[:, j]]).clip(0, None)
            axes.errorbar(left + width, positions, xerr=errors, fmt="none", ecolor=INK, capsize=3, linewidth=1)
            left = left + width
        axes.set_yticks(positions, labels=[_short(label) for label in item_labels])
        axes.xaxis.set_major_formatter(PercentFormatter(xmax=1, decimals=0))
        axes.set_xlim(0, max(1.0, float(left.max())) + 0.02)
        axes.spines[["top", "right"]].set_visible(False)
        return _svg(figure)


#: Cached charts never go stale (their key names what they show); this only bounds memory.
CACHE_SECONDS = 7 * 24 * 3600


def cached_chart(name: str, parts: Sequence[object], draw: Callable[[], str]) -> str:
    """The SVG ``draw()`` makes, drawn once per (``name``, ``parts``, chart version, language) and then
    served from Django's cache: ``parts`` must name everything the chart shows (tally digests, labels,
    estimate kind, bands), so a cached chart never goes stale; :data:`CACHE_SECONDS` only bounds memory.
    """
    key = ":".join(["murmur", name, str(CHART_VERSION), *map(str, parts), get_language()])
    svg = cache.get(key)
    if svg is None:
        svg = draw()
        cache.set(key, svg, CACHE_SECONDS)
    return svg


def short_digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
