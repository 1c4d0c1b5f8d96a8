"""The free-text and longitudinal-leak experiment (ldp.experiments.rappor), on small settings."""

from __future__ import annotations

import math

import numpy as np

from ldp.experiments import rappor


def test_the_measured_observer_never_beats_the_epsilon_bound_and_memoization_caps_the_leak():
    # 20,000 observers per cell: a success rate has a standard error below 0.36 %.
    rng = np.random.default_rng(5)
    rows = [rappor.measure_leak(r, 20_000, rng) for r in (1, 4, 10)]
    for row in rows:
        for measured, bound in ((row.attack_memoized, row.bound_memoized), (row.attack_fresh, row.bound_fresh)):
            assert measured <= bound + 4 * math.sqrt(0.25 / 20_000)
    one, _, ten = rows
    assert abs(one.attack_memoized - one.attack_fresh) < 8 * math.sqrt(0.25 / 20_000)  # one round: the same mechanism
    assert ten.attack_fresh > ten.attack_memoized + 0.05  # fresh PRRs leak more over ten rounds
    assert ten.epsilon_memoized < rappor.SEED_FIG3.epsilon_infinity() < ten.epsilon_fresh


def test_decoding_rows_are_written_for_each_mechanism(tmp_path, monkeypatch):
    monkeypatch.setattr(rappor, "SIZES", (20_000,))
    decoding, leak = rappor.run(tmp_path, repetitions=2, attackers=2000)
    assert [row.mechanism for row in decoding] == ["RAPPOR", "CMS", "HCMS"]
    assert all(0 <= row.false_discovery_rate <= 1 and row.found >= 1 for row in decoding)
    assert [row.rounds for row in leak] == list(range(1, 11))
    assert (tmp_path / "rappor_decoding.csv").read_text().startswith("mechanism,n,found")
    assert "| RAPPOR | 20,000 |" in rappor.markdown(decoding, leak)
