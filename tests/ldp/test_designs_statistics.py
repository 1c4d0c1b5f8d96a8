"""Seeded simulations of the randomized-response designs: unbiased, analytic variance, 95 % coverage.

Respondents are a simple random sample from a population with answer shares pi, so each design's
n = 1000 reports are one multinomial draw with shares lambda = M^T pi (refs. of ldp/designs/). The
moment estimator's variance is then the analytic Var_v = (sum_y B_vy^2 lambda_y - pi_v^2) / n,
B = M^-T. Tolerances come from the Monte-Carlo error of what is measured, over REPS surveys:

* the mean of REPS estimates has standard error sqrt(Var / REPS): it must lie within 4 of them;
* a sample variance has relative standard error sqrt(2 / REPS) (1.0 % at 20,000): within 4.5;
* a coverage rate has standard error sqrt(0.95 * 0.05 / REPS): 0.15 % at 20,000 repetitions, so
  94-96 % is +/- 6.5 of them; 0.34 % at the 4,000 repetitions of the MLE check (+/- 2.9).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp.designs import Crosswise, ForcedResponse, UnrelatedQuestion, Warner
from ldp.mechanisms import Tally

N = 1000
REPS = 20_000
Z = 1.959963984540054

DESIGNS = {
    "forced-yes-no": (ForcedResponse(k=2, epsilon=math.log(5), forced=["1/6", "1/6"]), (0.3, 0.7)),
    "forced-k3": (ForcedResponse(k=3, epsilon=math.log(7), forced=["1/6", "1/12", "1/4"]), (0.5, 0.3, 0.2)),
    "forced-k5-eps1": (ForcedResponse(k=5, epsilon=1.0), (0.4, 0.25, 0.15, 0.12, 0.08)),
    "unrelated-yes-no": (UnrelatedQuestion(k=2, epsilon=math.log(3), p="1/2", pi=["1/2", "1/2"]), (0.2, 0.8)),
    "unrelated-k3": (UnrelatedQuestion(k=3, epsilon=math.log(13), p="2/3", pi=["1/2", "1/3", "1/6"]), (0.6, 0.3, 0.1)),
    "warner": (Warner(k=2, epsilon=math.log(3), p="3/4"), (0.25, 0.75)),
    "crosswise": (Crosswise(k=2, epsilon=math.log(3), p="1/4"), (0.15, 0.85)),
}


def simulate(design, pi, reps, seed):
    """(estimates, standard errors, analytic variance): moment estimates of ``reps`` surveys."""
    rng = np.random.default_rng(seed)
    lam = design.channel.T @ np.asarray(pi)
    counts = rng.multinomial(N, lam, size=reps)
    inverse = np.linalg.inv(design.response_matrix)
    shares = counts / N
    estimates = shares @ inverse.T
    variances = (shares @ (inverse**2).T - estimates**2) / N
    analytic = ((inverse**2) @ lam - np.asarray(pi) ** 2) / N
    return estimates, np.sqrt(np.clip(variances, 0, None)), analytic


@pytest.mark.parametrize("key", DESIGNS)
def test_the_moment_estimator_is_unbiased_with_its_analytic_variance(key):
    design, pi = DESIGNS[key]
    estimates, _, analytic = simulate(design, pi, REPS, seed=11)
    assert np.all(np.abs(estimates.mean(axis=0) - pi) <= 4 * np.sqrt(analytic / REPS))
    assert np.all(np.abs(estimates.var(axis=0, ddof=1) / analytic - 1) <= 4.5 * math.sqrt(2 / REPS))


@pytest.mark.parametrize("key", DESIGNS)
def test_the_moment_intervals_cover_95_percent(key):
    design, pi = DESIGNS[key]
    estimates, errors, _ = simulate(design, pi, REPS, seed=12)
    covered = np.abs(estimates - np.asarray(pi)) <= Z * errors
    assert np.all((covered.mean(axis=0) >= 0.94) & (covered.mean(axis=0) <= 0.96)), covered.mean(axis=0)


def test_analyze_gives_the_standard_errors_the_simulations_use():
    design, pi = DESIGNS["forced-k3"]
    lam = design.channel.T @ np.asarray(pi)
    counts = np.round(lam * N).astype(np.int64)
    counts[-1] = N - counts[:-1].sum()
    result = design.analyze(Tally(N, counts))
    shares = counts / N
    inverse = np.linalg.inv(design.response_matrix)
    expected = np.sqrt((inverse**2 @ shares - (inverse @ shares) ** 2) / N)
    np.testing.assert_allclose(result.standard_errors, expected, rtol=1e-12)


@pytest.mark.statistical
@pytest.mark.parametrize("key", ["forced-yes-no", "unrelated-k3", "crosswise"])
def test_the_mle_intervals_cover_95_percent(key):
    design, pi = DESIGNS[key]
    rng = np.random.default_rng(13)
    lam = design.channel.T @ np.asarray(pi)
    reps = 4000
    covered = np.zeros(design.k)
    for counts in rng.multinomial(N, lam, size=reps):
        low, high = design.analyze(Tally(N, counts)).mle_interval()
        covered += (low <= pi) & (np.asarray(pi) <= high)
    rate = covered / reps
    assert np.all((rate >= 0.94) & (rate <= 0.96)), rate
