"""k-ary randomized response (k-RR, generalized randomized response), and random substitution.

Client: keep the true answer with probability p, otherwise report one of the other k - 1
options uniformly at random (probability q each), where

    p = e^epsilon / (e^epsilon + k - 1),    q = (1 - p) / (k - 1) = 1 / (e^epsilon + k - 1),

so that p / q = e^epsilon (seed 000). Server: with N reports of which N_v say v,

    n_hat_v = (N_v - N q) / (p - q)                                             (seed 000)

Per-option variance of the proportion f_hat_v for a fixed population (ref. 2):

    Var = q (1 - q) / (N (p - q)^2) + f_v (1 - p - q) / (N (p - q)).

Random substitution (seed 001) is the same mechanism written as a perturbation matrix
M = x G with x = 1 / (gamma + N - 1) and G = gamma on the diagonal, 1 elsewhere; with
gamma = e^epsilon and N = k, M's diagonal is p and its off-diagonal q. Seed 001's Theorem 1
gives M's inverse in closed form: (gamma + N - 2) / (gamma - 1) on the diagonal and
1 / (1 - gamma) off it. Its reconstruction clips negative counts to 0 and floors.

References
----------
1. S. L. Warner. "Randomized response." JASA 60(309), 1965.
2. T. Wang, J. Blocki, N. Li, S. Jha. "Locally differentially private protocols for frequency
   estimation." USENIX Security 2017.
3. Seed 000 (k-RR) and seed 001 (An, Kang, Hong: random substitution, Theorem 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from ldp.mechanisms.base import Mechanism, OneOptionReport, check_counts, check_values
from ldp.mechanisms.symmetric import symmetric_report_variances, symmetric_unit_variances

__all__ = [
    "KRandomizedResponse",
    "gamma_diagonal_inverse",
    "gamma_diagonal_matrix",
    "random_substitution_reconstruct",
]


@dataclass(frozen=True, eq=False)
class KRandomizedResponse(OneOptionReport, Mechanism):
    """k-RR for a question with ``k`` options at budget ``epsilon``.

    Examples
    --------
    >>> m = KRandomizedResponse(k=4, epsilon=math.log(9))
    >>> round(m.keep_probability, 12)  # OpenDP's check: ln 9 at k = 4 gives p = 0.75
    0.75
    >>> m.parse_report({"value": 2})
    b'\\x02'
    """

    name: ClassVar[str] = "krr"
    k: int
    epsilon: float

    def __post_init__(self) -> None:
        self._check_common()

    @property
    def keep_probability(self) -> float:
        """p = e^epsilon / (e^epsilon + k - 1): the report is the true answer."""
        return 1.0 / (1.0 + (self.k - 1) * math.exp(-self.epsilon))

    @property
    def other_probability(self) -> float:
        """q = 1 / (e^epsilon + k - 1): the report is one particular other option."""
        return (1.0 - self.keep_probability) / (self.k - 1)

    def params(self) -> dict[str, Any]:
        return {}

    def client_spec(self) -> dict[str, Any]:
        return {**self.spec_header(), "keep_probability": self.keep_probability}

    def randomize(self, values: ArrayLike, *, rng: Any = None) -> np.ndarray:
        rng = np.random.default_rng(rng)
        truth = check_values(values, self.k)
        keep = rng.random(truth.size) < self.keep_probability
        other = rng.integers(0, self.k - 1, size=truth.size)
        other += other >= truth  # skip the true answer: uniform over the k - 1 others
        return np.where(keep, truth, other).astype(np.uint8).reshape(-1, 1)

    @property
    def response_matrix(self) -> np.ndarray:
        p, q = self.keep_probability, self.other_probability
        return (p - q) * np.eye(self.k) + q

    def report_variances(self, frequencies: ArrayLike | None = None) -> np.ndarray:
        # The module docstring's q (1 - q) / (p - q)^2 + f_v (1 - p - q) / (p - q), as the
        # symmetric case with no second option named (one option per report).
        p, q = self.keep_probability, self.other_probability
        return symmetric_report_variances(p, q, 0.0, 0.0, self._shares(frequencies))

    @cached_property
    def unit_variances(self) -> np.ndarray:
        return symmetric_unit_variances(self.keep_probability, self.other_probability, 0.0, 0.0, self.k)

    def worst_case_log_ratio(self) -> float:
        return math.log(self.keep_probability / self.other_probability)

    def sample_tallies(self, true_counts: ArrayLike, repetitions: int, *, rng: Any = None) -> np.ndarray:
        # The n_t respondents with answer t report like one multinomial draw with probabilities A[:, t].
        rng = np.random.default_rng(rng)
        counts = check_counts(true_counts, self.k)
        a = self.response_matrix
        return sum(rng.multinomial(n_t, a[:, t], size=repetitions) for t, n_t in enumerate(counts))

    def guess_probability(self) -> float:
        # The best guess is the reported option itself, right with probability p.
        return self.keep_probability

    def report_probabilities(self) -> np.ndarray:
        """P[report = y | answer = v] as a (k, k) table, for enumeration."""
        return self.response_matrix.T.copy()


def gamma_diagonal_matrix(gamma: float, size: int) -> np.ndarray:
    """Seed 001's perturbation matrix M = x G, x = 1/(gamma + N - 1), G = gamma I + (J - I)."""
    _check_gamma(gamma, size)
    return (np.full((size, size), 1.0) + (gamma - 1.0) * np.eye(size)) / (gamma + size - 1)


def gamma_diagonal_inverse(gamma: float, size: int) -> np.ndarray:
    """Closed-form inverse of :func:`gamma_diagonal_matrix` (seed 001, Theorem 1).

    >>> gamma_diagonal_inverse(3.0, 2).tolist()
    [[1.5, -0.5], [-0.5, 1.5]]
    """
    _check_gamma(gamma, size)
    off = 1.0 / (1.0 - gamma)
    return np.full((size, size), off) + ((gamma + size - 2) / (gamma - 1) - off) * np.eye(size)


def random_substitution_reconstruct(reported_counts: ArrayLike, gamma: float, *, clip: bool = True) -> np.ndarray:
    """Seed 001's reconstruction X_hat = M^-1 Y of true counts from perturbed counts Y.

    With ``clip`` (the paper's procedure) negative counts become 0 and counts are floored
    to whole records; without it the result is the unbiased k-RR estimate of counts.
    """
    counts = np.asarray(reported_counts, dtype=float)
    estimate = gamma_diagonal_inverse(gamma, counts.size) @ counts
    return np.floor(np.clip(estimate, 0.0, None)) if clip else estimate


def _check_gamma(gamma: float, size: int) -> None:
    if not gamma > 1 or not math.isfinite(gamma):
        raise ValueError(f"gamma must be a finite number > 1, got {gamma!r}")
    if size < 2:
        raise ValueError(f"size must be at least 2, got {size!r}")
