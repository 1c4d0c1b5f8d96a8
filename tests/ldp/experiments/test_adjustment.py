"""The consistency-adjustment experiment: its table, on a small grid."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from ldp.estimates import Interval
from ldp.experiments import adjustment
from ldp.experiments.adjustment import most_even_within

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


def test_most_even_within_bands_is_the_closest_distribution_to_uniform_inside_them():
    rng = np.random.default_rng(8)
    for _ in range(50):
        low = rng.uniform(0, 0.2, size=6)
        high = low + rng.uniform(0, 0.5, size=6)
        f = most_even_within(Interval(low, high))
        if f is None:
            assert low.sum() > 1 or high.sum() < 1
            continue
        assert f.sum() == pytest.approx(1.0) and np.all(f >= low - 1e-12) and np.all(f <= high + 1e-12)
        # Any feasible move along the simplex (+t on one share, -t on another) moves away from uniform.
        for i in range(6):
            for j in range(6):
                if i != j and f[i] + 1e-3 <= high[i] and f[j] - 1e-3 >= low[j]:
                    moved = f.copy()
                    moved[i] += 1e-3
                    moved[j] -= 1e-3
                    assert np.sum((moved - 1 / 6) ** 2) >= np.sum((f - 1 / 6) ** 2) - 1e-12
