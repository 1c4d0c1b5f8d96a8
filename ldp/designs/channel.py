"""Randomized-response designs as channel matrices with exactly representable probabilities.

Every classical randomized-response design for one question with k options (refs. 1-5) is a
*channel*: a k x k row-stochastic matrix M, M[v, y] = P(report y | true answer v). The
respondent's device draws the report from row v; the server sees only y. Then:

- privacy (ref. 6): epsilon = max_y ln(max_v M[v, y] / min_v M[v, y]), the largest ratio in any
  column, which :meth:`ChannelDesign.worst_case_log_ratio` evaluates on the exact fractions;
- report shares: lambda = M^T pi for answer shares pi, so the moment estimator is
  pi_hat = M^-T lambda_hat, lambda_hat the observed report shares (Warner 1965, ref. 1);
- its variance for a simple random sample of n respondents (multinomial reports):
  Cov(pi_hat) = M^-T (diag(lambda) - lambda lambda^T) M^-1 / n (ref. 1, eq. 6 for k = 2);
- the maximum-likelihood estimate on the simplex maximizes sum_y c_y ln (M^T pi)_y; it equals the
  moment estimate when that lies in the simplex (the model is saturated), and is found by EM
  otherwise (ref. 7), with its covariance from the observed information.

Exactness: every probability a design uses is an exact fraction (``"1/5"``; a float is read as
the decimal it prints as, 0.2 as 1/5), and its client spec sends each distribution as integer
weights (:func:`weights`), which the browser samples by rejection from 53-bit integers
(static/ldp/designs.js), so the probabilities realized are the fractions ldp checks, not merely
close to them. Parameters chosen from epsilon lie on the 2^-53 grid (:func:`grid_fraction`).

References
----------
1. S. L. Warner. "Randomized response: a survey technique for eliminating evasive answer
   bias." JASA 60(309), 63-69, 1965.
2. R. F. Boruch. "Assuring confidentiality of responses in social research: a note on
   strategies." The American Sociologist 6(4), 308-311, 1971.
3. B. G. Greenberg, A.-L. A. Abul-Ela, W. R. Simmons, D. G. Horvitz. "The unrelated question
   randomized response model: theoretical framework." JASA 64(326), 520-539, 1969.
4. J. W. Yu, G. L. Tian, M. L. Tang. "Two new models for survey sampling with sensitive
   characteristic: design and analysis." Metrika 67, 251-263, 2008.
5. G. Blair, K. Imai, Y.-Y. Zhou. "Design and analysis of the randomized response technique."
   JASA 110(511), 1304-1319, 2015.
6. Ú. Erlingsson et al., and the LDP literature's definition: a report y satisfies
   epsilon-LDP when P(y | v) <= e^epsilon P(y | v') for all v, v'.
7. A. P. Dempster, N. M. Laird, D. B. Rubin. "Maximum likelihood from incomplete data via the
   EM algorithm." JRSS B 39(1), 1-38, 1977.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ldp.intervals import Interval
from ldp.mechanisms.base import Mechanism, OneOptionReport, Tally, check_counts, check_values

__all__ = [
    "GRID",
    "ChannelDesign",
    "DesignEstimate",
    "check_design_epsilon",
    "fraction",
    "fraction_text",
    "grid_fraction",
    "shares",
    "weights",
]

#: Parameters chosen from epsilon are multiples of 1 / GRID.
GRID = 2**53
#: Largest total of a spec's integer weights: the browser's integers are exact below 2^53.
MAX_WEIGHT_TOTAL = 2**53
_Z95 = float(stats.norm.ppf(0.975))


def fraction(value: Any, name: str) -> Fraction:
    """A probability strictly inside (0, 1) as an exact fraction: from a Fraction, a string ("1/6",
    "0.2") or a float read as the shortest decimal that prints it.

    >>> fraction(0.2, "p"), fraction("1/6", "p")
    (Fraction(1, 5), Fraction(1, 6))
    """
    try:
        if isinstance(value, bool) or not isinstance(value, (float, str, Fraction, np.floating)):
            raise TypeError
        exact = Fraction(repr(float(value))) if isinstance(value, (float, np.floating)) else Fraction(value)
    except (TypeError, ValueError, ZeroDivisionError):
        raise ValueError(f"{name} must be a probability strictly between 0 and 1, got {value!r}") from None
    if not 0 < exact < 1:
        raise ValueError(f"{name} must be a probability strictly between 0 and 1, got {value!r}")
    return exact


def fraction_text(value: Fraction) -> str:
    """The stored form of an exact probability: "1/5".

    >>> fraction_text(Fraction(1, 4))
    '1/4'
    """
    return f"{value.numerator}/{value.denominator}"


def grid_fraction(p: float, direction: str) -> Fraction:
    """``p`` rounded "up" or "down" onto the 2^-53 grid: how parameters chosen from epsilon are stored.

    >>> grid_fraction(0.25, "up")
    Fraction(1, 4)
    """
    scaled = Fraction(p) * GRID
    return Fraction(math.ceil(scaled) if direction == "up" else math.floor(scaled), GRID)


def shares(values: Any, name: str, k: int) -> tuple[Fraction, ...]:
    """k probabilities summing to exactly 1.

    >>> [str(s) for s in shares([0.5, "1/4", 0.25], "pi", 3)]
    ['1/2', '1/4', '1/4']
    """
    if not isinstance(values, (list, tuple)) or len(values) != k:
        raise ValueError(f"{name} must be a list of {k} probabilities, got {values!r}")
    exact = tuple(fraction(v, f"{name}[{j}]") for j, v in enumerate(values))
    if sum(exact) != 1:
        raise ValueError(f"{name} must sum to exactly 1, got {values!r}")
    return exact


def weights(probabilities: Any, name: str) -> list[int]:
    """Integer weights proportional to exact probabilities summing to 1, in lowest terms: how a spec
    sends a distribution. Their total (the common denominator) must not exceed 2^53.

    >>> weights([Fraction(1, 5), Fraction(1, 5), Fraction(3, 5)], "forced")
    [1, 1, 3]
    """
    total = math.lcm(*(Fraction(p).denominator for p in probabilities))
    if total > MAX_WEIGHT_TOTAL:
        raise ValueError(f"{name} needs a common denominator of at most 2^53, got {total}")
    return [int(Fraction(p) * total) for p in probabilities]


def check_design_epsilon(epsilon: float, exact: float, name: str) -> None:
    """The stated epsilon must be the design's own, to float precision (it may not understate it)."""
    if not (exact <= epsilon * (1 + 1e-12) and exact >= epsilon * (1 - 1e-9)):
        raise ValueError(f"epsilon must be the {name} design's own {exact!r}, got {epsilon!r}")


