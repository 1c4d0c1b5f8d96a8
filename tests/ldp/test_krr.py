"""k-RR as seed 000 states it, and as seed 001's gamma-diagonal random substitution."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from ldp import KRandomizedResponse
from ldp.mechanisms.krr import gamma_diagonal_inverse, gamma_diagonal_matrix, random_substitution_reconstruct


@pytest.mark.parametrize(("gamma", "size"), [(2.0, 2), (3.0, 5), (11.0, 50), (21.0, 100), (1.5, 10)])
def test_closed_form_inverse_is_the_inverse(gamma, size):
    matrix = gamma_diagonal_matrix(gamma, size)
    assert_allclose(gamma_diagonal_inverse(gamma, size), np.linalg.inv(matrix), rtol=1e-10, atol=1e-12)
    assert_allclose(matrix.sum(axis=0), 1.0)


def test_gamma_diagonal_matrix_is_krr_with_gamma_e_to_the_epsilon():
    mechanism = KRandomizedResponse(k=7, epsilon=1.3)
    assert_allclose(gamma_diagonal_matrix(math.exp(1.3), 7), mechanism.response_matrix, rtol=1e-12)


def test_seed_000_formula_and_seed_001_reconstruction_agree():
    mechanism = KRandomizedResponse(k=5, epsilon=1.0)
    reports = mechanism.randomize(np.repeat(np.arange(5), [400, 300, 200, 80, 20]), rng=4)
    tally = mechanism.tally(reports)
    p, q, n = mechanism.keep_probability, mechanism.other_probability, tally.n
    seed_000 = (tally.counts - n * q) / (p - q)  # n_v = (N_v - N q) / (p - q)
    seed_001 = random_substitution_reconstruct(tally.counts, math.exp(1.0), clip=False)
    assert_allclose(seed_000, seed_001, rtol=1e-10)
    assert_allclose(mechanism.estimate(tally).counts, seed_000, rtol=1e-10)


def test_seed_001_reconstruction_clips_and_floors():
    counts = random_substitution_reconstruct([10, 0, 0], 2.0)
    unclipped = random_substitution_reconstruct([10, 0, 0], 2.0, clip=False)
    assert unclipped.min() < 0
    assert counts.tolist() == np.floor(np.clip(unclipped, 0, None)).tolist()


def test_variance_matches_wang_et_al_closed_form():
    mechanism = KRandomizedResponse(k=5, epsilon=1.0)
    f = np.array([0.5, 0.2, 0.15, 0.1, 0.05])
    p, q, n = mechanism.keep_probability, mechanism.other_probability, 1000
    closed_form = q * (1 - q) / (n * (p - q) ** 2) + f * (1 - p - q) / (n * (p - q))
    assert_allclose(np.diag(mechanism.covariance(f, n)), closed_form, rtol=1e-12)


@pytest.mark.parametrize(("gamma", "size"), [(1.0, 5), (0.5, 5), (math.inf, 5), (2.0, 1)])
def test_gamma_diagonal_rejects_bad_parameters(gamma, size):
    with pytest.raises(ValueError):
        gamma_diagonal_matrix(gamma, size)
