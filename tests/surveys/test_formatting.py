from __future__ import annotations

import pytest
from django.utils import translation

from surveys.templatetags.murmur import count, epsilon, percent, points


@pytest.mark.parametrize(
    ("value", "digits", "expected"), [(0.40461, 1, "40.5 %"), (0.1, 0, "10 %"), (0.99996, 1, "100.0 %"), (None, 1, "")]
)
def test_percent_rounds(value, digits, expected):
    assert percent(value, digits) == expected


def test_points_and_epsilon():
    assert points(0.04249) == "4.2"
    assert epsilon(1.0) == "1"
    assert epsilon(0.25) == "0.25"


def test_korean_writes_the_percent_sign_without_a_space_and_groups_counts():
    with translation.override("ko"):
        assert percent(0.40461) == "40.5%"
        assert count(1203) == "1,203"
    assert count(1203) == "1,203"
