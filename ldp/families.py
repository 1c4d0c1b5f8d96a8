"""The vocabulary every mechanism family shares: family names, mechanism names, advisor results
and the :class:`LDPMechanism` protocol (:mod:`ldp.registry` builds mechanisms from it).

The families' modules import this one for their name lists and result types, and
:mod:`ldp.registry` imports the families to build them, so this module imports none of them: the
registry stays one place without an import circle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from ldp.tally import Tally

Family = Literal["shares", "mean", "multi", "text"]

#: The four families, in the order a survey's builder lists them.
FAMILIES: tuple[Family, ...] = ("shares", "mean", "multi", "text")

#: Every registered mechanism's name, per family, in the order a builder offers them.
NAMES: dict[Family, tuple[str, ...]] = {
    "shares": (
        "krr",
        "subset",
        "oue",
        "olh",
        "hadamard",
        "sue",
        "cms",
        "hcms",
        "dbitflip",
        "forced-response",
        "unrelated-question",
        "warner",
        "crosswise",
    ),
    "mean": ("laplace", "gaussian", "1bitmean", "duchi", "piecewise", "hybrid"),
    "multi": ("set-sue", "set-oue", "padding-krr", "padding-olh"),
    "text": ("text-cms", "text-hcms", "rappor"),
}

#: Mechanisms defined for yes/no questions only (k = 2): Warner's and the crosswise design.
TWO_OPTIONS: tuple[str, ...] = ("warner", "crosswise")

Fill = Literal["fake", "not-asked"]

#: What each family's question sends when it is not asked (a branch not taken) or skipped, so that
#: every submission carries one report per question (:mod:`ldp.branching`): "fake", the report of an
#: answer drawn uniformly from the domain (a uniform option, or a uniform value in [lo, hi]), as in
#: Arcolezi et al.'s RS+FD; "not-asked", the report of a fixed answer that adds nothing to any
#: estimate (the empty set of a multi-select, which every option's share counts as 0; the empty
#: text of free text, which is never a queried candidate). A choice question that offers "Prefer not
#: to say" sends that option's report instead when it was shown and skipped (still independent of
#: every answer: :mod:`ldp.branching`); not shown, it sends its fill like any other.
FILLS: dict[Family, Fill] = {"shares": "fake", "mean": "fake", "multi": "not-asked", "text": "not-asked"}


#: Not randomized: a choice question asked directly stores its answer as given (epsilon infinite,
#: :class:`ldp.direct.DirectAnswer`). Of the "shares" family (stored, tallied and estimated like a
#: one-option report), but not in :data:`NAMES`, the LDP mechanisms every generic test iterates over.
NOT_RANDOMIZED: tuple[str, ...] = ("direct",)

#: Phase-2 designs of a two-phase survey (:mod:`ldp.adaptive`): epsilon-LDP mechanisms of the "shares"
#: family whose parameters the server chooses from phase 1's reports, never offered to a builder and
#: not in :data:`NAMES` (their estimate alone does not identify every option, which the generic
#: estimation tests assume; :class:`ldp.mechanisms.focus.FocusedResponse` has its own tests).
PHASE_TWO: tuple[str, ...] = ("focus",)

_RANDOMIZED_FAMILY: dict[str, Family] = {name: family for family in FAMILIES for name in NAMES[family]}
_FAMILY_OF: dict[str, Family] = _RANDOMIZED_FAMILY | dict.fromkeys(NOT_RANDOMIZED + PHASE_TWO, "shares")


@dataclass(frozen=True)
class Candidate:
    """One mechanism setting an advisor considered, and its expected error.

    ``half_width`` is the expected half-width of the widest 95 % interval at the advisor's n: of a
    share (families "shares", "multi", "text": one candidate string's share) or of the mean, in the
    question's units ("mean"). ``pure``: whether one report satisfies epsilon-LDP with delta = 0
    (only the Gaussian mechanism does not; advisors recommend pure mechanisms only).
    """

    mechanism: str
    params: dict[str, Any]
    half_width: float
    pure: bool = True


@dataclass(frozen=True)
class Recommendation:
    """An advisor's answer: the best candidate, and every candidate considered, best first.

    ``estimator`` is the estimator to apply to the recommended mechanism's tallies ("auto" for
    the shares family, :meth:`ldp.mechanisms.base.Mechanism.consistent_estimate`; "unbiased"
    where the family has only its unbiased estimate). ``regime`` says which side of a published
    crossover the budget is on, where the family has one ("one-bit" or "piecewise" for the mean:
    :mod:`ldp.numeric.advisor`); empty otherwise.
    """

    best: Candidate
    ranking: tuple[Candidate, ...]
    estimator: str = "auto"
    regime: str = ""


@runtime_checkable
class Estimate(Protocol):
    """What every family's estimate offers: its number of reports and its 95 % interval(s)."""

    @property
    def n(self) -> int: ...

    def confidence_interval(self) -> tuple[Any, Any]:
        """(low, high): per option, per candidate string, or of the mean."""
        ...


