from __future__ import annotations

import pytest

from surveys.templatetags.murmur import epsilon, percent, points


@pytest.mark.parametrize(
    ("value", "digits", "expected"), [(0.40461, 1, "40.5 %"), (0.1, 0, "10 %"), (0.99996, 1, "100.0 %"), (None, 1, "")]
)
def test_percent_rounds(value, digits, expected):
    assert percent(value, digits) == expected


def test_points_and_epsilon():
    assert points(0.04249) == "4.2"
    assert epsilon(1.0) == "1"
    assert epsilon(0.25) == "0.25"
