"""CMS and dBitFlip against the formulas of seed 004 and Ding et al. (2017)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from ldp import CountMeanSketch, DBitFlip


def test_cms_scale_is_the_papers_c_epsilon():
    mechanism = CountMeanSketch(k=5, epsilon=2.0)
    e = math.exp(1.0)
    assert math.isclose(mechanism.scale, (e + 1) / (e - 1), rel_tol=1e-14)


def test_cms_paper_estimator_is_the_sketch_matrix_formula():
    # Build the paper's K x m sketch M row by row (Fig. 6) and apply Fig. 7 directly.
    mechanism = CountMeanSketch(k=5, epsilon=2.0, hash_count=8, width=16)
    packed = mechanism.randomize(np.repeat(np.arange(5), 60), rng=2)
    j = packed[:, 0].astype(int) << 8 | packed[:, 1]
    signs = 2.0 * np.unpackbits(packed[:, 2:], axis=1, count=16, bitorder="little") - 1
    sketch = np.zeros((8, 16))
    x = 8 * (mechanism.scale / 2 * signs + 0.5)
    np.add.at(sketch, j, x)
    n, table = len(packed), mechanism.hash_table
    f_tilde = 16 / 15 * (sketch[np.arange(8)[:, None], table].mean(axis=0) - n / 16)
    assert_allclose(mechanism.sketch_estimate(mechanism.tally(packed)), f_tilde / n, rtol=1e-10)


def test_cms_exact_estimator_equals_the_papers_when_hashes_never_collide():
    # With no collisions A = I, and the paper's formula differs from it only by replacing A
    # with its expectation over random hash families.
    mechanism = CountMeanSketch(k=3, epsilon=1.0, hash_count=4, width=4096, hash_seed=3)
    assert np.array_equal(mechanism.response_matrix, np.eye(3))


def test_dbitflip_estimator_is_ding_et_al_theorem():
    mechanism = DBitFlip(k=5, epsilon=1.0, d=3)
    packed = mechanism.randomize(np.repeat(np.arange(5), 100), rng=6)
    sampled = np.unpackbits(packed[:, :1], axis=1, count=5, bitorder="little")
    bits = np.unpackbits(packed[:, 1:], axis=1, count=5, bitorder="little")
    c = math.exp(0.5)
    n, k, d = len(packed), 5, 3
    h_hat = k / (n * d) * np.sum(sampled * (bits * (c + 1) - 1) / (c - 1), axis=0)
    assert_allclose(mechanism.estimate(mechanism.tally(packed)).proportions, h_hat, rtol=1e-10)


def test_dbitflip_samples_exactly_d_distinct_buckets():
    mechanism = DBitFlip(k=7, epsilon=1.0, d=3)
    packed = mechanism.randomize(np.zeros(2000, dtype=int), rng=8)
    sampled = np.unpackbits(packed[:, :1], axis=1, count=7, bitorder="little")
    assert np.all(sampled.sum(axis=1) == 3)
    # Each bucket is sampled with probability d/k = 3/7: binomial(2000, 3/7), sd 22.1.
    assert np.all(np.abs(sampled.sum(axis=0) - 2000 * 3 / 7) < 4 * math.sqrt(2000 * 3 / 7 * 4 / 7))


@pytest.mark.parametrize(("k", "hash_count", "width"), [(6, 64, 16), (9, 512, 128), (40, 32, 8)])
def test_cms_covariance_is_its_definition_hash_function_by_hash_function(k, hash_count, width):
    # The family's same-cell pairs against the definitions, one hash function at a time:
    # A[d, e] = mean_j [h_j(d) = h_j(e)] and S(f)[d, e] = mean_j sum_t f_t [h_j(d) = h_j(e) = h_j(t)].
    mechanism = CountMeanSketch(k=k, epsilon=1.5, hash_count=hash_count, width=width)
    table = mechanism.hash_table
    same = (table[:, :, None] == table[:, None, :]).astype(float)
    assert np.array_equal(mechanism.response_matrix, same.mean(axis=0))
    f = np.random.default_rng(k).dirichlet(np.ones(k))
    shared = np.einsum("jdt,t,jet->de", same, f, same) / hash_count
    a = mechanism.response_matrix
    expected = (mechanism.scale**2 - 1) / 4 * a + shared - (a * f) @ a.T
    assert_allclose(mechanism.report_covariance(f), expected, rtol=1e-12, atol=1e-15)
    pairs, owner = mechanism._distinct_cells
    assert np.array_equal(
        pairs, np.unique(np.column_stack([np.repeat(np.arange(hash_count), k), table.ravel()]), axis=0)
    )
    assert np.array_equal(owner, (table[pairs[:, 0]] == pairs[:, 1:]).astype(np.int64))  # which options each serves
