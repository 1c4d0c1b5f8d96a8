"""A question asked directly: the answer is stored as given, with no randomization and no privacy.

Methodologists stratify randomized answers by non-sensitive facts asked directly (age band,
department, region: Blair, Imai and Zhou 2015, ref. 1, section 5; van den Hout and van der Heijden
2007, ref. 2). Such a question is not a local differential privacy mechanism: its channel is the
identity M = I, so one report *is* the answer and

    epsilon = max_y ln(max_v M[v, y] / min_v M[v, y]) = ln(1 / 0) = infinity,

which :meth:`DirectAnswer.worst_case_log_ratio` and :meth:`DirectAnswer.privacy_guarantee` say
honestly. It is kept in the "shares" family only so that its reports are stored, tallied and
estimated like every one-option report (the estimate is the plain share, its variance the
multinomial lambda (1 - lambda) / n). It is not in :data:`ldp.registry.NAMES` (the randomized
mechanisms every generic privacy test iterates over) but in :data:`ldp.registry.NOT_RANDOMIZED`;
:func:`ldp.registry.randomized` tells the two apart.

References
----------
1. G. Blair, K. Imai, Y.-Y. Zhou. "Design and analysis of the randomized response technique."
   JASA 110(511), 1304-1319, 2015.
2. A. van den Hout, P. G. M. van der Heijden. "The analysis of multivariate misclassified data
   with special attention to randomized response data." Sociological Methods & Research 35(4), 2007.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from ldp.designs.channel import ChannelDesign
from ldp.mechanisms.base import check_options, check_values

__all__ = ["DirectAnswer"]


@dataclass(frozen=True, eq=False)
class DirectAnswer(ChannelDesign):
    """The identity channel: the report is the answer (``epsilon`` must be ``math.inf``).

    >>> direct = DirectAnswer(k=3, epsilon=math.inf)
    >>> direct.privacy_guarantee(), direct.client_spec()
    ((inf, 0.0), {'mechanism': 'direct', 'k': 3, 'epsilon': None})
    >>> direct.randomize([2, 0]).ravel().tolist()
    [2, 0]
    """

    name: ClassVar[str] = "direct"
    k: int
    epsilon: float = math.inf

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", check_options(self.k))
        if not (isinstance(self.epsilon, (int, float)) and math.isinf(self.epsilon) and self.epsilon > 0):
            raise ValueError(f"epsilon must be inf for a question asked directly (no privacy), got {self.epsilon!r}")
        object.__setattr__(self, "epsilon", math.inf)

    def exact_channel(self) -> tuple[tuple[Fraction, ...], ...]:
        return tuple(tuple(Fraction(int(y == v)) for y in range(self.k)) for v in range(self.k))

    def worst_case_log_ratio(self) -> float:
        """Infinite: report v has probability 1 under answer v and 0 under any other."""
        return math.inf

    def enumerated_log_ratio(self) -> float:
        rows = self.exact_channel()
        return max(math.inf if min(col) == 0 else math.log(max(col) / min(col)) for col in zip(*rows, strict=True))

    def privacy_guarantee(self) -> tuple[float, float]:
        return math.inf, 0.0

    def params(self) -> dict[str, Any]:
        return {}

    def client_spec(self) -> dict[str, Any]:
        """The header with ``epsilon`` null (JSON has no infinity): the browser sends the answer as is."""
        return {"mechanism": self.name, "k": self.k, "epsilon": None}

    def randomize(self, values: ArrayLike, *, rng: Any = None) -> np.ndarray:
        """The answers themselves, one report each (``rng`` is accepted and unused: nothing is random)."""
        return check_values(values, self.k).astype(np.uint8).reshape(-1, 1)

    def guess_probability(self) -> float:
        return 1.0
