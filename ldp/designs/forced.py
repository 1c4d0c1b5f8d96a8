"""Forced response and the unrelated-question design: one channel, truth or a known distribution.

Forced response (Boruch 1971, ref. 1; Fox and Tracy 1986, ref. 2; Blair, Imai and Zhou 2015,
ref. 3): a randomizing device forces the report to option j with probability p_j and otherwise
(probability t = 1 - sum_j p_j) the respondent answers truthfully. For a yes/no question the
design parameters are p_yes and p_no. The channel is M[v, y] = p_y + t [y = v], so column y's
ratio is (p_y + t) / p_y and

    epsilon = ln(1 + t / min_j p_j).

At a given epsilon the standard choice is p_j all equal (symmetric forced response, ref. 3's
"p_yes = p_no"): p_j = 1 / (e^epsilon + k - 1), which is exactly k-ary randomized response
(:class:`ldp.mechanisms.KRandomizedResponse`): keep probability t + p = e^epsilon / (e^epsilon + k - 1).

The unrelated-question design (Greenberg et al. 1969, ref. 4): with probability p the respondent
answers the sensitive question, otherwise an innocuous question whose answer has the known
distribution pi (for yes/no, prevalence pi of "yes"; here the innocuous answer is simulated in the
browser, so pi is known exactly). It is the same channel as forced response with
p_j = (1 - p) pi_j and t = p (ref. 3, section 2), so

    epsilon = ln(1 + p / ((1 - p) min_j pi_j)).

Moment estimators (refs. 2, 4): pi_hat_v = (lambda_hat_v - p_v) / t for forced response and
pi_hat_v = (lambda_hat_v - (1 - p) pi_v) / p for the unrelated question, each with variance
lambda_v (1 - lambda_v) / (n t^2); :meth:`ChannelDesign.analyze` computes them as M^-T lambda_hat.

References
----------
1. R. F. Boruch. "Assuring confidentiality of responses in social research: a note on
   strategies." The American Sociologist 6(4), 308-311, 1971.
2. J. A. Fox, P. E. Tracy. "Randomized Response: A Method for Sensitive Surveys." Sage, 1986.
3. G. Blair, K. Imai, Y.-Y. Zhou. "Design and analysis of the randomized response technique."
   JASA 110(511), 1304-1319, 2015.
4. B. G. Greenberg, A.-L. A. Abul-Ela, W. R. Simmons, D. G. Horvitz. "The unrelated question
   randomized response model: theoretical framework." JASA 64(326), 520-539, 1969.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from ldp.designs.channel import (
    GRID,
    ChannelDesign,
    check_design_epsilon,
    fraction,
    fraction_text,
    grid_fraction,
    shares,
    weights,
)
from ldp.mechanisms.base import check_values

__all__ = ["ForcedResponse", "UnrelatedQuestion", "forced_response_epsilon", "unrelated_question_epsilon"]


def forced_response_epsilon(forced: Any) -> float:
    """ln(1 + t / min_j p_j), t = 1 - sum_j p_j: the exact epsilon of forced response.

    >>> round(forced_response_epsilon(["1/5", "1/5"]), 12) == round(math.log(4), 12)
    True
    """
    exact = [fraction(p, f"forced[{j}]") for j, p in enumerate(forced)]
    truth = 1 - sum(exact, Fraction(0))
    if not truth > 0:
        raise ValueError(f"forced must sum to less than 1, got {forced!r}")
    return math.log1p(truth / min(exact))


def unrelated_question_epsilon(p: Any, pi: Any) -> float:
    """ln(1 + p / ((1 - p) min_j pi_j)): the exact epsilon of the unrelated-question design.

    >>> round(unrelated_question_epsilon("1/2", ["1/2", "1/2"]), 12) == round(math.log(3), 12)
    True
    """
    sensitive = fraction(p, "p")
    return math.log1p(sensitive / ((1 - sensitive) * min(fraction(x, "pi") for x in pi)))


@dataclass(frozen=True, eq=False)
class ForcedResponse(ChannelDesign):
    """Forced response for ``k`` options: forced to option j with probability ``forced[j]``.

    ``forced`` holds exact probabilities ("1/6", or floats read as decimals: 0.2 is 1/5); for a
    yes/no question with options (yes, no) it is [p_yes, p_no]. ``forced=None`` takes the standard
    choice at ``epsilon``: every p_j = 1 / (e^epsilon + k - 1), rounded up onto the 2^-53 grid, so
    the design's epsilon never exceeds the stated one.

    >>> design = ForcedResponse(k=2, epsilon=math.log(4), forced=[0.2, 0.2])
    >>> design.params(), design.client_spec()["truth"], float(design.channel[0, 0])
    ({'forced': ['1/5', '1/5']}, 3, 0.8)
    >>> ForcedResponse(k=2, epsilon=1.0, forced=[0.2, 0.2])
    Traceback (most recent call last):
    ...
    ValueError: epsilon must be the forced-response design's own 1.3862943611198906, got 1.0
    """

    name: ClassVar[str] = "forced-response"
    k: int
    epsilon: float
    forced: Any = None

    def __post_init__(self) -> None:
        self._check_common()
        if self.forced is None:
            share = grid_fraction(1.0 / (math.exp(self.epsilon) + self.k - 1), "up")
            while forced_response_epsilon([share] * self.k) > self.epsilon:  # float rounding of the target
                share += Fraction(1, GRID)
            exact: tuple[Fraction, ...] = (share,) * self.k
        elif not isinstance(self.forced, (list, tuple)) or len(self.forced) != self.k:
            raise ValueError(f"forced must be a list of {self.k} probabilities, got {self.forced!r}")
        else:
            exact = tuple(fraction(p, f"forced[{j}]") for j, p in enumerate(self.forced))
        object.__setattr__(self, "forced", [fraction_text(p) for p in exact])
        self.client_spec()  # the common denominator must be one the browser can sample
        check_design_epsilon(self.epsilon, self.worst_case_log_ratio(), self.name)

    @property
    def truth_probability(self) -> Fraction:
        """t = 1 - sum_j p_j: the respondent answers truthfully."""
        return 1 - sum((Fraction(p) for p in self.forced), Fraction(0))

    def exact_channel(self) -> tuple[tuple[Fraction, ...], ...]:
        forced, t = [Fraction(p) for p in self.forced], self.truth_probability
        return tuple(tuple(forced[y] + (t if y == v else 0) for y in range(self.k)) for v in range(self.k))

    def worst_case_log_ratio(self) -> float:
        return forced_response_epsilon(self.forced)

    def params(self) -> dict[str, Any]:
        return {"forced": list(self.forced)}

    def client_spec(self) -> dict[str, Any]:
        """``forced``: integer weights of the forced options, ``truth``: of the true answer (same total)."""
        *forced, truth = weights([*(Fraction(p) for p in self.forced), self.truth_probability], "forced")
        return {**self.spec_header(), "forced": forced, "truth": truth}


@dataclass(frozen=True, eq=False)
class UnrelatedQuestion(ChannelDesign):
    """The unrelated-question design: the sensitive question with probability ``p``, else an
    innocuous answer drawn from ``pi`` (default: every option equally likely; for yes/no, pi = 1/2).

    ``p=None`` takes the largest p on the 2^-53 grid whose epsilon does not exceed ``epsilon``.

    >>> design = UnrelatedQuestion(k=2, epsilon=math.log(3), p=0.5, pi=[0.5, 0.5])
    >>> design.client_spec()["sensitive"], design.client_spec()["pi"], float(design.channel[0, 0])
    ([1, 1], [1, 1], 0.75)
    """

    name: ClassVar[str] = "unrelated-question"
    k: int
    epsilon: float
    p: Any = None
    pi: Any = None

    def __post_init__(self) -> None:
        self._check_common()
        pi = (Fraction(1, self.k),) * self.k if self.pi is None else shares(self.pi, "pi", self.k)
        object.__setattr__(self, "pi", [fraction_text(x) for x in pi])
        if self.p is None:
            scaled = math.expm1(self.epsilon) * min(pi)
            p = grid_fraction(float(scaled / (1 + scaled)), "down")
            while unrelated_question_epsilon(p, pi) > self.epsilon:  # float rounding of the target
                p -= Fraction(1, GRID)
        else:
            p = fraction(self.p, "p")
        object.__setattr__(self, "p", fraction_text(p))
        self.client_spec()
        check_design_epsilon(self.epsilon, self.worst_case_log_ratio(), self.name)

    def exact_channel(self) -> tuple[tuple[Fraction, ...], ...]:
        p, pi = Fraction(self.p), [Fraction(x) for x in self.pi]
        return tuple(tuple((1 - p) * pi[y] + (p if y == v else 0) for y in range(self.k)) for v in range(self.k))

    def worst_case_log_ratio(self) -> float:
        return unrelated_question_epsilon(self.p, self.pi)

    def params(self) -> dict[str, Any]:
        return {"p": self.p, "pi": list(self.pi)}

    def client_spec(self) -> dict[str, Any]:
        """``sensitive``: weights of (sensitive question, innocuous one); ``pi``: the innocuous answer's."""
        p = Fraction(self.p)
        return {
            **self.spec_header(),
            "sensitive": weights([p, 1 - p], "p"),
            "pi": weights([Fraction(x) for x in self.pi], "pi"),
        }

    def randomize(self, values: ArrayLike, *, rng: Any = None) -> np.ndarray:
        """Two exact integer draws per respondent, as the browser: which question, then the innocuous answer."""
        rng = np.random.default_rng(rng)
        truth = check_values(values, self.k)
        spec = self.client_spec()
        asked, innocuous = np.cumsum(spec["sensitive"]), np.cumsum(spec["pi"])
        sensitive = rng.integers(0, asked[-1], size=truth.size, dtype=np.int64) < asked[0]
        drawn = (rng.integers(0, innocuous[-1], size=truth.size, dtype=np.int64)[:, None] >= innocuous).sum(axis=1)
        return np.where(sensitive, truth, drawn).astype(np.uint8).reshape(-1, 1)
