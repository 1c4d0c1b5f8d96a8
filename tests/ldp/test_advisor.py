"""The advisor's closed-form errors against the mechanisms' covariances, and its picks against the slow path.

"Slow path" = what the advisor computed before it had closed forms: every candidate built, its
per-answer covariances A^-1 Sigma(e_t) A^-T mixed at f = 1/k (``unit_covariances``), and the
candidates sorted by the widest half-width.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from ldp import make_mechanism
from ldp.advisor import TIE_TOLERANCE, Z_95, _ranking, candidates, expected_half_width, recommend
from ldp.mechanisms import MECHANISMS
from ldp.mechanisms.local_hashing import optimal_range_size
from ldp.mechanisms.subset import optimal_subset_size
from ldp.registry import TWO_OPTIONS

SMALL = [(k, epsilon) for k in (2, 3, 5, 8) for epsilon in (0.05, 1.0, 4.0)]


def slow_variances(mechanism):
    """n Var(f_hat_v) at f = 1/k from the mixture of the per-answer covariances (k^4 work)."""
    f = np.full(mechanism.k, 1.0 / mechanism.k)
    return np.diag(np.tensordot(f, mechanism.unit_covariances, axes=1))


def slow_half_width(mechanism, n):
    return Z_95 * float(np.max(np.sqrt(slow_variances(mechanism) / n)))


@pytest.mark.parametrize(("k", "epsilon"), SMALL)
def test_the_advisors_half_widths_are_the_built_mechanisms(k, epsilon):
    ranking = recommend(k, epsilon, 1000).ranking
    assert len(ranking) == len(candidates(k, epsilon)) == 7 + k
    for candidate in ranking:
        mechanism = make_mechanism(candidate.mechanism, k=k, epsilon=epsilon, **candidate.params)
        assert_allclose(candidate.half_width, slow_half_width(mechanism, 1000), rtol=1e-9)
        assert_allclose(expected_half_width(mechanism, 1000), candidate.half_width, rtol=1e-12)


@pytest.mark.parametrize(("k", "epsilon"), SMALL)
def test_every_closed_form_variance_is_the_covariances_diagonal(k, epsilon):
    # At f = 1/k and at an uneven f, for every candidate; report_variances is what the advisor and
    # the cost preview read, covariance what the results pages read.
    f = np.random.default_rng(k).dirichlet(np.ones(k))
    for mechanism in candidates(k, epsilon):
        assert_allclose(mechanism.report_variances(), slow_variances(mechanism), rtol=1e-9)
        assert_allclose(mechanism.report_variances(f), np.diag(mechanism.covariance(f, 1)), rtol=1e-9)


@pytest.mark.parametrize("k", [2, 3, 5, 8, 12])
@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 2.0, 4.0, 10.0])
def test_the_recommendation_is_the_slow_paths(k, epsilon):
    built = candidates(k, epsilon)
    slow = [slow_half_width(m, 1000) for m in built]
    slow_best = int(np.argmin(slow))  # the previous advisor: a stable sort, the first minimum
    best = recommend(k, epsilon, 1000).best
    fast_best = next(i for i, m in enumerate(built) if (m.name, m.params()) == (best.mechanism, best.params))
    if fast_best != slow_best:
        # Only a tie broken by rounding may differ (subset selection with omega = 1 *is* k-RR): the
        # advisor gives it to the earlier candidate, the slow path to whichever rounded lower.
        assert math.isclose(slow[fast_best], slow[slow_best], rel_tol=TIE_TOLERANCE)
        assert fast_best < slow_best
    assert_allclose(best.half_width, slow[slow_best], rtol=1e-9)


@pytest.mark.parametrize("k", range(2, 13))
def test_the_optimal_sizes_are_the_slow_searches(k):
    for epsilon in (0.01, 0.1, 0.3, 0.7, 1.0, 1.5, 2.5, 4.0, 7.0, 10.0):
        variances = [
            slow_variances(make_mechanism("subset", k=k, epsilon=epsilon, subset_size=w))[0] for w in range(1, k)
        ]
        assert optimal_subset_size(k, epsilon) == 1 + int(np.argmin(variances))
        centre = math.exp(epsilon) + 1
        ranges = sorted({max(2, math.floor(centre)), max(2, math.ceil(centre))})
        olh = [slow_variances(make_mechanism("olh", k=k, epsilon=epsilon, range_size=g))[0] for g in ranges]
        assert optimal_range_size(k, epsilon) == ranges[int(np.argmin(olh))]


def test_the_ranking_is_cached_once_for_every_n():
    before = _ranking.cache_info()
    small, large = recommend(37, 0.7, 250), recommend(37, 0.7, 1000)
    after = _ranking.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 1)
    assert [(c.mechanism, c.params) for c in small.ranking] == [(c.mechanism, c.params) for c in large.ranking]
    # Half-widths scale as 1/sqrt(n): four times the respondents, half the error.
    assert_allclose([c.half_width for c in small.ranking], [2 * c.half_width for c in large.ranking], rtol=1e-12)
    large.best.params["d"] = -1  # each call gets its own parameter dictionaries
    assert recommend(37, 0.7, 1000).best.params != large.best.params


@pytest.mark.parametrize("n", [0, -5])
def test_recommend_rejects_a_survey_without_respondents(n):
    with pytest.raises(ValueError, match="n must be a positive number of respondents"):
        recommend(5, 1.0, n)


@pytest.mark.parametrize("name", sorted(set(MECHANISMS) - set(TWO_OPTIONS)))
def test_every_mechanism_sets_up_at_256_options(name):
    # No enumeration of subsets and no K x k x k arrays: this ran for minutes before (bench/setup.py
    # measures the time; docs/benchmarks.md). The closed forms must stay finite and positive there.
    params = {"d": 256} if name == "dbitflip" else {}
    mechanism = make_mechanism(name, k=256, epsilon=0.5, **params)
    assert mechanism.client_spec()["k"] == 256
    variances = mechanism.report_variances()
    assert variances.shape == (256,)
    assert np.all(np.isfinite(variances)) and np.all(variances > 0)
