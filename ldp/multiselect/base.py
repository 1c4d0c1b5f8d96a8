"""What every multi-select ("choose all that apply") mechanism shares: answers, estimates, bands.

A respondent's true answer is a *set* of options, written as its indicator vector x in {0, 1}^k,
with at most ``max_choices`` (l) ones; the empty set ("none of these") is allowed. The target of
estimation is each option's share pi_j = (1/n) sum_i x_ij, the fraction of respondents who chose
it (the shares need not sum to 1: their sum is the mean number of options chosen).

A mechanism here provides ``client_spec``, ``randomize(sets, rng=...)``, ``parse_report``,
``unpack_report``, ``tally``, ``estimate(tally)`` (a :class:`SharesEstimate`),
``sample_tallies`` (fast exact simulation), ``worst_case_log_ratio`` (closed form) and
``report_probabilities`` (the table P[report | set] for exact enumeration).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ldp.families import Family
from ldp.intervals import Interval, affine_unified_interval, affine_variance_terms, simultaneous_bands
from ldp.mechanisms.base import Tally

__all__ = ["SharesEstimate", "StoredReports", "all_sets", "check_max_choices", "check_sets"]

#: Options of a multi-select question (each option is one bit of the report or one item of the
#: padded domain, which must stay within k-RR's 256 values).
MAX_SET_OPTIONS = 64


def check_max_choices(k: int, max_choices: int | None) -> tuple[int, int]:
    """(k, l) validated: 2 <= k <= MAX_SET_OPTIONS and 1 <= l <= k (``None`` means l = k)."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 2 <= k <= MAX_SET_OPTIONS:
        raise ValueError(f"k (number of options) must be an integer in [2, {MAX_SET_OPTIONS}], got {k!r}")
    ell = k if max_choices is None else max_choices
    if isinstance(ell, bool) or not isinstance(ell, (int, np.integer)) or not 1 <= ell <= k:
        raise ValueError(f"max_choices must be an integer in [1, k={k}], got {max_choices!r}")
    return int(k), int(ell)


def check_sets(sets: ArrayLike, k: int, max_choices: int) -> np.ndarray:
    """True answers as an (n, k) boolean array of indicator rows, each with at most l ones."""
    array = np.asarray(sets)
    if array.ndim != 2 or array.shape[1] != k or not (array.dtype == bool or np.issubdtype(array.dtype, np.integer)):
        raise ValueError(f"sets must be an (n, {k}) array of 0/1 indicators, got dtype {array.dtype}, {array.shape}")
    if array.size and (array.min() < 0 or array.max() > 1):
        raise ValueError("sets must hold only 0 and 1")
    array = array.astype(bool)
    sizes = array.sum(axis=1)
    if sizes.size and sizes.max() > max_choices:
        raise ValueError(f"a set has {sizes.max()} options, more than max_choices={max_choices}")
    return array


def all_sets(k: int, max_choices: int) -> np.ndarray:
    """Every admissible set (empty included) as indicator rows, by size then lexicographically."""
    rows = []
    for size in range(max_choices + 1):
        for chosen in itertools.combinations(range(k), size):
            row = np.zeros(k, dtype=bool)
            row[list(chosen)] = True
            rows.append(row)
    return np.array(rows)


