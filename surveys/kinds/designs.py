"""Randomized-response designs by name and questions asked directly, as the builder and the answer
page present them: the design parameters in the literature's words, the instruction a respondent
would read on paper, and what a direct question may be.

The science is :mod:`ldp.designs` (forced response, unrelated question, Warner's mirrored statement,
crosswise model; docs/designs.md) and :class:`ldp.direct.DirectAnswer`; this module only maps the
builder's fields onto their parameters. Every design field is optional: left empty, the design
takes the literature's standard choice at the question's epsilon
(:func:`ldp.designs.design_parameters`); given, the parameters fix epsilon exactly
(:func:`ldp.designs.design_epsilon`), and the question's epsilon is restated to it.
"""

from __future__ import annotations

import copy
import math
from fractions import Fraction
from typing import Any

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from ldp.designs import DESIGNS, design_epsilon
from ldp.designs.channel import fraction
from ldp.mechanisms.base import OneOptionReport
from ldp.registry import NOT_RANDOMIZED, TWO_OPTIONS
from surveys.kinds.base import KindError
from surveys.templatetags.murmur import percent

#: Most options a question asked directly may have: its groups must stay readable and not too small.
MAX_DIRECT_OPTIONS = 20
#: Results never show a group of a directly asked question with fewer respondents than this.
SMALL_GROUP = 10


def _probability_field(label: Any, help_text: Any) -> forms.CharField:
    return forms.CharField(label=label, help_text=help_text, required=False, max_length=40)


#: The builder's design fields (added to the question form by name; all optional).
DESIGN_FIELDS: dict[str, forms.Field] = {
    "forced_yes": _probability_field(
        gettext_lazy("Forced response: probability of being told to answer “yes” (p_yes)"),
        gettext_lazy("A fraction or decimal, e.g. 1/6 (Boruch's die). Empty: the standard design at this ε."),
    ),
    "forced_no": _probability_field(
        gettext_lazy("Forced response: probability of being told to answer “no” (p_no)"),
        gettext_lazy("The respondent answers truthfully otherwise, with probability 1 − p_yes − p_no."),
    ),
    "forced_each": _probability_field(
        gettext_lazy("Forced response on a choice: probability of being told to give each option"),
        gettext_lazy("The same for every option; the respondent answers truthfully otherwise."),
    ),
    "statement_p": _probability_field(
        gettext_lazy("Warner: probability that the statement is shown as asked, not mirrored (p)"),
        gettext_lazy("Not 1/2, e.g. 3/4. Empty: the standard design at this ε."),
    ),
    "sensitive_p": _probability_field(
        gettext_lazy("Unrelated question: probability of answering the sensitive question (p)"),
        gettext_lazy("Otherwise the browser answers an innocuous question at random. Empty: the standard design."),
    ),
    "innocuous_yes": _probability_field(
        gettext_lazy("Innocuous question: share answering “yes” (π; crosswise: its prevalence p)"),
        gettext_lazy("Unrelated question on yes / no, and the crosswise model. Not 1/2 for the crosswise model."),
    ),
}


def design_fields() -> dict[str, forms.Field]:
    """Fresh copies of :data:`DESIGN_FIELDS` for one form instance."""
    return {name: copy.deepcopy(field) for name, field in DESIGN_FIELDS.items()}


#: Which builder fields are each design's parameters (frozen with its randomization).
DESIGN_KNOBS: dict[str, set[str]] = {
    "forced-response": {"forced_yes", "forced_no", "forced_each"},
    "unrelated-question": {"sensitive_p", "innocuous_yes"},
    "warner": {"statement_p"},
    "crosswise": {"innocuous_yes"},
}


def design_field_mechanisms() -> dict[str, set[str]]:
    """Each design field and the designs whose parameter it is, in :data:`DESIGN_FIELDS` order."""
    return {field: {name for name, knobs in DESIGN_KNOBS.items() if field in knobs} for field in DESIGN_FIELDS}


def is_design(name: str) -> bool:
    return name in DESIGNS


def is_direct(name: str) -> bool:
    return name in NOT_RANDOMIZED


def _given(data: dict[str, Any], field: str) -> Fraction | None:
    text = (data.get(field) or "").strip()
    if not text:
        return None
    try:
        return fraction(text, field)
    except ValueError:
        raise KindError(field, _("Give a probability strictly between 0 and 1, e.g. 1/6 or 0.25.")) from None


def _literature_params(name: str, k: int, data: dict[str, Any]) -> dict[str, Any] | None:
    """The design's parameters from the fields given (None: none given, take the standard design)."""
    yes_no = k == 2
    if name == "forced-response":
        if yes_no:
            yes, no = _given(data, "forced_yes"), _given(data, "forced_no")
            if yes is None and no is None:
                return None
            if yes is None or no is None:
                raise KindError("forced_no", _("Give both p_yes and p_no, or neither."))
            forced = [yes, no]
        else:
            each = _given(data, "forced_each")
            if each is None:
                return None
            forced = [each] * k
        if sum(forced) >= 1:
            raise KindError("forced_yes", _("The forced answers must leave some chance of answering truthfully."))
        return {"forced": [str(p) for p in forced]}
    if name == "unrelated-question":
        p, innocuous = _given(data, "sensitive_p"), _given(data, "innocuous_yes") if yes_no else None
        if p is None and innocuous is None:
            return None
        params: dict[str, Any] = {"pi": [str(innocuous), str(1 - innocuous)]} if innocuous is not None else {}
        return params | ({"p": str(p)} if p is not None else {})
    field = "statement_p" if name == "warner" else "innocuous_yes"
    p = _given(data, field)
    if p is None:
        return None
    if p == Fraction(1, 2):
        raise KindError(field, _("At 1/2 no report would tell “yes” from “no”: choose another value."))
    return {"p": str(p)}


