"""Exact privacy of the numeric mechanisms, on the integer weights the reports are drawn from.

For pure-epsilon mechanisms: every column of the integer table (every possible report) has
max_k w[k][y] <= e^epsilon min_k' w[k'][y], decided in exact arithmetic
(:func:`ldp.numeric.base.ratio_within`), by enumeration for small grids and by each mechanism's
closed form for the grids in use; the bound is tight (within 1e-9 of epsilon). Values off the
grid mix two rows, which the mixture tests check. For the Gaussian: the exact delta of the table
at the stated epsilon, by the hockey-stick divergence and by the privacy-loss distribution.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from ldp import gdp_delta
from ldp.numeric import DuchiMean, GaussianMean, HybridMean, LaplaceMean, OneBitMean, PiecewiseMean
from ldp.numeric.base import ratio_within
from ldp.numeric.gaussian import discrete_gaussian_delta
from ldp.numeric.laplace import clamped_geometric_log_ratio
from ldp.privacy import EPSILON_MAX, EPSILON_MIN, worst_case_log_ratio

EPSILONS = [EPSILON_MIN, 0.1, 0.5, 1.0, math.log(3), 1.29, 2.0, 5.0, EPSILON_MAX]
PURE = [LaplaceMean, OneBitMean, DuchiMean, PiecewiseMean, HybridMean]


def column_extremes(table: list[list[int]]) -> list[tuple[int, int]]:
    return [(max(column), min(column)) for column in zip(*table, strict=True)]


def exact_worst_ratio(table: list[list[int]]) -> Fraction:
    """max over reports of max_k w / min_k w, as an exact fraction (reports no row can give skipped)."""
    worst = Fraction(1)
    for high, low in column_extremes(table):
        if high == 0:
            continue
        assert low > 0, "a report possible from one value and impossible from another"
        worst = max(worst, Fraction(high, low))
    return worst


SMALL = [
    *(LaplaceMean(lo=0, hi=1, epsilon=e, grid=g) for e in (0.1, 1.0, 5.0) for g in (1, 2, 3, 10)),
    *(OneBitMean(lo=0, hi=1, epsilon=e, grid=g) for e in (0.1, 1.0, 5.0) for g in (1, 4, 10)),
    *(PiecewiseMean(lo=0, hi=1, epsilon=e, grid=g) for e in (0.1, 1.0, 5.0) for g in (2, 10, 30)),
    *(HybridMean(lo=0, hi=1, epsilon=e, grid=g) for e in (0.5, 1.0, 5.0) for g in (2, 10)),
]


@pytest.mark.parametrize("mechanism", SMALL, ids=lambda m: f"{m.name}-e{m.epsilon}-G{m.grid}")
def test_enumerated_worst_ratio_is_at_most_e_epsilon_and_equals_the_closed_form(mechanism):
    table = mechanism.report_weights()
    assert len(table) == mechanism.grid + 1
    assert len({sum(row) for row in table}) == 1, "every grid point's weights share one total"
    worst = exact_worst_ratio(table)
    assert ratio_within(worst.numerator, worst.denominator, mechanism.epsilon)
    assert math.log(worst) == pytest.approx(mechanism.worst_case_log_ratio(), abs=1e-12)
    assert worst_case_log_ratio(mechanism.report_probabilities()) == pytest.approx(math.log(worst), abs=1e-12)
    assert mechanism.worst_case_log_ratio() >= mechanism.epsilon - 1e-9  # tight: the budget is spent


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("cls", PURE, ids=lambda c: c.name)
def test_closed_form_epsilon_at_every_budget(cls, epsilon):
    # The closed form is a float logarithm of an integer ratio (error ~1e-16); the exact
    # comparison with e^epsilon is the enumeration test's and the general-grid test's.
    mechanism = cls(lo=-5, hi=20, epsilon=epsilon)
    assert mechanism.epsilon - 1e-9 <= mechanism.worst_case_log_ratio() <= mechanism.epsilon + 1e-15


@pytest.mark.parametrize("grid", [1, 7, 100, 1000, 4096])
@pytest.mark.parametrize("epsilon", [EPSILON_MIN, 1.0, EPSILON_MAX])
def test_laplace_closed_form_is_decided_exactly_for_general_grids(epsilon, grid):
    mechanism = LaplaceMean(lo=0, hi=1, epsilon=epsilon, grid=grid)
    w = [int(v) for v in mechanism.noise_weights]
    assert all(a >= b for a, b in zip(w[:-1], w[1:-1], strict=False)), "w(0..G-1) decreases"
    # Interior reports: w(0) / w(G - 1); the clamped ends: S(0) / S(G) = sum(w) / w(G).
    assert ratio_within(sum(w), w[-1], epsilon)
    assert grid < 2 or ratio_within(w[0], w[-2], epsilon)
    assert clamped_geometric_log_ratio(mechanism.noise_weights) == pytest.approx(epsilon, abs=1e-9)
    # q is e^(-epsilon / G) up to the quantization margin: b = (hi - lo) / epsilon as G grows.
    assert mechanism.noise_parameter == pytest.approx(math.exp(-epsilon / grid), rel=1e-11)


def test_boundary_cases_are_exact():
    # 1BitMean at epsilon = ln 3: P(1) is exactly 1/4 at lo and 3/4 at hi (OpenDP's style of check).
    one_bit = OneBitMean(lo=0, hi=1, epsilon=math.log(3), grid=4)
    rows = one_bit.report_weights()
    assert Fraction(rows[0][1], sum(rows[0])) == Fraction(1, 4)
    assert Fraction(rows[-1][1], sum(rows[-1])) == Fraction(3, 4)
    assert exact_worst_ratio(rows) == 3
    # Piecewise at epsilon = 2 ln 3: window weight exactly 9 times the rest, e^(epsilon/2) = 3.
    piecewise = PiecewiseMean(lo=0, hi=1, epsilon=2 * math.log(3), grid=9)
    assert exact_worst_ratio(piecewise.report_weights()) == 9
    assert piecewise.window == 3
    # The float just below 2 ln 3 may not reach 9: the check is exact, not float-rounded.
    below = PiecewiseMean(lo=0, hi=1, epsilon=math.nextafter(2 * math.log(3), 0), grid=9)
    assert exact_worst_ratio(below.report_weights()) < 9


def test_duchi_is_one_bit_mean():
    for epsilon in (0.3, 2.0):
        assert DuchiMean(0, 1, epsilon).report_weights() == OneBitMean(0, 1, epsilon).report_weights()
    assert DuchiMean(-1, 1, 1.0).output_values() == pytest.approx([-2.1639534, 2.1639534])


def test_hybrid_below_the_threshold_is_duchi():
    hybrid = HybridMean(lo=0, hi=1, epsilon=0.6, grid=10)
    duchi = DuchiMean(lo=0, hi=1, epsilon=0.6, grid=10)
    assert hybrid.piecewise_probability == 0
    np.testing.assert_array_equal(hybrid.report_probabilities()[:, -2:], duchi.report_probabilities())


@pytest.mark.parametrize(
    "mechanism",
    [
        LaplaceMean(lo=0, hi=1, epsilon=1.0, grid=5),
        OneBitMean(lo=0, hi=1, epsilon=1.0, grid=5),
        PiecewiseMean(lo=0, hi=1, epsilon=1.0, grid=5),
        HybridMean(lo=0, hi=1, epsilon=2.0, grid=5),
    ],
    ids=lambda m: m.name,
)
def test_values_off_the_grid_mix_two_rows_and_stay_within_e_epsilon(mechanism):
    # P(y | x) = (1 - f) P(y | k) + f P(y | k + 1): every pair of mixtures obeys the grid rows' bound.
    rows = mechanism.report_probabilities()
    x = np.linspace(0, 1, 2001)
    t = x * mechanism.grid
    below = np.minimum(np.floor(t), mechanism.grid - 1).astype(int)
    f = (t - below)[:, None]
    mixtures = (1 - f) * rows[below] + f * rows[below + 1]
    logs = np.log(mixtures)
    assert (logs.max(axis=0) - logs.min(axis=0)).max() <= mechanism.epsilon + 1e-12


@pytest.mark.parametrize("epsilon", [EPSILON_MIN, 0.1, 0.5, 1.0, 3.0, EPSILON_MAX])
@pytest.mark.parametrize("delta", [1e-5, 1e-9])
def test_gaussian_delta_of_the_table_meets_the_target(epsilon, delta):
    mechanism = GaussianMean(lo=0, hi=1, epsilon=epsilon, delta=delta)
    exact = mechanism.delta_at(epsilon)
    assert exact <= delta
    assert exact >= 0.95 * delta  # and spends nearly all of it
    # The continuous Gaussian at the mu the table effectively uses has nearly the same delta.
    assert gdp_delta(epsilon, mechanism.grid / mechanism.noise_scale) == pytest.approx(exact, rel=0.03)
    assert mechanism.worst_case_log_ratio() == math.inf  # (epsilon, delta), never pure epsilon


def test_gaussian_delta_by_the_privacy_loss_distribution():
    # delta(eps) = E_P[(1 - e^(eps - L))_+] with L = ln P(y|0) / P(y|G), y ~ P(.|0), plus P's mass where
    # the other row is 0 (L infinite): the same number as the hockey-stick sum.
    mechanism = GaussianMean(lo=0, hi=1, epsilon=1.0, delta=1e-5)
    rows = mechanism.report_probabilities()
    p, q = rows[0], rows[-1]
    infinite = (p > 0) & (q == 0)
    both = (p > 0) & (q > 0)
    loss = np.log(p[both]) - np.log(q[both])
    delta = p[infinite].sum() + (p[both] * np.maximum(0, 1 - np.exp(1.0 - loss))).sum()
    assert delta == pytest.approx(mechanism.delta_at(1.0), rel=1e-9)
    assert delta == pytest.approx(discrete_gaussian_delta(mechanism.noise_weights, mechanism.grid, 1.0), rel=1e-9)
    # The worst pair of grid points is the farthest apart.
    deltas = [discrete_gaussian_delta(mechanism.noise_weights, s, 1.0) for s in range(1, mechanism.grid + 1)]
    assert deltas == sorted(deltas)


def test_gaussian_mixtures_of_grid_rows_keep_delta():
    # Joint convexity of the hockey-stick divergence: off-grid values are no worse than grid points.
    mechanism = GaussianMean(lo=0, hi=1, epsilon=1.0, delta=1e-5, grid=3)
    rows = mechanism.report_probabilities()
    rng = np.random.default_rng(4)
    for _ in range(50):
        a, b = (w @ rows for w in rng.dirichlet(np.ones(rows.shape[0]), size=2))
        assert np.maximum(a - math.e * b, 0).sum() <= 1e-5


def test_the_stated_guarantee_names_delta_only_for_the_gaussian():
    assert GaussianMean(lo=0, hi=1, epsilon=1.0, delta=1e-6).privacy_guarantee() == (1.0, 1e-6)
    for cls in PURE:
        assert cls(lo=0, hi=1, epsilon=2.0).privacy_guarantee() == (2.0, 0.0)
