"""The detection tests of :mod:`ldp.integrity`: is a tally's report-weight histogram (or its per-weight
bit counts) what honest reports give, under each mechanism's exact law of report weights
(:mod:`ldp.report_weights`)? Each returns a p-value; :func:`ldp.integrity.assess` combines them.

Ref. 1 is :mod:`ldp.integrity`'s: Cao, Jia and Gong, "Data Poisoning Attacks to Local Differential
Privacy Protocols", USENIX Security 2021.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ldp.mechanisms.base import Tally
from ldp.mechanisms.bitflip import SampledUnaryEncoding
from ldp.report_weights import weight_bit_law, weight_distribution

__all__ = ["MIN_EXPECTED", "MIN_ROW_REPORTS", "bit_contrast_test", "weight_excess_test", "weight_test"]

#: Pearson's rule: pool adjacent weight cells until each expects this many reports.
MIN_EXPECTED = 5.0


def weight_test(distribution: np.ndarray, profile: np.ndarray) -> float:
    """Pearson chi-square p-value of a weight histogram against the exact honest law.

    Adjacent cells are pooled, from the lowest weight up, until each expects MIN_EXPECTED reports
    (the last pool joins its neighbor if short); df = pools - 1. 1.0 if fewer than two pools.
    """
    total = int(profile.sum())
    expected = total * distribution
    groups, start, running = [], 0, 0.0
    for w, e in enumerate(expected):
        running += e
        if running >= MIN_EXPECTED:
            groups.append((start, w + 1))
            start, running = w + 1, 0.0
    if not groups:
        return 1.0
    groups[-1] = (groups[-1][0], expected.size)
    if len(groups) < 2:
        return 1.0
    observed = np.array([profile[a:b].sum() for a, b in groups], dtype=float)
    wanted = np.array([expected[a:b].sum() for a, b in groups])
    statistic = float(((observed - wanted) ** 2 / wanted).sum())
    return float(stats.chi2.sf(statistic, len(groups) - 1))


def weight_excess_test(distribution: np.ndarray, histogram: np.ndarray) -> float:
    """Exact one-sided p-value of the most over-represented weight, Bonferroni over the weights.

    Under honest reports the count h_w of reports of weight w is exactly Binomial(n, pi_w) (pi the
    honest law, the same for every answer), so P_w = P(Binomial(n, pi_w) >= h_w) needs no
    approximation; the test is min(1, W min_w P_w) over the W weights an honest report can have (a
    weight it cannot have, seen at all, gives 0). Any departure from the law over-fills some weight,
    and the attacks of Cao et al. (ref. 1) pile every fake on one weight, where this test has more
    power than a chi-square spread over W - 1 degrees of freedom (:func:`weight_test`).
    """
    total = int(histogram.sum())
    possible = distribution > 0
    if np.any(histogram[~possible] > 0):
        return 0.0
    tails = stats.binom.sf(histogram[possible] - 1, total, distribution[possible])
    return float(min(1.0, int(possible.sum()) * tails.min()))


#: Weight rows with fewer reports than this are left out of the bit-contrast test (normal approximation).
MIN_ROW_REPORTS = 50


def bit_contrast_test(mechanism: SampledUnaryEncoding, profile: np.ndarray, tally: Tally | None = None) -> float | None:
    """One-sided p-value of the largest excess of one weight row's estimate of an option over the others'.

    Given its weight w, an honest report sets bit u with probability P_wu = c_w + (a_w - c_w) f_u, where
    a_w = alpha_w / pi_w and c_w = gamma_w / pi_w (:func:`~ldp.report_weights.weight_bit_law`), the same
    f in every row; given the weight histogram the rows are independent and the ones_wu binomial. So each
    row estimates f: e_wu = (ones_wu / h_w - c_w) / (a_w - c_w), with variance P_wu (1 - P_wu) /
    (h_w (a_w - c_w)^2) (P_wu at the pooled estimate). Fakes crafted on one weight (ref. 1 sets the
    target's bit in every one) raise that row's estimate of their target above the other rows' inverse-
    variance pooled estimate: z_wu = (e_wu - pooled_u^(-w)) / sqrt(var_wu + var_pooled_u^(-w)), and the
    p-value is min(1, R k min Phi(-z_wu)) over the R rows with at least MIN_ROW_REPORTS reports and a
    bit that depends on the answer. None if fewer than two such rows.

    dBitFlip with d = 1 has one such row (weight 1); its weight-0 row counts, per bucket, the reports
    that sampled it and sent 0 (``tally``'s sampled counts minus the weight-1 ones, as in
    :func:`ldp.integrity.zero_bit_estimate`), with a_0 = (1 - p1) / (k pi_0) and c_0 = (1 - p0) / (k pi_0).
    """
    law = weight_distribution(mechanism)
    assert law is not None
    alpha, gamma = weight_bit_law(mechanism)
    table = profile[:, 1:].astype(float)
    if mechanism.d == 1 and tally is not None:
        k, p1, p0 = mechanism.k, mechanism.true_bit_probability, mechanism.other_bit_probability
        table = table.copy()
        table[0] = tally.counts[:k] - profile[1, 1:]
        alpha, gamma = alpha.copy(), gamma.copy()
        alpha[0], gamma[0] = (1 - p1) / k, (1 - p0) / k
    h = profile[:, 0].astype(float)
    rows = [w for w in range(h.size) if h[w] >= MIN_ROW_REPORTS and law[w] > 0 and abs(alpha[w] - gamma[w]) > 1e-12]
    if len(rows) < 2:
        return None
    a, c = alpha[rows] / law[rows], gamma[rows] / law[rows]
    slope = (a - c)[:, None]
    counts = h[rows][:, None]
    estimates = (table[rows] / counts - c[:, None]) / slope
    inverse_variances = np.zeros_like(estimates)
    pooled = np.clip(estimates.mean(axis=0), 0.0, 1.0)
    for _ in range(2):  # variance at the pooled estimate, pooled by inverse variance
        share = np.clip(c[:, None] + slope * pooled, 1e-9, 1 - 1e-9)
        inverse_variances = counts * slope**2 / (share * (1 - share))
        pooled = np.clip((estimates * inverse_variances).sum(axis=0) / inverse_variances.sum(axis=0), 0.0, 1.0)
    total, weighted = inverse_variances.sum(axis=0), (estimates * inverse_variances).sum(axis=0)
    others = total - inverse_variances
    rest = (weighted - estimates * inverse_variances) / others
    z = (estimates - rest) / np.sqrt(1 / inverse_variances + 1 / others)
    return float(min(1.0, z.size * stats.norm.sf(z.max())))
