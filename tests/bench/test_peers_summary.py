"""The peer benchmark's baselines: the held-out best peer per cell and the best single peer per grid."""

from __future__ import annotations

import numpy as np

from bench.peers import Cell, held_out_best, held_out_single_peer


def cell(label: str, first: float, second: float, repetitions: int = 10) -> Cell:
    """A peer cell whose first half of repetitions errs ``first`` on average and second half ``second``."""
    half = repetitions // 2
    spread = np.linspace(-0.001, 0.001, half)
    errors = tuple(first + spread) + tuple(second + spread)
    return Cell("g", 500, 1.0, label, float(np.mean(errors)), 0.0, 0.0, errors)


def test_the_single_peer_is_chosen_on_the_first_halves_over_the_whole_grid_and_scored_on_the_second():
    # "a" wins one cell by a little and loses the other by a lot; "b" is steady: the single peer is
    # "b", though "a" is the best peer of the first cell.
    grid = [
        [cell("a", 0.10, 0.30), cell("b", 0.11, 0.12)],
        [cell("a", 0.40, 0.40), cell("b", 0.20, 0.21)],
    ]
    assert held_out_best(grid[0])[0] == "a"
    scored = held_out_single_peer(grid)
    assert [label for label, _, _ in scored] == ["b", "b"]
    assert np.allclose([error for _, error, _ in scored], [0.12, 0.21])  # the second halves
    assert all(se > 0 for _, _, se in scored)


def test_the_single_peer_score_is_relative_so_large_errors_do_not_decide_alone():
    # Raw sums would pick "a" (0.50 + 0.010 < 0.52 + 0.005); relative to each cell's best, "b" is
    # 1.04 and 1.0 times the best, "a" 1.0 and 2.0 times.
    grid = [
        [cell("a", 0.50, 0.50), cell("b", 0.52, 0.52)],
        [cell("a", 0.010, 0.010), cell("b", 0.005, 0.005)],
    ]
    assert {label for label, _, _ in held_out_single_peer(grid)} == {"b"}
