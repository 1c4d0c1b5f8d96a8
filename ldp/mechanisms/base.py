"""The interface every frequency-estimation mechanism implements.

A mechanism answers a question with k options (true answers are integers 0..k-1) at a
privacy budget epsilon. It provides, in this order of use:

1. ``client_spec()``: everything a browser needs to randomize, as JSON-serializable data,
   so that the browser never does privacy arithmetic of its own;
2. ``randomize(values, rng=...)``: the same randomization, vectorized, for simulation;
3. ``parse_report(obj)``: strict validation of one report as the browser sends it, returning
   its *packed* form: ``report_width`` bytes, the form in which reports are stored;
4. ``tally(packed)``: sufficient statistics of many packed reports (mergeable with ``+``);
5. ``estimate(tally)``: the unbiased frequency estimate with its analytic covariance.

Every mechanism here is one of the "shares" family of :class:`ldp.registry.LDPMechanism`.

All mechanisms here are linear (see :mod:`ldp.estimates`): a subclass supplies the
per-report statistic's mean ``observed_mean``, its expectation matrix ``response_matrix``
and its per-report covariance ``report_covariance``; estimation is shared.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from ldp.consistency import (
    EMPIRICAL_BAYES_OPTIONS,
    EVEN_TEST_LEVEL,
    choose_consistency,
    empirical_bayes_shares,
    evenness_p_value,
    share_prior,
)
from ldp.estimates import FrequencyEstimate
from ldp.families import Family
from ldp.intervals import Interval, simultaneous_bands, unified_interval
from ldp.mechanisms.reports import require_fields, require_int
from ldp.privacy import check_epsilon
from ldp.simplex import project_onto_simplex
from ldp.tally import Tally

__all__ = ["Mechanism", "OneOptionReport", "Tally"]

MAX_OPTIONS = 256
#: Largest k for which :meth:`Mechanism.covariance` mixes the per-answer covariances (see there);
#: the survey app's questions have at most 64 options.
MIXTURE_LIMIT = 64


def check_options(k: int) -> int:
    """Validate the number of options of a question."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 2 <= k <= MAX_OPTIONS:
        raise ValueError(f"k (number of options) must be an integer in [2, {MAX_OPTIONS}], got {k!r}")
    return int(k)


def check_values(values: ArrayLike, k: int) -> np.ndarray:
    """True answers as an int64 array, each in [0, k)."""
    array = np.asarray(values)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"values must be a 1-d integer array, got dtype {array.dtype} and shape {array.shape}")
    if array.size and (array.min() < 0 or array.max() >= k):
        raise ValueError(f"values must lie in [0, {k}), got range [{array.min()}, {array.max()}]")
    return array.astype(np.int64)


def check_counts(true_counts: ArrayLike, k: int) -> np.ndarray:
    """Non-negative integer counts of true answers, one per option."""
    counts = np.asarray(true_counts)
    if counts.shape != (k,) or not np.issubdtype(counts.dtype, np.integer) or counts.min() < 0:
        raise ValueError(f"true_counts must be {k} non-negative integers, got {true_counts!r}")
    return counts.astype(np.int64)


def resolved(value: int | None, name: str) -> int:
    """A knob whose default None means "chosen by ``__post_init__``", once chosen.

    >>> resolved(3, "range_size")
    3
    """
    if value is None:
        raise AttributeError(f"{name} is chosen by __post_init__, which has not run")
    return value


