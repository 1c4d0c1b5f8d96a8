from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from surveys.charts import estimate_bars, responses_over_time


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
