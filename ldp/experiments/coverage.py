"""Measured coverage of Murmur's 95 % bands, for every mechanism.

For each mechanism (k = 5, epsilon = 1), answer distribution and n, R seeded repetitions draw a
tally with the mechanism's exact sampler and check whether each option's true share lies in
(a) the unbiased estimate's interval, estimate +/- 1.96 SE at the plug-in, and (b) the score
band of the consistent (Norm-Sub) estimate. Reported: the lowest and highest coverage over the
options. A coverage rate over R = 2000 repetitions has a standard error of 0.49 %.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ldp.experiments import write_rows
from ldp.mechanisms import Tally, make_mechanism

SETTINGS = {
    "k-RR": ("krr", {}),
    "subset selection": ("subset", {}),
    "OUE": ("oue", {}),
    "SUE": ("sue", {}),
    "OLH": ("olh", {}),
    "Hadamard response": ("hadamard", {}),
    "CMS": ("cms", {}),
    "HCMS": ("hcms", {}),
    "4BitFlip": ("dbitflip", {"d": 4}),
}
DISTRIBUTIONS = {
    "uniform": (0.2, 0.2, 0.2, 0.2, 0.2),
    "skewed": (0.5, 0.25, 0.15, 0.075, 0.025),
    "concentrated": (0.9, 0.04, 0.03, 0.02, 0.01),
}
SIZES = (1000, 10000)


@dataclass(frozen=True)
class Row:
    mechanism: str
    distribution: str
    n: int
    unbiased_min: float
    unbiased_max: float
    consistent_min: float
    consistent_max: float


def measure(label: str, distribution: str, n: int, repetitions: int, rng: np.random.Generator) -> Row:
    name, params = SETTINGS[label]
    mechanism = make_mechanism(name, k=5, epsilon=1.0, **params)
    truth = np.round(np.array(DISTRIBUTIONS[distribution]) * n).astype(int)
    shares = truth / truth.sum()
    unbiased = np.zeros(5)
    consistent = np.zeros(5)
    for counts in mechanism.sample_tallies(truth, repetitions, rng=rng):
        tally = Tally(int(truth.sum()), counts)
        low, high = mechanism.estimate(tally).confidence_interval()
        unbiased += (low <= shares) & (shares <= high)
        low, high = mechanism.consistent_estimate(tally).confidence_interval()
        consistent += (low <= shares) & (shares <= high)
    u, c = unbiased / repetitions, consistent / repetitions
    return Row(label, distribution, n, float(u.min()), float(u.max()), float(c.min()), float(c.max()))


def run(out: Path, repetitions: int = 2000, seed: int = 95) -> list[Row]:
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    rows = [measure(m, d, n, repetitions, rng) for m in SETTINGS for d in DISTRIBUTIONS for n in SIZES]
    write_rows(out / "coverage.csv", rows)
    return rows
