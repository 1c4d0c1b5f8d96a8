"""The maximal-gain experiment behind ldp.integrity.CAPABILITIES (issue 26)."""

from __future__ import annotations

import numpy as np
import pytest

from ldp import integrity
from ldp.experiments import poisoning


def test_a_tiny_run_has_every_row_and_the_attack_pays_against_k_rr():
    rows = poisoning.run_automatic(repetitions=3, honest=3, seed=1)
    assert len(rows) == 3 * (len(poisoning.AUTOMATIC) + len(poisoning.REFERENCE))
    krr = [r for r in rows if r.name == "krr" and r.fake_share == 0.10][0]
    # Every fake names the target: the plain estimate of it rises by about beta (1 - q) / (p - q) = 32 points.
    assert krr.plain_shift > 0.2 and "| k-RR | yes | 10 % |" in poisoning.markdown_automatic(rows)


@pytest.mark.slow
def test_the_declared_capabilities_are_what_the_experiment_measures():
    rows = poisoning.run_automatic(repetitions=300, honest=400, seed=2026)
    verdicts = poisoning.recovery_verdicts(rows)
    assert verdicts == {name: c.recovers for name, c in integrity.CAPABILITIES.items()}
    for row in rows:
        declared = dict(integrity.CAPABILITIES[row.name].detection)
        if row.fake_share:  # the declared (least over a name's settings) rates hold within 4 standard errors
            rate = declared[row.fake_share]
            assert row.flagged >= rate - 4 * np.sqrt(max(rate * (1 - rate), 0.01) / row.runs), row
        else:
            assert row.flagged <= integrity.ALPHA + 3 * np.sqrt(0.05 * 0.95 / row.runs), row


def test_with_verifiable_randomization_the_attack_gains_at_most_the_fakes_share():
    rng = np.random.default_rng(3)
    for label in poisoning.VERIFIABLE:
        row = poisoning.verifiable_gain(label, 0.10, 40, rng)
        # Input manipulation moves the target by beta (1 - f_t) on average; 40 runs: SE below 1 point.
        assert row.gain_with <= 0.10 + 0.02 and row.gain_without > 0.10, row
        assert 0.97 < row.epsilon <= poisoning.EPSILON