class Mechanism(ABC):
    """Base class of the frequency-estimation mechanisms; subclasses are frozen dataclasses.

    Satisfies :class:`ldp.registry.LDPMechanism` (family "shares").
    """

    name: ClassVar[str]
    family: ClassVar[Family] = "shares"
    k: int
    epsilon: float

    def _check_common(self) -> None:
        object.__setattr__(self, "k", check_options(self.k))
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    # -- what a subclass provides -------------------------------------------------------------
    @abstractmethod
    def params(self) -> dict[str, Any]:
        """The mechanism's knobs beyond k and epsilon, as JSON-serializable data."""

    @abstractmethod
    def client_spec(self) -> dict[str, Any]:
        """Everything a browser needs to randomize one answer (JSON-serializable)."""

    @property
    @abstractmethod
    def report_width(self) -> int:
        """Number of bytes of one packed report."""

    @abstractmethod
    def randomize(self, values: ArrayLike, *, rng: Any = None) -> np.ndarray:
        """Randomize true answers; returns packed reports, shape (n, report_width), uint8."""

    @abstractmethod
    def parse_report(self, obj: Any) -> bytes:
        """Validate one report as sent by a browser and return it packed; raise InvalidReport."""

    @abstractmethod
    def unpack_report(self, packed: bytes) -> dict[str, Any]:
        """The JSON form of one packed report (inverse of ``parse_report``)."""

    @abstractmethod
    def tally(self, packed: np.ndarray) -> Tally:
        """Sufficient statistics of packed reports, shape (n, report_width)."""

    @abstractmethod
    def observed_mean(self, tally: Tally) -> np.ndarray:
        """Mean per-report statistic z_bar, with E[z_bar] = response_matrix @ f."""

    @property
    @abstractmethod
    def response_matrix(self) -> np.ndarray:
        """The k x k matrix A with E[z_bar] = A f."""

    @abstractmethod
    def report_covariance(self, frequencies: np.ndarray) -> np.ndarray:
        """Per-report covariance Sigma(f) of z, averaged over a population with answers f."""

    @abstractmethod
    def worst_case_log_ratio(self) -> float:
        """Closed-form max over reports and value pairs of ln(P[y | v] / P[y | v'])."""

    def sample_tallies(self, true_counts: ArrayLike, repetitions: int, *, rng: Any = None) -> np.ndarray:
        """Tally counts of ``repetitions`` independent randomizations of a population.

        ``true_counts[v]`` respondents answer v. Returns shape (repetitions, tally size), with the
        distribution of ``tally(randomize(values)).counts``. This default does exactly that;
        mechanisms override it with multinomial and binomial draws that skip the reports, so that
        experiments can repeat thousands of surveys quickly.
        """
        rng = np.random.default_rng(rng)
        values = np.repeat(np.arange(self.k), check_counts(true_counts, self.k))
        return np.array([self.tally(self.randomize(values, rng=rng)).counts for _ in range(repetitions)])

    @abstractmethod
    def report_probabilities(self) -> np.ndarray:
        """P[report | answer] for every answer and every possible report, shape (k, reports), for enumeration."""

    @abstractmethod
    def guess_probability(self) -> float:
        """Chance that an observer of one report guesses the true answer right.

        The observer knows the mechanism, assumes every answer equally likely, and guesses the
        answer that makes the report most likely (ties at random): (1/k) sum_y max_v P[y | v].
        Guessing blindly succeeds with probability 1/k.
        """

    # -- shared machinery ---------------------------------------------------------------------
    def privacy_guarantee(self) -> tuple[float, float]:
        """(epsilon, 0): one report satisfies pure epsilon-LDP (``worst_case_log_ratio`` is epsilon).

        >>> from ldp.mechanisms import KRandomizedResponse
        >>> KRandomizedResponse(k=3, epsilon=1.0).privacy_guarantee()
        (1.0, 0.0)
        """
        return self.epsilon, 0.0

    def spec_header(self) -> dict[str, Any]:
        return {"mechanism": self.name, "k": self.k, "epsilon": self.epsilon}

    def empty_tally(self) -> Tally:
        return self.tally(np.zeros((0, self.report_width), dtype=np.uint8))

    def unpack_many(self, buffer: bytes) -> np.ndarray:
        """Packed reports concatenated into ``buffer``, as an (n, report_width) uint8 array."""
        if len(buffer) % self.report_width:
            raise ValueError(f"buffer length {len(buffer)} is not a multiple of {self.report_width}")
        return np.frombuffer(buffer, dtype=np.uint8).reshape(-1, self.report_width)

    @cached_property
    def _inverse_response(self) -> np.ndarray:
        return np.linalg.inv(self.response_matrix)

    def covariance(self, frequencies: ArrayLike, n: int) -> np.ndarray:
        """Covariance of the unbiased estimate from n reports with answer shares f on the simplex.

        A^-1 Sigma(f) A^-T / n. Up to k = MIXTURE_LIMIT it is computed, as it always was, as the
        mixture sum_t f_t U_t / n of the per-answer covariances (:attr:`unit_covariances`: k^3
        numbers, k^4 work, 7 ms at k = 64), so that results computed before stay the same to the
        last bit: the "auto" adjustment draws its bootstrap through an eigendecomposition of this
        matrix, and evenly spread answers give it repeated eigenvalues, whose eigenvectors (and so
        the draws) change with the last bit of the matrix. Above, directly (:meth:`direct_covariance`):
        two k x k products once Sigma(f) is built, and every mechanism builds Sigma(f) in O(k^3)
        operations or fewer (CMS from its hash family's same-cell pairs).
        """
        if self.k <= MIXTURE_LIMIT:
            return np.tensordot(np.asarray(frequencies, dtype=float), self.unit_covariances, axes=1) / n
        return self.direct_covariance(frequencies, n)

    def direct_covariance(self, frequencies: ArrayLike, n: int) -> np.ndarray:
        """A^-1 Sigma(f) A^-T / n from the mechanism's report covariance Sigma(f)."""
        f = np.asarray(frequencies, dtype=float)
        inverse = self._inverse_response
        return inverse @ self.report_covariance(f) @ inverse.T / n

    @cached_property
    def unit_covariances(self) -> np.ndarray:
        """U[t]: covariance of f_hat from one report whose answer is t, shape (k, k, k).

        k^3 numbers, k^4 operations: :meth:`covariance` uses it up to k = MIXTURE_LIMIT only.
        """
        return np.stack([self.direct_covariance(np.eye(self.k)[t], 1) for t in range(self.k)])

    def estimate(self, tally: Tally) -> FrequencyEstimate:
        """Unbiased estimate f_hat = A^-1 z_bar with its analytic covariance.

        The covariance depends on the unknown f; it is evaluated at the Norm-Sub projection of
        f_hat, a consistent plug-in (a negative "frequency" would make variances negative).
        """
        if tally.n == 0:
            raise ValueError("cannot estimate from zero reports")
        unbiased = self._inverse_response @ self.observed_mean(tally)
        plug_in = project_onto_simplex(unbiased)
        return FrequencyEstimate(unbiased, self.covariance(plug_in, tally.n), tally.n)

    def consistent_estimate(self, tally: Tally, method: str = "norm-sub") -> FrequencyEstimate:
        """The estimate made consistent, with 95 % bands (unified intervals on [0, 1]).

        ``method`` is ``"norm-sub"`` (the default), ``"clip"``, ``"eb"`` (empirical-Bayes posterior
        means, :func:`~ldp.consistency.empirical_bayes_shares`) or ``"auto"``: the one of these that
        :meth:`automatic_consistency` picks for this tally. The returned estimate's ``method`` names
        the estimator applied; the bands depend on the unbiased estimate only, whichever it is. See
        :func:`ldp.intervals.unified_interval` for how the bands are made: Feldman and Cousins'
        ordering, so that an estimate far outside [0, 1] still gets a band of positive width.
        """
        unbiased = self.estimate(tally)
        bands = unified_interval(self.unit_variances, unbiased.proportions, tally.n)
        if method == "auto":
            method = self.automatic_consistency(unbiased.proportions, tally.n)
        if method == "eb":
            shares = empirical_bayes_shares(self.unit_variances, unbiased.proportions, tally.n)
            return replace(unbiased, proportions=shares, method="eb", unbiased=unbiased.proportions, bands=bands)
        return unbiased.consistent(method, bands=bands)  # type: ignore[arg-type]  # consistent() refuses other strings

    def automatic_consistency(self, unbiased: np.ndarray, n: int) -> str:
        """The estimator "auto" applies to this unbiased estimate from n reports.

        ``"eb"`` (empirical-Bayes posterior means, :func:`~ldp.consistency.empirical_bayes_shares`)
        when k is in :data:`~ldp.consistency.EMPIRICAL_BAYES_OPTIONS` (5 to 64) and the chi-square
        test of evenly spread answers does not reject them at
        :data:`~ldp.consistency.EVEN_TEST_LEVEL` (:func:`~ldp.consistency.evenness_p_value`): then the
        shares are alike as far as the reports can tell, and shrinking them toward their fitted
        distribution halves the largest error where reports are few (docs/experiments.md).
        Otherwise Norm-Sub or clipping (:meth:`automatic_adjustment`), by
        :func:`~ldp.consistency.choose_consistency` with this
        mechanism's covariance, the estimate's simultaneous 95 % bands and the fitted distribution
        of its shares (:func:`~ldp.consistency.share_prior`). (Also scoring 1/k whenever the test
        does not reject it fixed evenly spread answers at k = 256 but cost up to 2.4 times on
        concentrated ones, which pass the test there too: docs/experiments.md.)
        """
        if self.k in EMPIRICAL_BAYES_OPTIONS and evenness_p_value(unbiased, n, *self.even_test) > EVEN_TEST_LEVEL:
            return "eb"
        return self.automatic_adjustment(unbiased, n)

    def automatic_adjustment(self, unbiased: np.ndarray, n: int) -> str:
        """Norm-Sub or clipping for this unbiased estimate: "auto"'s choice when it does not shrink."""
        region = simultaneous_bands(self.unit_variances, unbiased, n, correction="bonferroni", interval="score")
        prior = share_prior(self.unit_variances, unbiased, n)
        return choose_consistency(unbiased, lambda f: self.covariance(f, n), region, prior=prior)

    @cached_property
    def even_test(self) -> tuple[np.ndarray, int]:
        """(P, r): the pseudo-inverse and rank of the covariance of the estimate from one report
        under evenly spread answers, for :func:`~ldp.consistency.evenness_p_value`."""
        covariance = self.covariance(np.full(self.k, 1.0 / self.k), 1)
        return np.linalg.pinv(covariance, hermitian=True), int(np.linalg.matrix_rank(covariance, hermitian=True))

    def simultaneous_bands(self, tally: Tally, level: float = 0.95) -> Interval:
        """Bands that hold for all k options at once with probability >= level.

        :func:`ldp.intervals.simultaneous_bands` (Šidák's level, the hull of the score and
        unified intervals) around the unbiased estimate; per-option bands come with
        :meth:`consistent_estimate`.
        """
        if tally.n == 0:
            raise ValueError("cannot estimate from zero reports")
        unbiased = self._inverse_response @ self.observed_mean(tally)
        return simultaneous_bands(self.unit_variances, unbiased, tally.n, level)

    @cached_property
    def unit_variances(self) -> np.ndarray:
        """V[v, t]: variance of f_hat_v from one report whose answer is t.

        Every mechanism's covariance here is affine in f (a fixed population: a mixture of the
        answers' per-report covariances), so on the simplex Var(f_hat_v) = sum_t f_t V[v, t] / n,
        which lets :func:`~ldp.intervals.score_interval` solve its bands in closed form.

        This default takes the diagonals of :attr:`unit_covariances` (k^4 operations); every
        mechanism of the package overrides it with its closed form, V = W - I, where
        W[v, t] = (A^-1 E[z z^T | t] A^-T)_vv is the second moment of the estimate from one report
        (A^-1 E[z | t] = e_t removes the mean).
        """
        return np.diagonal(self.unit_covariances, axis1=1, axis2=2).T

    def report_variances(self, frequencies: ArrayLike | None = None) -> np.ndarray:
        """n Var(f_hat_v): per-option variance of the estimate from one report, answers f (default 1/k).

        The diagonal of ``covariance(f, 1)``; by default ``unit_variances @ f``. Mechanisms with a
        closed form override it (the advisor evaluates it for hundreds of candidates at f = 1/k).
        """
        return self.unit_variances @ self._shares(frequencies)

    def _shares(self, frequencies: ArrayLike | None) -> np.ndarray:
        if frequencies is None:
            return np.full(self.k, 1.0 / self.k)
        return np.asarray(frequencies, dtype=float)

    def expected_standard_errors(self, n: int, frequencies: ArrayLike | None = None) -> np.ndarray:
        """Standard error per option at n reports, for answers f (uniform by default)."""
        return np.sqrt(self.report_variances(frequencies) / n)


