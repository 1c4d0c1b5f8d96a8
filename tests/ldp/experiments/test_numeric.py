from __future__ import annotations

import math

import pytest

from ldp.experiments import numeric


def test_the_crossover_is_the_published_one_for_both_versions():
    # Wang et al. (ICDE 2019): Duchi et al.'s mechanism has the smaller worst-case variance below
    # epsilon ~ 1.29, Piecewise above. Murmur's grid versions cross within 0.03 of it.
    assert numeric.published_crossover() == pytest.approx(1.29, abs=0.005)
    assert numeric.grid_crossover() == pytest.approx(numeric.published_crossover(), abs=0.03)


def test_measured_errors_match_the_analytic_ones(tmp_path):
    rows = numeric.run(tmp_path, repetitions=300, n=2000)
    assert (tmp_path / "numeric.csv").exists()
    assert len(rows) == len(numeric.MECHANISMS) * len(numeric.EPSILONS) * len(numeric.POSITIONS)
    for row in rows:
        # RMSE over 300 repetitions estimates the SE to about 4 % (one standard error).
        assert row.rmse == pytest.approx(row.analytic_se, rel=0.2), row
        if row.published_se is not None and row.mechanism != "Piecewise":
            assert row.analytic_se == pytest.approx(row.published_se, rel=1e-6)
        if row.mechanism == "Piecewise":
            assert row.analytic_se == pytest.approx(row.published_se, rel=0.01)
    table = numeric.markdown(rows)
    assert "Published crossover" in table and "| Hybrid |" in table
    assert math.isfinite(rows[0].rmse_se)
