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
(the one source for the browser's name lists). A choice question asked directly (no randomization, epsilon infinite:
:class:`ldp.direct.DirectAnswer`) is built here too, by the name in :data:`NOT_RANDOMIZED`, and so
are the phase-2 designs of a two-phase survey (:data:`PHASE_TWO`: focused response,
:class:`ldp.mechanisms.focus.FocusedResponse`, epsilon-LDP with parameters chosen by
:func:`ldp.adaptive.retune` from phase 1's reports, never offered to a builder);
:func:`randomized` says which names are local DP mechanisms. The per-family constants
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

from typing import TYPE_CHECKING, Any

from ldp.families import (
    FAMILIES,
    FILLS,
    NAMES,
    NOT_RANDOMIZED,
    PHASE_TWO,
    TWO_OPTIONS,
    Candidate,
    Estimate,
    Family,
    LDPMechanism,
    Recommendation,
    family_of,
    names,
    randomized,
)
from ldp.mechanisms import Mechanism, make_mechanism
from ldp.multiselect import PaddingAndSampling, SetUnaryEncoding, make_set_mechanism
from ldp.numeric import NumericMechanism, make_numeric_mechanism
from ldp.textreports import TextReports, make_text_mechanism

__all__ = [
    "FAMILIES",
    "FILLS",
    "NAMES",
    "NOT_RANDOMIZED",
    "PHASE_TWO",
    "TWO_OPTIONS",
    "Candidate",
    "Estimate",
    "Family",
    "LDPMechanism",
    "Recommendation",
    "build",
    "family_of",
    "names",
    "randomized",
]


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
    if family in _OVER_OPTIONS:
        return _BUILDERS[family](name, k=_options(name, k), epsilon=epsilon, **params)
    return _BUILDERS[family](name, epsilon=epsilon, **params)


#: Each family's factory; the families over options ("shares", "multi") take k.
_BUILDERS: dict[Family, Any] = {
    "shares": make_mechanism,
    "mean": make_numeric_mechanism,
    "multi": make_set_mechanism,
    "text": make_text_mechanism,
}
_OVER_OPTIONS: frozenset[Family] = frozenset({"shares", "multi"})


def _options(name: str, k: int | None) -> int:
    if k is None:
        raise ValueError(f"{name} needs k, the number of options")
    return k


if TYPE_CHECKING:  # checked by mypy only: nothing to run

    def _conformance(
        shares: Mechanism,
        mean: NumericMechanism,
        unary: SetUnaryEncoding,
        padding: PaddingAndSampling,
        text: TextReports,
    ) -> tuple[LDPMechanism, ...]:
        """Every family's base class satisfies the protocol: the type checker verifies this return."""
        return shares, mean, unary, padding, text
