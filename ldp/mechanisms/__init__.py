"""Frequency-estimation mechanisms, one module each, behind :class:`~ldp.mechanisms.base.Mechanism`.

``make_mechanism`` builds one from a name and JSON-serializable parameters, which is how
stored questions refer to them; :data:`MECHANISMS` maps the names the registry lists for the
"shares" family (:data:`ldp.registry.NAMES`) to their classes.
"""

from __future__ import annotations

from typing import Any

# The randomized-response designs (ldp.designs) are mechanisms of this family, in their own package.
from ldp.designs import DESIGNS
from ldp.direct import DirectAnswer
from ldp.families import names
from ldp.mechanisms.base import Mechanism, Tally
from ldp.mechanisms.bitflip import DBitFlip, OptimizedUnaryEncoding, SymmetricUnaryEncoding
from ldp.mechanisms.cms import CountMeanSketch
from ldp.mechanisms.focus import FocusedResponse
from ldp.mechanisms.hadamard import HadamardResponse
from ldp.mechanisms.hcms import HadamardCountMeanSketch
from ldp.mechanisms.krr import KRandomizedResponse
from ldp.mechanisms.local_hashing import OptimalLocalHashing
from ldp.mechanisms.reports import InvalidReport
from ldp.mechanisms.subset import SubsetSelection

__all__ = [
    "MECHANISMS",
    "CountMeanSketch",
    "DBitFlip",
    "FocusedResponse",
    "HadamardCountMeanSketch",
    "HadamardResponse",
    "OptimalLocalHashing",
    "OptimizedUnaryEncoding",
    "SubsetSelection",
    "SymmetricUnaryEncoding",
    "InvalidReport",
    "KRandomizedResponse",
    "Mechanism",
    "Tally",
    "make_mechanism",
]

_CLASSES: dict[str, type[Mechanism]] = {
    cls.name: cls
    for cls in (
        KRandomizedResponse,
        CountMeanSketch,
        DBitFlip,
        SymmetricUnaryEncoding,
        OptimizedUnaryEncoding,
        OptimalLocalHashing,
        SubsetSelection,
        HadamardResponse,
        HadamardCountMeanSketch,
    )
} | dict(DESIGNS)
# Built by make_mechanism, but not a randomized mechanism (ldp.families.NOT_RANDOMIZED).
# Built by make_mechanism too: the phase-2 designs of a two-phase survey (ldp.families.PHASE_TWO).
_DIRECT: dict[str, type[Mechanism]] = {DirectAnswer.name: DirectAnswer, FocusedResponse.name: FocusedResponse}
MECHANISMS: dict[str, type[Mechanism]] = {name: _CLASSES[name] for name in names("shares")}


def make_mechanism(name: str, k: int, epsilon: float, **params: Any) -> Mechanism:
    """Build the mechanism called ``name`` for k options at budget epsilon.

    >>> make_mechanism("dbitflip", k=5, epsilon=1.0, d=4).params()
    {'d': 4}
    """
    try:
        cls = MECHANISMS[name] if name in MECHANISMS else _DIRECT[name]
    except KeyError:
        raise ValueError(f"mechanism must be one of {sorted(MECHANISMS)}, got {name!r}") from None
    return cls(k=k, epsilon=epsilon, **params)  # type: ignore[call-arg]  # each class is a dataclass of k, epsilon
