"""The consistency-adjustment experiment: its table, on a small grid."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from ldp.estimators import estimate_proportions
from ldp.experiments import adjustment
from ldp.mechanisms import make_mechanism

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


@pytest.mark.parametrize(
    ("name", "k", "n", "epsilon", "answers", "repetitions"),
    [
        ("subset", 20, 500, 1.0, "Zipf(1.1)", 6),  # both branches: shrinks on some tallies, adjusts on others
        ("krr", 5, 1000, 0.5, "near-uniform", 6),
        ("subset", 2, 500, 0.5, "two options 60/40", 6),  # below the shrinking range
        ("krr", 80, 500, 0.5, "uniform", 2),  # above it
    ],
)
def test_its_auto_is_what_the_pages_show(name, k, n, epsilon, answers, repetitions):
    # measure() copies Mechanism.automatic_consistency's decision to reuse the fitted priors and
    # bands across rules; the copy must err exactly as much as the estimator "auto" itself.
    row = adjustment.measure(name, k, n, epsilon, answers, repetitions, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    mechanism = make_mechanism(name, k=k, epsilon=epsilon)
    counts = rng.multinomial(n, adjustment.DISTRIBUTIONS[answers](k))
    tallies = mechanism.sample_tallies(counts, repetitions, rng=rng)
    unbiased = estimate_proportions(mechanism, tallies, n, "unbiased")
    methods = [mechanism.automatic_consistency(u, n) for u in unbiased]
    errors = np.abs(estimate_proportions(mechanism, tallies, n, "auto") - counts / n).max(axis=1)
    assert row.auto == pytest.approx(errors.mean(), rel=1e-12)
    assert row.eb_share == pytest.approx(methods.count("eb") / len(methods))
