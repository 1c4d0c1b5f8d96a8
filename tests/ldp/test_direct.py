"""A question asked directly: the identity channel, whose epsilon is infinite and said so."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp import registry
from ldp.direct import DirectAnswer
from ldp.mechanisms.base import Tally
from ldp.privacy import posterior_bound


def test_its_epsilon_is_infinite_by_enumeration_and_in_closed_form():
    direct = registry.build("direct", k=4, epsilon=math.inf)
    assert direct.worst_case_log_ratio() == math.inf
    assert direct.enumerated_log_ratio() == math.inf  # every column holds a 1 and zeros
    assert direct.privacy_guarantee() == (math.inf, 0.0)
    assert float(posterior_bound(0.1, math.inf)) == 1.0


def test_it_is_no_ldp_mechanism_in_the_registry():
    assert "direct" not in registry.names()
    assert registry.family_of("direct") == "shares" and not registry.randomized("direct")
    assert all(registry.randomized(name) for name in registry.names())


@pytest.mark.parametrize("epsilon", [1.0, 0.0, -math.inf, "inf"])
def test_it_refuses_a_finite_epsilon(epsilon):
    with pytest.raises(ValueError, match="epsilon must be inf"):
        DirectAnswer(k=3, epsilon=epsilon)


def test_its_estimate_is_the_plain_share_and_its_report_the_answer():
    direct = DirectAnswer(k=3)
    answers = np.array([0, 2, 2, 1, 2])
    packed = direct.randomize(answers, rng=0)
    assert packed.ravel().tolist() == answers.tolist()
    assert direct.parse_report({"value": 2}) == b"\x02"
    estimate = direct.analyze(Tally(5, np.array([1, 1, 3])))
    np.testing.assert_allclose(estimate.proportions, [0.2, 0.2, 0.6])
    # Multinomial sampling variance lambda (1 - lambda) / n of the plain share.
    np.testing.assert_allclose(estimate.standard_errors**2, [0.2 * 0.8 / 5, 0.2 * 0.8 / 5, 0.6 * 0.4 / 5])
