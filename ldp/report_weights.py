"""The weight of a bit-vector report (its number of 1 bits) and the weight's exact honest law.

For the unary encodings, dBitFlip and CMS the weight of an honest report has the same law
whatever the respondent's answer, so a tally can keep the histogram of its reports' weights (and,
for the unary encodings, the bits-by-weight table) and :mod:`ldp.integrity` can test it for fake
reports (Cao, Jia, Gong 2021) and recover the estimate from the weights the fakes did not crowd.

References
----------
1. X. Cao, J. Jia, N. Z. Gong. "Data poisoning attacks to local differential privacy protocols."
   USENIX Security 2021.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import stats

from ldp.mechanisms.base import Mechanism
from ldp.mechanisms.bitflip import SampledUnaryEncoding
from ldp.mechanisms.cms import CountMeanSketch

__all__ = [
    "empty_profile",
    "has_weights",
    "max_weight",
    "report_weights",
    "weight_bit_law",
    "weight_distribution",
    "weight_profile",
]


def has_weights(mechanism: Mechanism) -> bool:
    """Whether the mechanism's reports are bit vectors whose honest weight law is answer-free."""
    return isinstance(mechanism, (SampledUnaryEncoding, CountMeanSketch))


def report_weights(mechanism: Mechanism, packed: np.ndarray) -> np.ndarray | None:
    """Number of 1 bits of each packed report (sampled buckets' bits; CMS's +1 signs), or None.

    >>> from ldp.mechanisms import make_mechanism
    >>> m = make_mechanism("oue", k=3, epsilon=1.0)
    >>> report_weights(m, np.array([[0b111, 0b101]], dtype=np.uint8)).tolist()
    [2]
    """
    if isinstance(mechanism, SampledUnaryEncoding):
        width = (mechanism.k + 7) // 8
        ones = np.unpackbits(packed[:, width:], axis=1, count=mechanism.k, bitorder="little")
        return ones.sum(axis=1, dtype=np.int64)
    if isinstance(mechanism, CountMeanSketch):
        signs = np.unpackbits(packed[:, 2:], axis=1, count=mechanism.width, bitorder="little")
        return signs.sum(axis=1, dtype=np.int64)
    return None


def weight_profile(mechanism: Mechanism, packed: np.ndarray) -> np.ndarray | None:
    """Reports by weight, shape (max weight + 1, columns), or None for mechanisms without weights.

    Column 0 counts the reports with w one-bits (the histogram of :func:`report_weights`). Unary
    encodings and dBitFlip add one column per bucket v: the reports of weight w whose bit v is 1
    (the bits-by-weight table that :func:`~ldp.integrity.clean_estimate` reads); CMS has column 0 only.

    >>> from ldp.mechanisms import make_mechanism
    >>> m = make_mechanism("oue", k=2, epsilon=1.0)
    >>> weight_profile(m, np.array([[0b11, 0b01], [0b11, 0b11]], dtype=np.uint8)).tolist()
    [[0, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    weights = report_weights(mechanism, packed)
    if weights is None:
        return None
    profile = empty_profile(mechanism)
    assert profile is not None
    np.add.at(profile[:, 0], weights, 1)
    if isinstance(mechanism, SampledUnaryEncoding):
        width = (mechanism.k + 7) // 8
        ones = np.unpackbits(packed[:, width:], axis=1, count=mechanism.k, bitorder="little")
        for w in np.unique(weights):
            profile[w, 1:] = ones[weights == w].sum(axis=0, dtype=np.int64)
    return profile


def empty_profile(mechanism: Mechanism) -> np.ndarray | None:
    """An all-zero :func:`weight_profile` of the right shape, or None for mechanisms without weights."""
    if not has_weights(mechanism):
        return None
    columns = 1 + mechanism.k if isinstance(mechanism, SampledUnaryEncoding) else 1
    return np.zeros((max_weight(mechanism) + 1, columns), dtype=np.int64)


@lru_cache(maxsize=256)
def binomial_law(trials: int, p: float) -> np.ndarray:
    """P(B = 0 ... trials) for B ~ Binomial(trials, p) (scipy's), computed once per (trials, p):
    the integrity checks ask for the same few laws for every tally. Read-only."""
    law = stats.binom.pmf(np.arange(trials + 1), trials, p)
    law.flags.writeable = False
    return law


def max_weight(mechanism: Mechanism) -> int:
    """Largest possible weight: d sampled buckets, or the sketch's width m."""
    if isinstance(mechanism, CountMeanSketch):
        return mechanism.width
    if isinstance(mechanism, SampledUnaryEncoding):
        return mechanism.d
    raise ValueError(f"{mechanism.name} reports have no weight")


def weight_distribution(mechanism: Mechanism) -> np.ndarray | None:
    """Exact law of an honest report's weight, the same for every true answer; None if no weights.

    Unary encodings (d of k buckets sampled uniformly, bit 1 with p1 for the answer's bucket and
    p0 for the others): with s = d / k the chance that the answer's bucket is sampled,

        P(W = w) = s (Bernoulli(p1) * Binomial(d - 1, p0))(w) + (1 - s) Binomial(d, p0)(w)

    (* a convolution). CMS: one +1 coordinate kept with probability kappa, m - 1 coordinates of -1
    each flipped to +1 with probability 1 - kappa: Bernoulli(kappa) * Binomial(m - 1, 1 - kappa).

    >>> import math
    >>> from ldp.mechanisms import make_mechanism
    >>> weight_distribution(make_mechanism("oue", k=2, epsilon=math.log(3))).tolist()
    [0.375, 0.5, 0.125]
    """
    if isinstance(mechanism, SampledUnaryEncoding):
        d, p1, p0 = mechanism.d, mechanism.true_bit_probability, mechanism.other_bit_probability
        sampled = np.convolve([1 - p1, p1], binomial_law(d - 1, p0))
        return d / mechanism.k * sampled + (1 - d / mechanism.k) * binomial_law(d, p0)
    if isinstance(mechanism, CountMeanSketch):
        m, kappa = mechanism.width, mechanism.keep_probability
        return np.convolve([1 - kappa, kappa], binomial_law(m - 1, 1 - kappa))
    return None


def weight_bit_law(mechanism: SampledUnaryEncoding) -> tuple[np.ndarray, np.ndarray]:
    """(alpha_w, gamma_w): P(W = w, bit v = 1 | answer v) and P(W = w, bit v = 1 | answer t != v).

    With d of k buckets sampled uniformly, B(n, p) the binomial law and * a convolution:

        alpha_w = (d / k) p1 B(d - 1, p0)(w - 1),
        gamma_w = p0 [ d (d - 1) / (k (k - 1)) (Bernoulli(p1) * B(d - 2, p0))(w - 1)
                       + d (k - d) / (k (k - 1)) B(d - 1, p0)(w - 1) ]

    (v sampled with its bit 1; the answer's bucket sampled too, or not). Summed over w they are
    E[bit_v] = (d / k) p1 and (d / k) p0.
    """
    k, d = mechanism.k, mechanism.d
    p1, p0 = mechanism.true_bit_probability, mechanism.other_bit_probability
    alpha, gamma = np.zeros(d + 1), np.zeros(d + 1)
    alpha[1:] = d / k * p1 * binomial_law(d - 1, p0)
    if d >= 2:
        both = np.convolve([1 - p1, p1], binomial_law(d - 2, p0))
        gamma[1:] += d * (d - 1) / (k * (k - 1)) * both
    gamma[1:] += d * (k - d) / (k * (k - 1)) * binomial_law(d - 1, p0)
    return alpha, p0 * gamma
