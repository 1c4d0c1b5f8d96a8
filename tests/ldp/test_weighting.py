"""Post-stratification and raking of randomized shares (ldp/weighting.py).

Checked against implementations written here: the literature's closed-form forced-response
estimator per stratum (Fox and Tracy 1986) weighted by hand, and raking as the
Kullback-Leibler projection of the sample's cell shares onto the margins (Ireland and Kullback
1968), found by scipy.optimize's SLSQP; and against the true share of a simulated finite
population sampled disproportionately, which the weighted bands must cover (94-96 % of 4,000
samples in the statistical test: Monte-Carlo SE 0.34 %).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import optimize

from ldp.designs import ForcedResponse
from ldp.weighting import post_stratify, rake, raked_estimate

DESIGN = ForcedResponse(k=2, epsilon=math.log(5), forced=["1/6", "1/6"])
#: Four strata (2 age bands x 2 regions): population shares and the share answering "yes" (option 0).
POPULATION = np.array([0.4, 0.3, 0.2, 0.1])
PREVALENCE = np.array([0.1, 0.2, 0.5, 0.7])
TRUTH = float(POPULATION @ PREVALENCE)
#: Sample sizes: the small strata oversampled, so the unweighted share is biased upward.
SAMPLE = np.array([200, 200, 400, 400])


def sample(rng, sizes=SAMPLE):
    """(reports, strata) of a stratified sample, answers drawn at each stratum's prevalence."""
    strata = np.repeat(np.arange(4), sizes)
    answers = (rng.random(strata.size) >= PREVALENCE[strata]).astype(np.int64)  # 0 = yes
    return DESIGN.randomize(answers, rng=rng)[:, 0], strata


def test_post_stratification_is_the_weighted_sum_of_the_closed_form_estimates():
    reports, strata = sample(np.random.default_rng(1))
    result = post_stratify(DESIGN, reports, strata, POPULATION)
    # Fox and Tracy: pi_h = (lambda_h - p_yes) / t, Var = lambda_h (1 - lambda_h) / (n_h t^2).
    p_yes, t = 1 / 6, 2 / 3
    estimate = variance = 0.0
    for h, weight in enumerate(POPULATION):
        lam = np.mean(reports[strata == h] == 0)
        estimate += weight * (lam - p_yes) / t
        variance += weight**2 * lam * (1 - lam) / (np.sum(strata == h) * t * t)
    assert result.proportions[0] == pytest.approx(estimate, abs=1e-12)
    assert result.standard_errors[0] == pytest.approx(math.sqrt(variance), rel=1e-12)
    assert result.proportions.sum() == pytest.approx(1)


def test_the_weighted_band_covers_the_true_population_share_and_the_unweighted_misses_it():
    reports, strata = sample(np.random.default_rng(2), SAMPLE * 10)
    result = post_stratify(DESIGN, reports, strata, POPULATION)
    low, high = result.confidence_interval()
    assert low[0] <= TRUTH <= high[0]
    unweighted = DESIGN.analyze(DESIGN.tally(reports.reshape(-1, 1).astype(np.uint8)))
    assert abs(unweighted.proportions[0] - TRUTH) > 5 * unweighted.standard_errors[0]


def kl_projection(cells, counts, margins):
    """argmin sum_c w_c ln(w_c / s_c) subject to the margins, by SLSQP (Ireland and Kullback 1968)."""
    s = counts / counts.sum()
    # Each margin's last level follows from the others and the total: leaving them out keeps the
    # constraints independent.
    constraints = [{"type": "eq", "fun": lambda w: w.sum() - 1}] + [
        {"type": "eq", "fun": (lambda w, q=q, t=margin[level], level=level: w[cells[:, q] == level].sum() - t)}
        for q, margin in enumerate(margins)
        for level in range(len(margin) - 1)
    ]
    result = optimize.minimize(
        lambda w: np.sum(w * np.log(np.maximum(w, 1e-300) / s)),
        s,
        method="SLSQP",
        bounds=[(1e-12, 1)] * len(s),
        constraints=constraints,
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    return result.x


def test_raking_is_the_kullback_leibler_projection_onto_the_margins():
    rng = np.random.default_rng(3)
    answers = np.column_stack([rng.integers(0, 2, 800), rng.choice(3, 800, p=[0.5, 0.3, 0.2])])
    margins = [np.array([0.45, 0.55]), np.array([0.2, 0.3, 0.5])]
    cells, shares = rake(answers, margins)
    _, counts = np.unique(answers, axis=0, return_counts=True)
    assert_allclose(shares, kl_projection(cells, counts, margins), atol=1e-6)
    for q, margin in enumerate(margins):
        assert_allclose(np.bincount(cells[:, q], weights=shares), margin, atol=1e-12)


def test_raking_to_the_strata_themselves_is_post_stratification():
    reports, strata = sample(np.random.default_rng(4))
    raked = raked_estimate(DESIGN, reports, strata[:, None], [POPULATION])
    assert_allclose(raked.proportions, post_stratify(DESIGN, reports, strata, POPULATION).proportions, atol=1e-12)
    # Raking to the two margins of the 2 x 2 strata recovers the joint shares when they factorize.
    age, region = strata // 2, strata % 2
    joint = np.outer([0.7, 0.3], [0.6, 0.4]).ravel()
    by_margins = raked_estimate(DESIGN, reports, np.column_stack([age, region]), [[0.7, 0.3], [0.6, 0.4]])
    assert_allclose(by_margins.weights, joint, atol=1e-10)
    assert_allclose(by_margins.proportions, post_stratify(DESIGN, reports, strata, joint).proportions, atol=1e-9)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda r, s: post_stratify(DESIGN, r, s, [0.5, 0.5]), "strata must lie in"),
        (lambda r, s: post_stratify(DESIGN, r, s, [0.4, 0.3, 0.2, 0.2]), "population must be non-negative shares"),
        (lambda r, s: post_stratify(DESIGN, r, s[:-1], POPULATION), "strata must be one integer per report"),
        (lambda r, s: post_stratify(DESIGN, r[s < 3], s[s < 3], POPULATION), r"strata \[3\] without respondents"),
        (lambda r, s: post_stratify(DESIGN, r + 2, s, POPULATION), "reports must be option indices"),
        (lambda r, s: rake(s[:, None], [[0.5, 0.5]]), r"answers\[:, 0\] must lie in"),
        (lambda r, s: rake(s[:, None], [[0.2, 0.2, 0.2, 0.2, 0.3]]), r"margins\[0\] must be non-negative"),
        (lambda r, s: rake(s[s < 3, None], [[0.25] * 4]), "a level no respondent has"),
        (lambda r, s: raked_estimate(DESIGN, r, s[:-1, None], [POPULATION]), "one row per report"),
    ],
)
def test_bad_arguments_are_refused_naming_them(call, message):
    reports, strata = sample(np.random.default_rng(5))
    with pytest.raises(ValueError, match=message):
        call(reports, strata)


@pytest.mark.statistical
def test_the_post_stratified_bands_cover_the_population_share():
    rng = np.random.default_rng(6)
    reps = 4000
    covered = 0
    estimates = []
    for _ in range(reps):
        result = post_stratify(DESIGN, *sample(rng), POPULATION)
        low, high = result.confidence_interval()
        covered += low[0] <= TRUTH <= high[0]
        estimates.append(result.proportions[0])
    assert 0.94 <= covered / reps <= 0.96
    assert abs(np.mean(estimates) - TRUTH) <= 4 * np.std(estimates) / math.sqrt(reps)
