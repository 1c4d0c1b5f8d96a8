from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from surveys.results.charts import crosstab_heatmap, estimate_bars, matrix_bars, matrix_colors, responses_over_time


def test_estimate_bars_are_scalable_svg_with_the_option_labels():
    svg = estimate_bars(
        ["Yes", "아니오", "A very long option label that will need shortening"],
        np.array([0.5, 0.3, 0.2]),
        np.array([0.4, 0.2, -0.05]),
        np.array([0.6, 0.4, 0.45]),
    )
    assert svg.startswith("<svg")
    assert 'viewBox="' in svg
    assert ' width="' not in svg[: svg.index(">")]  # scales with its container
    for text in (">Yes<", ">아니오<", ">A very long option label th…<", ">100%<"):
        assert text in svg


def test_responses_over_time_draws_a_day_at_least():
    start = datetime(2026, 11, 22, 9, tzinfo=UTC)
    svg = responses_over_time([start, start + timedelta(hours=2)], [10, 5])
    assert svg.startswith("<svg")
    assert "<path" in svg


def test_the_cross_tab_heatmap_is_vector_svg_with_both_questions_labels_and_each_cells_band():
    cells = np.array([[0.3, 0.1], [0.2, 0.4]])
    svg = crosstab_heatmap(["Apple", "배"], ["Yes", "No"], cells, cells - 0.05, cells + 0.05)
    assert svg.startswith("<svg") and "<image" not in svg  # cells are paths, not a raster
    for text in (">Apple<", ">배<", ">Yes<", ">No<", "40 %", "35–45"):
        assert text in svg
    assert " style=" not in svg  # presentation attributes only (the page's CSP)


def test_matrix_bars_stack_each_items_options_in_the_colours_the_pages_legend_names():
    """The bars' colours are :func:`matrix_colors`'; their legend is the page's (full labels that wrap
    on a phone), not text in the SVG, which would be cut and shrink with the chart."""
    shares = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    options = ["Strongly disagree with this", "Neutral", "Agree"]
    svg = matrix_bars(["Tools", "도구"], options, shares, shares - 0.05, shares + 0.05)
    assert svg.startswith("<svg") and ' width="' not in svg[: svg.index(">")]
    for text in (">Tools<", ">도구<", ">100%<"):
        assert text in svg
    assert "…" not in svg and "Strongly" not in svg and ">Agree<" not in svg
    colours = matrix_colors(len(options))
    assert len(set(colours)) == 3
    for colour in colours:
        assert f'fill="{colour}"' in svg
