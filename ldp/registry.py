"""Every mechanism of every family behind one interface: :class:`LDPMechanism`, :func:`build`.

Murmur's mechanisms come in four *families*, named after what their estimate summarizes:

==========  ==========================================  =============================================
family      mechanisms (module)                         estimate
==========  ==========================================  =============================================
``shares``  k-RR, subset selection, OUE, OLH, Hadamard  :class:`~ldp.estimates.FrequencyEstimate`:
            response, SUE, CMS, HCMS, dBitFlip          each option's share of one choice
            (:mod:`ldp.mechanisms`); the randomized-
            response designs forced response,
            unrelated question, Warner, crosswise
            (:mod:`ldp.designs`)
``mean``    Laplace, Gaussian, 1BitMean, Duchi et al.,  :class:`~ldp.numeric.base.MeanEstimate`: the
            Piecewise, Hybrid (:mod:`ldp.numeric`)      mean of a number in [lo, hi]
``multi``   set-SUE, set-OUE, padding-and-sampling      :class:`~ldp.multiselect.base.SharesEstimate`:
            with k-RR or OLH (:mod:`ldp.multiselect`)   each option's share of chosen sets
``text``    text-CMS, text-HCMS, RAPPOR                 :class:`~ldp.textreports.CandidateCounts`:
            (:mod:`ldp.textreports`)                    how many wrote each queried string
==========  ==========================================  =============================================

Each family keeps its own base class and its science (:class:`~ldp.mechanisms.base.Mechanism`,
:class:`~ldp.numeric.base.NumericMechanism`, the multi-select
:class:`~ldp.multiselect.base.StoredReports`, :class:`~ldp.textreports.TextReports`); every one of
them satisfies the one :class:`LDPMechanism` protocol below, the life of a report in the order of
use: the browser's ``client_spec``; ``parse_report`` (strict validation of one report, returning
its packed bytes); ``tally`` (integer sufficient statistics that add up); ``estimate`` (a result
with ``n`` and ``confidence_interval()``); and the privacy statement, ``privacy_guarantee()``
(epsilon, delta) with ``worst_case_log_ratio()``, the closed-form max over reports y and inputs
v, v' of ln(P[y | v] / P[y | v']).

A mechanism is named by a string (``"krr"``, ``"piecewise"``, ``"set-oue"``, ``"rappor"``...);
:func:`build` makes one from its name, epsilon and its stored parameters, :func:`family_of` says
its family, and :data:`NAMES` lists the names of each family in the order a builder offers them
(the one source for the browser's name lists). The per-family constants
(:data:`ldp.mechanisms.MECHANISMS`, :data:`ldp.numeric.NUMERIC_MECHANISMS`,
:data:`ldp.multiselect.SET_MECHANISMS`, :data:`ldp.textreports.TEXT_MECHANISMS`) are views of
:data:`NAMES`. The advisors of every family (:func:`ldp.advisor.recommend`,
:func:`ldp.numeric.advisor.recommend_mean`, :func:`ldp.multiselect.recommend_multiselect`,
:func:`ldp.textreports.recommend_text`) return one result type, :class:`Recommendation` of
:class:`Candidate`.

Adding a mechanism
------------------
1. The ``ldp`` module: a class of its family (a subclass of the family's base class, or for a new
   family a class with every member of :class:`LDPMechanism`), with numpydoc references, a keyword
   ``rng`` on every randomizer and the closed-form ``worst_case_log_ratio``; its family's factory
   builds it (``make_mechanism`` and ``make_numeric_mechanism`` find the class in their package's
   ``_CLASSES``, which for the shares family also takes :data:`ldp.designs.DESIGNS`;
   ``make_set_mechanism`` and ``make_text_mechanism`` build from the name). It must build from
   epsilon alone (its knobs defaulting to a choice at epsilon whose worst ratio equals epsilon to
   1e-12 relative): the generic tests build every name that way.
2. The registry entry: its name in :data:`NAMES` under its family (for a new family, a builder in
   :func:`build` as well); a shares mechanism defined for yes/no questions only also goes in
   :data:`TWO_OPTIONS`, which the generic tests (k = 5, k = 256) read.
3. The JavaScript mirror in ``static/ldp/``: the same client spec and report, randomness from
   ``crypto.getRandomValues`` only; for the shares family, its spec check in ``spec.js``'s
   ``CHECKS``, its randomizer in ``randomize.js``'s ``RANDOMIZERS`` and its epsilon in
   ``epsilon.js``'s ``CATEGORICAL`` (constants.js lists it by itself, so the browser refuses a spec
   that has none of these).
4. A fixture in ``tests/js/make_specs.py`` (``CASES``; edge cases in ``PRIVACY_CASES``), then
   ``python -m tests.js.make_specs``, so that Python and JavaScript are checked against the same
   specs and reports; the shares family's generic spec tests need the randomizer in
   ``tests/js/spec.test.mjs``'s ``RANDOMIZER`` too.
5. Exact privacy tests in Python (the enumerated worst-case ratio equals the closed form and
   epsilon; ``tests/ldp/test_registry.py`` picks the new name up by itself) and in JavaScript
   (``tests/js/``).

>>> m = build("krr", k=3, epsilon=1.0)
>>> family_of("krr"), isinstance(m, LDPMechanism), round(m.worst_case_log_ratio(), 12)
('shares', True, 1.0)
>>> family_of("piecewise"), build("piecewise", epsilon=1.0, lo=0, hi=10).privacy_guarantee()
('mean', (1.0, 0.0))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from ldp.mechanisms import Mechanism
    from ldp.mechanisms.base import Tally
    from ldp.multiselect import PaddingAndSampling, SetUnaryEncoding
    from ldp.numeric import NumericMechanism
    from ldp.textreports import TextReports

__all__ = [
    "FAMILIES",
    "NAMES",
    "TWO_OPTIONS",
    "Candidate",
    "Estimate",
    "Family",
    "LDPMechanism",
    "Recommendation",
    "build",
    "family_of",
    "names",
]

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

_FAMILY_OF: dict[str, Family] = {name: family for family in FAMILIES for name in NAMES[family]}


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


def build(name: str, *, epsilon: float, k: int | None = None, **params: Any) -> LDPMechanism:
    """The mechanism called ``name`` at budget ``epsilon``, from its stored parameters.

    ``k`` (the number of options) is read by the families over options ("shares", "multi"), which
    need it; a number's range travels in ``params`` (``lo``, ``hi``) and free text has no options,
    so those families ignore ``k``, and a stored randomization's (name, k, epsilon, params) builds
    its mechanism whatever its family. ``params`` are each family's knobs (``d``, ``hash_count``,
    ``grid``, ``max_choices``...; ``params()`` gives them back), with the family's defaults.

    >>> build("set-oue", k=4, epsilon=2.0, max_choices=2).params()
    {'max_choices': 2, 'variant': 'oue'}
    >>> build("laplace", k=0, epsilon=1.0, lo=0, hi=10, grid=10).params()
    {'grid': 10}
    >>> build("olh", k=3, epsilon=1.0, width=2)
    Traceback (most recent call last):
    ...
    TypeError: OptimalLocalHashing.__init__() got an unexpected keyword argument 'width'
    """
    family = family_of(name)
    # The families' modules import this one (for their name lists), so it imports them when used.
    if family == "shares":
        from ldp.mechanisms import make_mechanism

        return make_mechanism(name, k=_options(name, k), epsilon=epsilon, **params)
    if family == "mean":
        from ldp.numeric import make_numeric_mechanism

        return make_numeric_mechanism(name, epsilon=epsilon, **params)
    if family == "multi":
        from ldp.multiselect import make_set_mechanism

        return make_set_mechanism(name, k=_options(name, k), epsilon=epsilon, **params)
    from ldp.textreports import make_text_mechanism

    return make_text_mechanism(name, epsilon=epsilon, **params)


def _options(name: str, k: int | None) -> int:
    if k is None:
        raise ValueError(f"{name} needs k, the number of options")
    return k


if TYPE_CHECKING:

    def _conformance(
        shares: Mechanism,
        mean: NumericMechanism,
        unary: SetUnaryEncoding,
        padding: PaddingAndSampling,
        text: TextReports,
    ) -> tuple[LDPMechanism, ...]:
        """Every family's base class satisfies the protocol: the type checker verifies this return."""
        return shares, mean, unary, padding, text