@dataclass(frozen=True)
class DesignEstimate:
    """The moment estimate and the MLE of a design's answer shares, with their covariances.

    ``proportions`` is the moment estimator pi_hat = M^-T lambda_hat (unbiased, possibly outside
    [0, 1]); ``covariance`` its estimated covariance M^-T (diag(lambda_hat) - lambda_hat
    lambda_hat^T) M^-1 / n (ref. 1). ``mle`` is the maximum-likelihood estimate on the simplex and
    ``mle_covariance`` the inverse observed information there (zero rows for shares at 0).
    """

    proportions: np.ndarray
    covariance: np.ndarray
    mle: np.ndarray
    mle_covariance: np.ndarray
    n: int

    @property
    def standard_errors(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))

    @property
    def mle_standard_errors(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.mle_covariance), 0.0, None))

    def confidence_interval(self) -> Interval:
        """95 % Wald interval of the moment estimate: pi_hat +/- 1.96 SE."""
        half = _Z95 * self.standard_errors
        return Interval(self.proportions - half, self.proportions + half)

    def mle_interval(self) -> Interval:
        """95 % Wald interval of the MLE, intersected with [0, 1]."""
        half = _Z95 * self.mle_standard_errors
        return Interval(np.clip(self.mle - half, 0.0, 1.0), np.clip(self.mle + half, 0.0, 1.0))