@dataclass(frozen=True, eq=False)
class SharesEstimate:
    """Estimated share of respondents choosing each option of a multi-select question.

    Attributes
    ----------
    shares : ndarray, shape (k,)
        Unbiased estimates of pi_j (may fall outside [0, 1]).
    covariance : ndarray, shape (k, k)
        Covariance of ``shares`` (exact per-option variances at a plug-in population; see each
        mechanism for the off-diagonal).
    n : int
        Number of reports.
    mean_count, mean_count_variance : float
        Unbiased estimate of the mean number of options chosen, sum_j pi_j, and its variance.
    bands, simultaneous : Interval
        95 % bands per option (Feldman-Cousins unified intervals on [0, 1]), and bands that hold
        for all k options at once with probability >= 95 % (Šidák's level; see
        :func:`ldp.intervals.simultaneous_bands`).

    >>> est = SharesEstimate(np.array([0.5, -0.1]), np.diag([0.01, 0.01]), 100, 0.4, 0.02,
    ...                      Interval(np.zeros(2), np.ones(2)), Interval(np.zeros(2), np.ones(2)))
    >>> est.consistent_shares.tolist(), est.standard_errors.tolist()
    ([0.5, 0.0], [0.1, 0.1])
    """

    shares: np.ndarray
    covariance: np.ndarray
    n: int
    mean_count: float
    mean_count_variance: float
    bands: Interval
    simultaneous: Interval

    @property
    def standard_errors(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))

    @property
    def consistent_shares(self) -> np.ndarray:
        """The shares clipped to [0, 1] (each share is a proportion on its own)."""
        return np.clip(self.shares, 0.0, 1.0)

    def confidence_interval(self, simultaneous: bool = False) -> Interval:
        """The 95 % bands: per option (default) or for all options at once."""
        return self.simultaneous if simultaneous else self.bands

    def mean_count_interval(self, level: float = 0.95) -> tuple[float, float]:
        """mean_count +/- z sd, cut to [0, k]."""
        z = float(stats.norm.ppf(0.5 + level / 2))
        half = z * math.sqrt(max(self.mean_count_variance, 0.0))
        k = self.shares.size
        return max(self.mean_count - half, 0.0), min(self.mean_count + half, float(k))


def share_bands(unit_variances: np.ndarray, estimate: np.ndarray, n: int, count: int) -> tuple[Interval, Interval]:
    """Per-option 95 % unified bands, and bands for ``count`` options at once (Šidák's level).

    The simultaneous bands are :func:`~ldp.intervals.simultaneous_bands` (the hull of the score
    and unified intervals). The variance terms (a, b) of
    :func:`~ldp.intervals.affine_variance_terms` are rounded to 12 decimals, so that options whose
    terms agree up to rounding (all of them, for the symmetric mechanisms here) share one
    acceptance computation.
    """
    a, b = (np.round(x, 12) for x in affine_variance_terms(unit_variances, estimate))
    per_option = affine_unified_interval(a, b, estimate, n)
    joint = simultaneous_bands(unit_variances, estimate, n, count=count)
    return per_option, joint


class StoredReports:
    """What a stored question needs beside ``tally``: its reports as an array, an empty tally.

    Packed reports are ``report_width`` bytes each (as every ``ldp`` mechanism stores them), so
    a survey keeps, sums and reads a multi-select question's tally exactly like any other.
    With each mechanism's own members, it satisfies :class:`ldp.registry.LDPMechanism` (family
    "multi").
    """

    family: ClassVar[Family] = "multi"
    epsilon: float

    @property
    def report_width(self) -> int:
        """Number of bytes of one packed report."""
        raise NotImplementedError

    def tally(self, packed: np.ndarray) -> Tally:
        raise NotImplementedError

    def unpack_many(self, buffer: bytes) -> np.ndarray:
        """Packed reports concatenated into ``buffer``, as an (n, report_width) uint8 array."""
        if len(buffer) % self.report_width:
            raise ValueError(f"buffer length {len(buffer)} is not a multiple of {self.report_width}")
        return np.frombuffer(buffer, dtype=np.uint8).reshape(-1, self.report_width)

    def empty_tally(self) -> Tally:
        return self.tally(np.zeros((0, self.report_width), dtype=np.uint8))

    def privacy_guarantee(self) -> tuple[float, float]:
        """(epsilon, 0): one report satisfies pure epsilon-LDP over sets (``worst_case_log_ratio``)."""
        return self.epsilon, 0.0


def spec_header(name: str, k: int, max_choices: int, epsilon: float) -> dict[str, Any]:
    return {"mechanism": name, "k": k, "max_choices": max_choices, "epsilon": epsilon}
