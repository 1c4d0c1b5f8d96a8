"""Frequency estimates and their uncertainty.

Every mechanism in this package is *linear*: the mean of a per-report statistic z satisfies
E[z_bar] = A f for a known k x k matrix A and the true answer distribution f. The unbiased
estimate is f_hat = A^-1 z_bar, with covariance A^-1 Sigma(f) A^-T / n, where Sigma(f) is the
per-report covariance of z for a population whose answers have distribution f (the survey's
respondents are fixed; the randomness is the mechanism's alone).

:class:`FrequencyEstimate` holds one such estimate. Its error bands are made in
:mod:`ldp.intervals` (whose :class:`~ldp.intervals.Interval` is re-exported here); making it
consistent (non-negative, summing to 1) in :mod:`ldp.simplex`, and choosing how in
:mod:`ldp.consistency`.

References
----------
1. T. Wang, J. Blocki, N. Li, S. Jha. "Locally differentially private protocols for frequency
   estimation." USENIX Security 2017. (Variance of k-RR and of the unary encodings.)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from scipy import stats

from ldp.consistency import CONSISTENCY_ADJUSTMENTS, CONSISTENCY_METHODS, ConsistencyMethod
from ldp.intervals import Interval, containing

__all__ = ["FrequencyEstimate", "Interval"]


@dataclass(frozen=True, eq=False)
class FrequencyEstimate:
    """Estimated answer proportions for one question, with their uncertainty.

    Attributes
    ----------
    proportions : ndarray, shape (k,)
        Estimated share of respondents choosing each option.
    covariance : ndarray, shape (k, k)
        Analytic covariance of the *unbiased* estimate, evaluated at a consistent plug-in
        distribution (see the mechanism's ``estimate``).
    n : int
        Number of reports behind the estimate.
    method : str
        ``"unbiased"``, or the consistency method that produced ``proportions``.

    Examples
    --------
    >>> est = FrequencyEstimate(np.array([0.3, 0.7]), np.diag([0.01, 0.01]), n=100)
    >>> est.standard_errors.tolist()
    [0.1, 0.1]
    >>> est.counts.tolist()
    [30.0, 70.0]
    """

    proportions: np.ndarray
    covariance: np.ndarray
    n: int
    method: str = "unbiased"
    unbiased: np.ndarray | None = field(default=None, repr=False)
    bands: Interval | None = field(default=None, repr=False)
    """95 % bands computed for this estimate (score intervals, for consistent estimates)."""

    @property
    def standard_errors(self) -> np.ndarray:
        """Square roots of the covariance's diagonal, one per option."""
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))

    @property
    def counts(self) -> np.ndarray:
        """Estimated number of respondents per option: n * proportions."""
        return self.n * self.proportions

    def confidence_interval(self, level: float = 0.95) -> Interval:
        """Interval per option: the stored 95 % bands if any, else proportions +/- z * standard error.

        Either way the band is widened, where needed, to reach the point estimate it is shown with
        (:func:`~ldp.intervals.containing`): the bands are made from the unbiased estimate, and a
        shrunk or projected point can fall just outside them (up to 1.9 % of points at k = 20
        under the earlier rule). Widening only adds shares to a band, so coverage cannot fall
        (tests/ldp/test_band_coverage.py measures it).

        Mechanisms attach score bands to consistent estimates (``Mechanism.consistent_estimate``);
        without them a consistent estimate's interval is the unbiased one moved with its point
        estimate and intersected with [0, 1], which over-covers near 0.
        """
        if not 0 < level < 1:
            raise ValueError(f"level must lie in (0, 1), got {level!r}")
        if self.bands is not None and level == 0.95:
            return containing(self.bands, self.proportions)
        z = stats.norm.ppf(0.5 + level / 2)
        half_width = z * self.standard_errors
        low, high = self.proportions - half_width, self.proportions + half_width
        if self.method != "unbiased":
            low, high = np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
        return containing(Interval(low, high), self.proportions)

    def consistent(self, method: ConsistencyMethod = "norm-sub", bands: Interval | None = None) -> FrequencyEstimate:
        """The estimate made non-negative and summing to 1.

        The default is ``"norm-sub"`` (:func:`~ldp.simplex.project_onto_simplex`): the true distribution lies
        in the simplex and projection onto a convex set never moves a point farther from any
        point of that set, so Norm-Sub can only reduce the estimate's Euclidean error. Clipping
        and renormalizing carries no such guarantee.
        """
        if method not in CONSISTENCY_METHODS:
            raise ValueError(f"method must be one of {CONSISTENCY_METHODS}, got {method!r}")
        base = self.proportions if self.unbiased is None else self.unbiased
        return replace(
            self, proportions=CONSISTENCY_ADJUSTMENTS[method](base), method=method, unbiased=base, bands=bands
        )
