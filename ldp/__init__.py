"""Murmur's local differential privacy library: mechanisms, estimators, privacy accounting.

Framework-free: numpy and scipy only. The survey app (``surveys``) builds on it; nothing
here knows about the web.

>>> import numpy as np
>>> mechanism = make_mechanism("krr", k=3, epsilon=2.0)
>>> reports = mechanism.randomize(np.zeros(1000, dtype=int), rng=1)
>>> estimate = mechanism.estimate(mechanism.tally(reports))
>>> bool(abs(estimate.proportions[0] - 1) < 4 * estimate.standard_errors[0])
True
"""

from __future__ import annotations

from ldp.estimates import FrequencyEstimate
from ldp.freetext import TextSketch
from ldp.intervals import Interval
from ldp.mechanisms import (
    MECHANISMS,
    CountMeanSketch,
    DBitFlip,
    InvalidReport,
    KRandomizedResponse,
    Mechanism,
    Tally,
    make_mechanism,
)
from ldp.mechanisms.rappor import Rappor
from ldp.mechanisms.rappor import decode as decode_rappor
from ldp.numeric import (
    NUMERIC_MECHANISMS,
    DuchiMean,
    GaussianMean,
    HybridMean,
    LaplaceMean,
    MeanEstimate,
    NumericMechanism,
    OneBitMean,
    PiecewiseMean,
    make_numeric_mechanism,
)
from ldp.privacy import gdp_delta, gdp_mu, posterior_bound, worst_case_log_ratio
from ldp.simplex import clip_and_renormalize, project_onto_simplex
from ldp.text import candidate_list, normalize_text

__all__ = [
    "MECHANISMS",
    "NUMERIC_MECHANISMS",
    "CountMeanSketch",
    "DBitFlip",
    "DuchiMean",
    "FrequencyEstimate",
    "GaussianMean",
    "HybridMean",
    "Interval",
    "InvalidReport",
    "KRandomizedResponse",
    "LaplaceMean",
    "MeanEstimate",
    "Mechanism",
    "NumericMechanism",
    "OneBitMean",
    "PiecewiseMean",
    "Rappor",
    "Tally",
    "TextSketch",
    "candidate_list",
    "clip_and_renormalize",
    "decode_rappor",
    "gdp_delta",
    "gdp_mu",
    "make_mechanism",
    "make_numeric_mechanism",
    "normalize_text",
    "posterior_bound",
    "project_onto_simplex",
    "worst_case_log_ratio",
]
