"""Randomized-response designs by name, as mechanisms of the "shares" family.

==========================  ===================================  ==========================================
registry name               design (parameters)                  epsilon
==========================  ===================================  ==========================================
``forced-response``         forced response (p_j; p_yes, p_no)   ln(1 + t / min_j p_j), t = 1 - sum_j p_j
``unrelated-question``      unrelated question (p, pi)           ln(1 + p / ((1 - p) min_j pi_j))
``warner``                  Warner's mirrored statement (p)      |ln(p / (1 - p))|, yes/no only
``crosswise``               crosswise model (p)                  |ln(p / (1 - p))|, yes/no only
==========================  ===================================  ==========================================

Forced response and the unrelated question are one channel (:mod:`ldp.designs.forced`), Warner's
and the crosswise design another (:mod:`ldp.designs.mirrored`); all are
:class:`~ldp.designs.channel.ChannelDesign`: a k x k channel of exact fractions, with the
moment estimator and the MLE (:meth:`~ldp.designs.channel.ChannelDesign.analyze`). Each builds from
its stored parameters, or from epsilon alone with the literature's standard choice
(:func:`design_parameters`); :func:`design_epsilon` gives the epsilon of the literature's parameters.

>>> import math
>>> design_parameters("forced-response", k=2, epsilon=math.log(3))
{'forced': ['1/4', '1/4']}
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ldp.designs.channel import ChannelDesign, DesignEstimate
from ldp.designs.forced import ForcedResponse, UnrelatedQuestion, forced_response_epsilon, unrelated_question_epsilon
from ldp.designs.mirrored import Crosswise, MirroredChannel, Warner, mirrored_epsilon

__all__ = [
    "DESIGNS",
    "ChannelDesign",
    "Crosswise",
    "DesignEstimate",
    "ForcedResponse",
    "MirroredChannel",
    "UnrelatedQuestion",
    "Warner",
    "design_epsilon",
    "design_parameters",
    "forced_response_epsilon",
    "mirrored_epsilon",
    "unrelated_question_epsilon",
]

#: The designs' classes by registry name.
DESIGNS: dict[str, type[ChannelDesign]] = {
    cls.name: cls for cls in (ForcedResponse, UnrelatedQuestion, Warner, Crosswise)
}


def design_epsilon(name: str, k: int, **params: Any) -> float:
    """The exact epsilon of design ``name`` with the literature's parameters: what to build it with.

    >>> round(design_epsilon("forced-response", k=2, forced=["1/6", "1/6"]), 12)  # Boruch's die: ln 5
    1.609437912434
    >>> build = DESIGNS["forced-response"]
    >>> build(k=2, epsilon=design_epsilon("forced-response", k=2, forced=[0.2, 0.2]), forced=[0.2, 0.2]).params()
    {'forced': ['1/5', '1/5']}
    """
    if name == "forced-response":
        return forced_response_epsilon(params["forced"])
    if name == "unrelated-question":
        return unrelated_question_epsilon(params["p"], params.get("pi") or [Fraction(1, k)] * k)
    if name in ("warner", "crosswise"):
        return mirrored_epsilon(params["p"])
    raise ValueError(f"name must be one of {sorted(DESIGNS)}, got {name!r}")


def design_parameters(name: str, k: int, epsilon: float, **given: Any) -> dict[str, Any]:
    """The standard design parameters of ``name`` at ``epsilon`` (``given`` fixes some, e.g. ``pi``).

    Symmetric forced response (every p_j = 1 / (e^epsilon + k - 1)), the unrelated question's p for
    its innocuous distribution (uniform unless given), Warner's and the crosswise p = e^epsilon /
    (1 + e^epsilon); each on the 2^-53 grid, its epsilon never above the stated one.

    >>> design_parameters("warner", k=2, epsilon=1.0986122886681098)
    {'p': '3/4'}
    """
    try:
        cls = DESIGNS[name]
    except KeyError:
        raise ValueError(f"name must be one of {sorted(DESIGNS)}, got {name!r}") from None
    return cls(k=k, epsilon=epsilon, **given).params()  # type: ignore[call-arg]  # dataclasses of k, epsilon, params
