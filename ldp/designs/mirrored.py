"""Warner's mirrored statement and the crosswise model: one channel for a yes/no question.

Warner (1965, ref. 1): a spinner shows the statement "I am in group A" with probability p and its
mirror "I am not in group A" otherwise; the respondent says whether the statement shown is true.
With the options ordered (yes, no) and the report y the option the answer amounts to had the
direct statement been shown, M = [[p, 1 - p], [1 - p, p]].

The crosswise model (Yu, Tian and Tang 2008, ref. 2) asks instead whether the answers to the
sensitive question and to an innocuous one with known prevalence p ("is your mother's birthday
in January to March?", here simulated in the browser) are the same (both yes or both no, report
0) or different (report 1). P(same | yes) = p and P(same | no) = 1 - p: Warner's channel with p the
innocuous prevalence (ref. 2, section 2, and Blair, Imai and Zhou 2015, ref. 3, note this), so
both share :class:`MirroredChannel`; only the respondent's instruction differs. For both,

    epsilon = |ln(p / (1 - p))|,   pi_hat = (lambda_hat + p - 1) / (2p - 1),
    Var(pi_hat) = lambda (1 - lambda) / (n (2p - 1)^2)                        (ref. 1, eq. 6)

with lambda_hat the share of reports 0 ("yes" for Warner, "same" for crosswise). At a given
epsilon the standard choice is p = e^epsilon / (1 + e^epsilon) (binary randomized response:
the same channel as k-RR at k = 2). Both designs are for yes/no questions only (k = 2); the
diagonal model of Groenitz (2014) generalizes the crosswise model to k options.

References
----------
1. S. L. Warner. "Randomized response: a survey technique for eliminating evasive answer
   bias." JASA 60(309), 63-69, 1965.
2. J. W. Yu, G. L. Tian, M. L. Tang. "Two new models for survey sampling with sensitive
   characteristic: design and analysis." Metrika 67, 251-263, 2008.
3. G. Blair, K. Imai, Y.-Y. Zhou. "Design and analysis of the randomized response technique."
   JASA 110(511), 1304-1319, 2015.
4. H. Groenitz. "A new privacy-protecting survey design for multichotomous sensitive variables."
   Metrika 77, 211-224, 2014.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

from ldp.designs.channel import (
    GRID,
    ChannelDesign,
    check_design_epsilon,
    fraction,
    fraction_text,
    grid_fraction,
    weights,
)

__all__ = ["Crosswise", "MirroredChannel", "Warner", "mirrored_epsilon"]


def mirrored_epsilon(p: Any) -> float:
    """|ln(p / (1 - p))|: the exact epsilon of Warner's and the crosswise design.

    >>> round(mirrored_epsilon("3/4"), 12) == round(math.log(3), 12)
    True
    """
    exact = fraction(p, "p")
    high, low = max(exact, 1 - exact), min(exact, 1 - exact)
    return math.log1p((high - low) / low)  # ln(high / low), precise at small epsilon


@dataclass(frozen=True, eq=False)
class MirroredChannel(ChannelDesign):
    """M = [[p, 1 - p], [1 - p, p]] for a yes/no question; ``p`` exact ("3/4", or 0.75 read as a
    decimal); ``p=None`` takes e^eps / (1 + e^eps) rounded down onto the 2^-53 grid (toward 1/2,
    so epsilon never exceeds the stated one)."""

    name: ClassVar[str] = "warner"
    k: int
    epsilon: float
    p: Any = None

    def __post_init__(self) -> None:
        self._check_common()
        if self.k != 2:
            raise ValueError(f"k must be 2 for the {self.name} design (a yes/no question), got {self.k!r}")
        if self.p is None:
            p = grid_fraction(1.0 / (1.0 + math.exp(-self.epsilon)), "down")
            while mirrored_epsilon(p) > self.epsilon:  # float rounding of the target
                p -= Fraction(1, GRID)
        else:
            p = fraction(self.p, "p")
        if p == Fraction(1, 2):
            raise ValueError(f"p must differ from 1/2 (no report would tell yes from no), got {self.p!r}")
        object.__setattr__(self, "p", fraction_text(p))
        check_design_epsilon(self.epsilon, self.worst_case_log_ratio(), self.name)

    def exact_channel(self) -> tuple[tuple[Fraction, ...], ...]:
        p = Fraction(self.p)
        return ((p, 1 - p), (1 - p, p))

    def worst_case_log_ratio(self) -> float:
        return mirrored_epsilon(self.p)

    def params(self) -> dict[str, Any]:
        return {"p": self.p}

    def client_spec(self) -> dict[str, Any]:
        """``p``: integer weights of (direct statement, mirrored one); for crosswise, of the innocuous
        answer (yes, no)."""
        p = Fraction(self.p)
        return {**self.spec_header(), "p": weights([p, 1 - p], "p")}


@dataclass(frozen=True, eq=False)
class Warner(MirroredChannel):
    """Warner's mirrored statement: the direct statement is shown with probability ``p``.

    >>> design = Warner(k=2, epsilon=math.log(3), p=0.75)
    >>> design.client_spec()
    {'mechanism': 'warner', 'k': 2, 'epsilon': 1.0986122886681098, 'p': [3, 1]}
    """

    name: ClassVar[str] = "warner"


@dataclass(frozen=True, eq=False)
class Crosswise(MirroredChannel):
    """The crosswise model: ``p`` is the innocuous question's prevalence of "yes"; report 0 = same.

    >>> Crosswise(k=2, epsilon=math.log(3), p=0.25).channel.tolist()
    [[0.25, 0.75], [0.75, 0.25]]
    """

    name: ClassVar[str] = "crosswise"