class OneOptionReport:
    """The report ``{"value": y}`` of one option y in [0, k), one byte packed, tallied as counts per
    option: k-RR's and every randomized-response design's (:mod:`ldp.designs`). Mixed in before
    :class:`Mechanism`, whose ``response_matrix`` A (E[one-hot report] = A f) it uses."""

    k: int

    @property
    def report_values(self) -> int:
        """How many values a report takes: k, unless the reports name buckets of options."""
        return self.k

    @property
    def report_width(self) -> int:
        return 1

    def parse_report(self, obj: Any) -> bytes:
        report = require_fields(obj, {"value"})
        return bytes([require_int(report["value"], "value", 0, self.report_values - 1)])

    def unpack_report(self, packed: bytes) -> dict[str, Any]:
        return {"value": packed[0]}

    def tally(self, packed: np.ndarray) -> Tally:
        values = packed[:, 0]
        return Tally(int(values.size), np.bincount(values, minlength=self.report_values).astype(np.int64))

    def observed_mean(self, tally: Tally) -> np.ndarray:
        return tally.counts / tally.n

    def report_covariance(self, frequencies: np.ndarray) -> np.ndarray:
        # A report from a respondent with answer t is one-hot with mean a_t = A[:, t], so its
        # covariance is diag(a_t) - a_t a_t^T; averaged over t ~ f: diag(A f) - A diag(f) A^T.
        a: np.ndarray = self.response_matrix  # type: ignore[attr-defined]  # Mechanism's, mixed in after
        return np.diag(a @ frequencies) - (a * frequencies) @ a.T