def design_form_params(name: str, k: int, data: dict[str, Any]) -> dict[str, Any]:
    """A design's (or a direct question's) parameters from the builder's data; restates
    ``data["epsilon"]`` where they fix it. Raise KindError for a field that does not fit."""
    if is_direct(name):
        if k > MAX_DIRECT_OPTIONS:
            raise KindError(
                "mechanism",
                _("A question asked directly may have at most %(max)s options.") % {"max": MAX_DIRECT_OPTIONS},
            )
        data["epsilon"] = math.inf
        return {}
    if name in TWO_OPTIONS and k != 2:
        raise KindError("mechanism", _("This design is for yes / no questions (two options)."))
    params = _literature_params(name, k, data) or {}
    field = sorted(DESIGN_KNOBS[name])[0]
    try:
        if "p" in params or "forced" in params:  # the parameters fix epsilon; else the standard choice at it
            data["epsilon"] = design_epsilon(name, k, **params)
        built: dict[str, Any] = DESIGNS[name](k=k, epsilon=data["epsilon"], **params).params()  # type: ignore[call-arg]
    except ValueError as error:
        raise KindError(field, str(error)) from None
    return built


def design_initial(question: Any) -> dict[str, Any]:
    """The design fields of a saved question (empty where it uses none)."""
    params = question.mechanism_params
    values = dict.fromkeys(DESIGN_FIELDS, "")
    name = question.mechanism
    if name == "forced-response" and "forced" in params:
        if question.k == 2:
            values["forced_yes"], values["forced_no"] = params["forced"]
        else:
            values["forced_each"] = params["forced"][0]
    elif name == "unrelated-question":
        values["sensitive_p"] = params.get("p", "")
        if question.k == 2 and params.get("pi"):
            values["innocuous_yes"] = params["pi"][0]
    elif name == "warner":
        values["statement_p"] = params.get("p", "")
    elif name == "crosswise":
        values["innocuous_yes"] = params.get("p", "")
    return values


def percent_text(value: Any) -> str:
    """An exact probability as a percentage with two decimals ("16.67 %"; Korean "16.67%")."""
    return percent(float(Fraction(value)), 2)


def instruction(spec: dict[str, Any], options: list[str]) -> str:
    """What a respondent would read on paper for the design in ``spec`` (empty for any other
    mechanism); the browser plays the randomizing device."""
    name, k = spec.get("mechanism", ""), len(options)
    if name == "forced-response":
        total = sum(spec["forced"]) + spec["truth"]
        if k == 2:
            return _(
                "Forced response: your browser rolls a die for you. With chance %(yes)s it sends “%(first)s”, "
                "with chance %(no)s “%(second)s”, whatever your answer; otherwise (chance %(truth)s) it sends "
                "your true answer. Nobody can tell which happened."
            ) % {
                "yes": percent_text(Fraction(spec["forced"][0], total)),
                "no": percent_text(Fraction(spec["forced"][1], total)),
                "truth": percent_text(Fraction(spec["truth"], total)),
                "first": options[0],
                "second": options[1],
            }
        return _(
            "Forced response: your browser rolls a die for you. With chance %(truth)s it sends your true answer; "
            "otherwise it sends an option the die chose, whatever your answer. Nobody can tell which happened."
        ) % {"truth": percent_text(Fraction(spec["truth"], total))}
    if name == "unrelated-question":
        asked, innocuous = spec["sensitive"]
        return _(
            "Unrelated question: with chance %(p)s your browser sends your answer to this question; otherwise "
            "it sends the answer to an unrelated, harmless question it draws at random for you. Nobody can tell "
            "which question was answered."
        ) % {"p": percent_text(Fraction(asked, asked + innocuous))}
    if name == "warner":
        direct, mirrored = spec["p"]
        return _(
            "Warner's mirrored statement: with chance %(p)s your browser asks this question as written; "
            "otherwise it asks its opposite (“it is not true that …”). It sends only whether you agreed, as "
            "the answer that amounts to, so nobody can tell which statement you saw."
        ) % {"p": percent_text(Fraction(direct, direct + mirrored))}
    if name == "crosswise":
        yes, no = spec["p"]
        return _(
            "Crosswise model: your browser draws a harmless question at random for you whose answer is “yes” "
            "with chance %(p)s. It sends only whether your two answers are the same (both “yes” or both "
            "“no”) or different, never your answer itself."
        ) % {"p": percent_text(Fraction(yes, yes + no))}
    return ""


def direct_note() -> str:
    """What the answer page says beside a question asked directly."""
    return _(
        "Asked directly: this answer is not randomized. It is stored exactly as you give it, and results show "
        "it only for groups of at least %(n)s people."
    ) % {"n": SMALL_GROUP}


def regression_channel(mechanism: Any) -> Any:
    """The channel M[v, y] of a randomized mechanism whose report is one option (k-RR, every design),
    which :func:`ldp.regression.fit_regression` and :mod:`ldp.weighting` take; None for any other
    (bit vectors, sketches, numbers) and for a question asked directly."""
    if is_direct(mechanism.name) or not isinstance(mechanism, OneOptionReport):
        return None
    return mechanism
