"""Multi-select ("choose all that apply") questions: mechanisms over sets of options.

* :class:`SetUnaryEncoding`: one randomized bit per option (``set-sue``, ``set-oue``), the
  whole vector under one epsilon, calibrated to the exact worst case over sets of <= l options;
* :class:`PaddingAndSampling`: pad to l items with dummies, sample one, report it with k-RR
  (``padding-krr``, amplified to spend exactly epsilon) or OLH (``padding-olh``) over k + l items;
* :func:`recommend_multiselect`: the one with the smallest expected error for (k, l, epsilon, n).

>>> import numpy as np
>>> m = make_set_mechanism("set-oue", k=4, epsilon=2.0, max_choices=2)
>>> sets = np.array([[1, 1, 0, 0]] * 3000)
>>> est = m.estimate(m.tally(m.randomize(sets, rng=1)))
>>> bool(abs(est.shares[0] - 1) < 4 * est.standard_errors[0])
True
"""

from __future__ import annotations

from ldp.families import names
from ldp.multiselect.advisor import SetCandidate, SetRecommendation, recommend_multiselect
from ldp.multiselect.base import SharesEstimate, all_sets
from ldp.multiselect.padding import PaddingAndSampling
from ldp.multiselect.unary import SetUnaryEncoding

__all__ = [
    "SET_MECHANISMS",
    "PaddingAndSampling",
    "SetCandidate",
    "SetRecommendation",
    "SetUnaryEncoding",
    "SharesEstimate",
    "all_sets",
    "make_set_mechanism",
    "recommend_multiselect",
]

#: The "multi" family of :data:`ldp.registry.NAMES`.
SET_MECHANISMS = names("multi")


def make_set_mechanism(
    name: str, k: int, epsilon: float, max_choices: int | None = None, **implied: str
) -> SetUnaryEncoding | PaddingAndSampling:
    """Build the multi-select mechanism called ``name`` (one of :data:`SET_MECHANISMS`).

    ``implied`` may repeat what the name says (``variant`` of a unary encoding, ``oracle`` of
    padding-and-sampling), as ``params()`` gives it back; a different value is refused.

    >>> make_set_mechanism("padding-olh", k=5, epsilon=1.0, max_choices=2).params()
    {'max_choices': 2, 'oracle': 'olh'}
    """
    if name not in SET_MECHANISMS:
        raise ValueError(f"mechanism must be one of {list(SET_MECHANISMS)}, got {name!r}")
    family, variant = name.split("-")
    knob = "variant" if family == "set" else "oracle"
    for key, value in implied.items():
        if key != knob or value != variant:
            raise ValueError(f"{name} takes max_choices and {knob}={variant!r} only, got {key}={value!r}")
    if family == "set":
        return SetUnaryEncoding(k=k, epsilon=epsilon, max_choices=max_choices, variant=variant)
    return PaddingAndSampling(k=k, epsilon=epsilon, max_choices=max_choices, oracle_name=variant)