@runtime_checkable
class LDPMechanism(Protocol):
    """One mechanism of any family, from the browser's spec to the estimate and its privacy.

    ``name``, ``family`` and ``epsilon`` say what it is; ``params()`` what, beside its name, epsilon
    and the question's shape (k options, or the range [lo, hi], in the params for numbers), rebuilds
    it with :func:`build`. Reports travel as JSON objects (``client_spec`` says how the browser makes
    them) and are stored packed, ``report_width`` bytes each.

    ``estimate(tally)`` is the family's unbiased estimate; a text mechanism needs the candidate
    strings to count as well (``estimate(tally, candidates)``, :meth:`ldp.textreports.TextReports.estimate`).
    ``privacy_guarantee()`` is the (epsilon, delta) one report satisfies (delta = 0 except for the
    Gaussian mechanism); ``worst_case_log_ratio()`` the closed-form worst log-ratio of one report's
    probabilities (infinite for the Gaussian mechanism, which is (epsilon, delta) only).
    """

    @property
    def name(self) -> str: ...

    @property
    def family(self) -> Family: ...

    @property
    def epsilon(self) -> float: ...

    @property
    def report_width(self) -> int: ...

    def params(self) -> dict[str, Any]: ...

    def client_spec(self) -> dict[str, Any]: ...

    def parse_report(self, obj: Any) -> bytes: ...

    def unpack_report(self, packed: bytes) -> dict[str, Any]: ...

    def unpack_many(self, buffer: bytes) -> np.ndarray: ...

    def tally(self, packed: np.ndarray) -> Tally: ...

    def empty_tally(self) -> Tally: ...

    def estimate(self, tally: Tally) -> Estimate: ...

    def privacy_guarantee(self) -> tuple[float, float]: ...

    def worst_case_log_ratio(self) -> float: ...


def family_of(name: str) -> Family:
    """The family of the mechanism called ``name``: "shares", "mean", "multi" or "text".

    >>> family_of("set-oue"), family_of("rappor")
    ('multi', 'text')
    """
    try:
        return _FAMILY_OF[name]
    except (KeyError, TypeError):
        raise ValueError(f"mechanism must be one of {sorted(_FAMILY_OF)}, got {name!r}") from None


def randomized(name: str) -> bool:
    """Whether the mechanism called ``name`` randomizes (a local DP mechanism), rather than storing
    the answer as given (:data:`NOT_RANDOMIZED`).

    >>> randomized("krr"), randomized("direct")
    (True, False)
    """
    family_of(name)
    return name not in NOT_RANDOMIZED


def names(family: Family | None = None) -> tuple[str, ...]:
    """The registered mechanisms' names: of one family, or of every family in :data:`FAMILIES` order.

    >>> names("text")
    ('text-cms', 'text-hcms', 'rappor')
    """
    if family is None:
        return tuple(name for every in FAMILIES for name in NAMES[every])
    if family not in NAMES:
        raise ValueError(f"family must be one of {list(FAMILIES)}, got {family!r}")
    return NAMES[family]
