"""The consistency-adjustment experiment: its table, on a small grid."""

from __future__ import annotations

import csv

import pytest

from ldp.experiments import adjustment

GRID = {"mechanisms": ("krr",), "options": (5,), "sizes": (1000,), "epsilons": (0.5, 2.0), "answers": ("uniform",)}


def test_writes_one_row_per_cell_and_a_summary(tmp_path):
    rows = adjustment.run(tmp_path, repetitions=20, grid=GRID)
    assert len(rows) == 2
    with (tmp_path / "adjustment.csv").open() as handle:
        assert [float(r["epsilon"]) for r in csv.DictReader(handle)] == [0.5, 2.0]
    table = adjustment.markdown(rows)
    assert table.splitlines()[0].startswith("| answers | cells | clip: mean / worst | Norm-Sub: mean / worst")
    assert "| all | 2 |" in table


def test_is_reproducible(tmp_path):
    first = adjustment.run(tmp_path, repetitions=10, grid=GRID)
    assert adjustment.run(tmp_path, repetitions=10, grid=GRID) == first


@pytest.mark.parametrize("answers", list(adjustment.DISTRIBUTIONS))
def test_every_distribution_is_one(answers):
    for k in (5, 20):
        shares = adjustment.DISTRIBUTIONS[answers](k)
        assert shares.shape == (k,) and shares.min() >= 0 and shares.sum() == pytest.approx(1.0)