class ChannelDesign(OneOptionReport, Mechanism):
    """A randomized-response design of the "shares" family: one report ``{"value": y}``, y in [0, k).

    A subclass supplies :meth:`exact_channel` (the k x k matrix of fractions) and its closed-form
    :meth:`worst_case_log_ratio`; everything else (randomizing, validating, tallying, estimating)
    follows from the channel.
    """

    @abstractmethod
    def exact_channel(self) -> tuple[tuple[Fraction, ...], ...]:
        """M[v][y] = P(report y | answer v) as exact fractions, rows summing to 1."""

    @cached_property
    def channel(self) -> np.ndarray:
        """M as floats, shape (k, k)."""
        return np.array([[float(x) for x in row] for row in self.exact_channel()])

    def enumerated_log_ratio(self) -> float:
        """max_y ln(max_v M[v, y] / min_v M[v, y]) by enumeration of the exact fractions (as log1p of
        the exact excess over 1, which keeps full precision at small epsilon)."""
        rows = self.exact_channel()
        return max(math.log1p(max(col) / min(col) - 1) for col in zip(*rows, strict=True))

    def randomize(self, values: ArrayLike, *, rng: Any = None) -> np.ndarray:
        """Reports drawn from the answers' rows of M by exact integer draws (one per respondent)."""
        rng = np.random.default_rng(rng)
        truth = check_values(values, self.k)
        rows = self.exact_channel()
        total = math.lcm(*(x.denominator for row in rows for x in row))
        cumulative = np.cumsum([[int(x * total) for x in row] for row in rows], axis=1)
        draws = rng.integers(0, total, size=truth.size, dtype=np.int64)  # total <= 2^53: spec weights
        reports = (draws[:, None] >= cumulative[truth]).sum(axis=1)
        return reports.astype(np.uint8).reshape(-1, 1)

    @property
    def response_matrix(self) -> np.ndarray:
        return self.channel.T.copy()

    @cached_property
    def unit_variances(self) -> np.ndarray:
        # One report of answer t is one-hot with mean A e_t, and B = A^-1 maps it to e_t, so
        # V[v, t] = sum_y B[v, y]^2 A[y, t] - [v = t]: O(k^3).
        inverse = self._inverse_response
        return (inverse**2) @ self.response_matrix - np.eye(self.k)

    def report_probabilities(self) -> np.ndarray:
        return self.channel.copy()

    def guess_probability(self) -> float:
        return float(self.channel.max(axis=0).sum() / self.k)

    def sample_tallies(self, true_counts: ArrayLike, repetitions: int, *, rng: Any = None) -> np.ndarray:
        # The n_t respondents with answer t report like one multinomial draw from row t of M.
        rng = np.random.default_rng(rng)
        counts = check_counts(true_counts, self.k)
        return sum(rng.multinomial(n_t, self.channel[t], size=repetitions) for t, n_t in enumerate(counts))

    # -- the literature's estimators -------------------------------------------------------------
    def sampling_covariance(self, report_shares: ArrayLike, n: int) -> np.ndarray:
        """M^-T (diag(lambda) - lambda lambda^T) M^-1 / n: the moment estimator's covariance (ref. 1)."""
        lam = np.asarray(report_shares, dtype=float)
        inverse = self._inverse_response
        return inverse @ (np.diag(lam) - np.outer(lam, lam)) @ inverse.T / n

    def maximum_likelihood(self, counts: ArrayLike, *, tolerance: float = 1e-12) -> np.ndarray:
        """argmax over the simplex of sum_y c_y ln (M^T pi)_y: the moment estimate if feasible, else EM.

        EM (ref. 7): pi_v <- pi_v sum_y M[v, y] c_y / ((M^T pi)_y n), from the uniform start, until no
        share moves by ``tolerance``. The log-likelihood is concave, so its maximum is global.
        """
        c = np.asarray(counts, dtype=float)
        n = c.sum()
        moment = self._inverse_response @ (c / n)
        if np.all(moment >= 0):
            return moment / moment.sum()
        pi = np.full(self.k, 1.0 / self.k)
        for _ in range(100_000):
            lam = self.channel.T @ pi
            updated = pi * (self.channel @ np.divide(c, lam, out=np.zeros_like(c), where=c > 0)) / n
            if np.max(np.abs(updated - pi)) < tolerance:
                return updated
            pi = updated
        return pi

    def observed_information_covariance(self, pi: np.ndarray, counts: ArrayLike) -> np.ndarray:
        """Inverse observed information of the likelihood at pi, on the shares that are positive.

        With the free shares pi_S (S: positive shares but the last of them, which is 1 minus the
        others) and D = M[S] - M[last], the information is D diag(c / lambda^2) D^T; its inverse
        gives Cov(pi_S), and Var(pi_last) follows from the sum constraint.
        """
        c = np.asarray(counts, dtype=float)
        support = np.flatnonzero(pi > 1e-9)
        cov = np.zeros((self.k, self.k))
        if support.size < 2:
            return cov
        lam = self.channel.T @ pi
        free, last = support[:-1], support[-1]
        d = self.channel[free] - self.channel[last]
        weight = np.divide(c, lam**2, out=np.zeros_like(c), where=lam > 0)
        inner = np.linalg.inv((d * weight) @ d.T)
        full = np.zeros((support.size, support.size))
        full[:-1, :-1] = inner
        full[-1, :-1] = full[:-1, -1] = -inner.sum(axis=1)
        full[-1, -1] = inner.sum()
        cov[np.ix_(support, support)] = full
        return cov

    def analyze(self, tally: Tally) -> DesignEstimate:
        """The moment estimate and the MLE, with covariances, from a tally of reports.

        >>> from ldp.designs import Warner
        >>> design = Warner(k=2, epsilon=math.log(3), p=0.75)
        >>> result = design.analyze(Tally(100, np.array([60, 40])))
        >>> result.proportions.round(6).tolist(), result.standard_errors.round(6).tolist()
        ([0.7, 0.3], [0.09798, 0.09798])
        """
        if tally.n == 0:
            raise ValueError("cannot estimate from zero reports")
        lam = tally.counts / tally.n
        moment = self._inverse_response @ lam
        mle = self.maximum_likelihood(tally.counts)
        return DesignEstimate(
            proportions=moment,
            covariance=self.sampling_covariance(lam, tally.n),
            mle=mle,
            mle_covariance=self.observed_information_covariance(mle, tally.counts),
            n=tally.n,
        )

    def expected_half_width(self, n: int, frequencies: ArrayLike | None = None) -> float:
        """Expected 95 % half-width of the widest option's share at n respondents (answers f, default 1/k).

        1.96 max_v sqrt(Cov_vv) with the sampling covariance at lambda = M^T f.
        """
        if not n > 0:
            raise ValueError(f"n must be a positive number of respondents, got {n!r}")
        lam = self.channel.T @ self._shares(frequencies)
        return float(_Z95 * np.sqrt(np.max(np.diag(self.sampling_covariance(lam, 1)) / n)))
