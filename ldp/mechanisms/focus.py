"""Focused response: k-RR over a few named options and one "another option" bucket.

A phase-2 design of a two-phase survey (:mod:`ldp.adaptive`): the server names m < k options
(``focus``, chosen from phase 1's randomized reports before any phase-2 respondent answers); the
client maps its answer v to its bucket b(v) (v's position in ``focus``, or m, "another option",
for every option not named) and reports b(v) by k-RR on the m + 1 buckets:

    P[y | v] = p if y = b(v), else q,    p = e^epsilon / (e^epsilon + m),  q = 1 / (e^epsilon + m).

Privacy. P[y | v] depends on v only through b(v), and for every report y and answers v, v' the
ratio P[y | v] / P[y | v'] is p / q = e^epsilon, p / p = 1 or q / q = 1: exactly epsilon-LDP (the
map b is fixed before the answer is read, so it is part of the mechanism; a deterministic map
followed by an epsilon-LDP randomizer is epsilon-LDP, post-processing in reverse, Dwork and Roth
2014, Proposition 2.1 applied to the randomizer's input). tests/ldp/test_focus.py and
tests/js/focus.test.mjs enumerate the (k, m + 1) table.

Estimate. The m + 1 bucket shares g are estimated without bias by inverting k-RR on m + 1 values
(ref. 2: g_hat = (z_bar - q) / (p - q)), with variance per report q (1 - q) / (p - q)^2 +
g_b (1 - p - q) / (p - q). Spending the budget on m + 1 values instead of k is what gains: at
k = 20, m = 4, epsilon = 1 and evenly spread answers a named option's variance per report is 2.02
against k-RR's 7.54, but subset selection of size 5 (the advisor's design there) already has 3.28:
the gain on the named options is 1.6-fold in variance at best. The shares of the options inside
the bucket are *not* identified by these reports alone; standing alone, the
estimate splits the bucket's share by ``within`` (a split fixed with the design, by default even),
f_hat = L g_hat with L the (k, m + 1) map that sends bucket j to option focus[j] and the bucket m
to the unnamed options in proportion to ``within``: unbiased for the named options and the
bucket's total, model-based inside the bucket. A two-phase survey estimates every option from
both phases' reports at once (:func:`ldp.adaptive.joint_shares`), which identifies them all.

References
----------
1. C. Dwork, A. Roth. "The algorithmic foundations of differential privacy." 2014.
2. T. Wang, J. Blocki, N. Li, S. Jha. "Locally differentially private protocols for frequency
   estimation." USENIX Security 2017. (k-RR's estimate and variance, here on m + 1 values.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from ldp.mechanisms.base import Mechanism, OneOptionReport, check_counts, check_values
from ldp.mechanisms.krr import KRandomizedResponse

__all__ = ["FocusedResponse"]


@dataclass(frozen=True, eq=False)
class FocusedResponse(OneOptionReport, Mechanism):
    """k-RR over the options in ``focus`` and one bucket for the rest, at budget ``epsilon``.

    Its report is ``{"value": y}``, y in [0, m], one byte packed, tallied as counts per bucket
    (:class:`~ldp.mechanisms.base.OneOptionReport` over m + 1 values).

    Examples
    --------
    >>> m = FocusedResponse(k=5, epsilon=math.log(3), focus=(3, 0))
    >>> round(m.keep_probability, 12), m.bucket_of.tolist()  # p = 3 / (3 + 2)
    (0.6, [1, 2, 2, 0, 2])
    >>> m.parse_report({"value": 2}), round(m.worst_case_log_ratio(), 12)
    (b'\\x02', 1.098612288668)
    """

    name: ClassVar[str] = "focus"
    k: int
    epsilon: float
    focus: tuple[int, ...] = (0,)
    within: tuple[float, ...] | None = field(default=None)

    def __post_init__(self) -> None:
        self._check_common()
        focus = tuple(self.focus) if isinstance(self.focus, (list, tuple)) else None
        if (
            focus is None
            or not 1 <= len(focus) <= self.k - 1
            or len(set(focus)) != len(focus)
            or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 0 <= v < self.k for v in focus)
        ):
            raise ValueError(f"focus must name 1 to {self.k - 1} distinct options in [0, {self.k}), got {self.focus!r}")
        object.__setattr__(self, "focus", tuple(int(v) for v in focus))
        rest = self.k - len(focus)
        within = np.full(rest, 1.0) if self.within is None else np.asarray(self.within, dtype=float)
        if within.shape != (rest,) or not np.all(np.isfinite(within)) or within.min() < 0 or within.sum() <= 0:
            raise ValueError(f"within must be {rest} non-negative numbers, not all 0, got {self.within!r}")
        object.__setattr__(self, "within", tuple(float(w) for w in within / within.sum()))

    @property
    def buckets(self) -> int:
        """m + 1: the named options and "another option"."""
        return len(self.focus) + 1

    @property
    def report_values(self) -> int:
        return self.buckets

    @cached_property
    def bucket_of(self) -> np.ndarray:
        """b(v) for every option v: its position in ``focus``, or m."""
        buckets = np.full(self.k, len(self.focus), dtype=np.int64)
        buckets[list(self.focus)] = np.arange(len(self.focus))
        return buckets

    @cached_property
    def bucket_rr(self) -> KRandomizedResponse:
        """k-RR on the m + 1 buckets: what the client runs on its answer's bucket."""
        return KRandomizedResponse(k=self.buckets, epsilon=self.epsilon)

    @property
    def keep_probability(self) -> float:
        """p = e^epsilon / (e^epsilon + m): the report is the answer's bucket."""
        return self.bucket_rr.keep_probability

    @property
    def other_probability(self) -> float:
        """q = 1 / (e^epsilon + m): the report is one particular other bucket."""
        return self.bucket_rr.other_probability

    def params(self) -> dict[str, Any]:
        return {"focus": list(self.focus), "within": list(self.within or ())}

    def client_spec(self) -> dict[str, Any]:
        # The browser needs the buckets and p only; the split inside the bucket is the server's.
        return {**self.spec_header(), "focus": list(self.focus), "keep_probability": self.keep_probability}

    def randomize(self, values: ArrayLike, *, rng: Any = None) -> np.ndarray:
        return self.bucket_rr.randomize(self.bucket_of[check_values(values, self.k)], rng=rng)

    @cached_property
    def bucket_matrix(self) -> np.ndarray:
        """B: k-RR's (m + 1, m + 1) matrix, B[y, b] = P[report y | bucket b]."""
        return self.bucket_rr.response_matrix

    @cached_property
    def response_matrix(self) -> np.ndarray:
        """A = B M, shape (m + 1, k): E[one-hot report] = A f, with M[b, v] = 1 when b(v) = b."""
        return self.bucket_matrix[:, self.bucket_of]

    @cached_property
    def _inverse_response(self) -> np.ndarray:
        # f_hat = L B^-1 z_bar (module docstring): not an inverse of A, which has rank m + 1 < k.
        spread = np.zeros((self.k, self.buckets))
        spread[list(self.focus), np.arange(len(self.focus))] = 1.0
        spread[self.bucket_of == len(self.focus), len(self.focus)] = self.within
        return spread @ np.linalg.inv(self.bucket_matrix)

    def worst_case_log_ratio(self) -> float:
        return math.log(self.keep_probability / self.other_probability)

    def sample_tallies(self, true_counts: ArrayLike, repetitions: int, *, rng: Any = None) -> np.ndarray:
        counts = np.bincount(self.bucket_of, weights=check_counts(true_counts, self.k), minlength=self.buckets)
        return self.bucket_rr.sample_tallies(np.rint(counts).astype(np.int64), repetitions, rng=rng)

    def report_probabilities(self) -> np.ndarray:
        """P[report = y | answer = v] as a (k, m + 1) table, for enumeration."""
        return self.response_matrix.T.copy()

    def guess_probability(self) -> float:
        # (1/k) sum_y max_v P[y | v] = (m + 1) p / k: every report is most likely from its own bucket.
        return self.buckets * self.keep_probability / self.k
