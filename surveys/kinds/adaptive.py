"""Two-phase (adaptive) designs of a single-choice question: the builder's fields, the re-tune, the pooled estimate.

An organizer may ask Murmur to re-tune a question after the first part of the survey's expected
respondents (:attr:`~surveys.models.Question.adaptive_percent`, 15 % by default). Once that many
reports are stored under the question's first version, a job (``retune``,
:mod:`surveys.responding.retune`) reads that version's *tally* alone and asks
:func:`ldp.adaptive.retune_from_tally` whether another design of :func:`ldp.adaptive.design_candidates`
(k-RR, subset selection of every size, OUE, OLH: each checked to be exactly epsilon-LDP by
tests/ldp/test_adaptive.py) is expected to err at least 5 % less for the respondents still to come.
If so, it becomes the question's next parameter version; respondents after the switch get its
spec with the page, and those whose page already carried the first version may still send it.

Privacy. The choice is a function of earlier respondents' randomized reports only, so it is
post-processing of their epsilon-LDP outputs; each respondent is randomized by one fixed
epsilon-LDP design, served with the page before their answer is read, at the question's epsilon.

Estimate. The versions' unbiased estimates are combined option by option by inverse variance
(:func:`ldp.adaptive.combine`, weights at the pooled Norm-Sub estimate) and made consistent as
"auto" does, with bands from the combination's variances (:func:`ldp.adaptive.combined_consistent`).

The kinds that offer it say so (:attr:`~surveys.kinds.base.QuestionKind.adapts`); nothing outside
this package asks which.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

import ldp
from ldp.adaptive import combine, combined_consistent, design_candidates, retune_from_tally
from ldp.advisor import Z_95
from ldp.estimates import FrequencyEstimate
from ldp.intervals import simultaneous_bands
from ldp.mechanisms import Mechanism
from ldp.simplex import project_onto_simplex
from surveys.kinds.base import Estimates, KindError, QuestionKind, Summary
from surveys.models import Question, Randomization

#: The builder's default share of the expected respondents in phase 1, and its bounds (%).
DEFAULT_PERCENT = 15
MIN_PERCENT, MAX_PERCENT = 5, 50
#: Phase 1 needs at least this many reports for its estimate to say anything about the shape.
MIN_PHASE_ONE = 30

ADAPTIVE_FIELD = forms.BooleanField(
    label=gettext_lazy("Re-tune the randomization after the first respondents"),
    required=False,
    help_text=gettext_lazy(
        "Murmur then re-chooses this question's mechanism once, from the first respondents' randomized "
        "reports alone, if another is expected to err at least 5 per cent less on the answers seen so far. Every "
        "respondent still gets one fixed randomization at the same ε, chosen before their answer is read. "
        "On most answers it keeps the design it started with."
    ),
)
PERCENT_FIELD = forms.IntegerField(
    label=gettext_lazy("Re-tune after this share of the expected respondents (%)"),
    required=False,
    initial=DEFAULT_PERCENT,
    min_value=MIN_PERCENT,
    max_value=MAX_PERCENT,
    help_text=gettext_lazy("In per cent of the survey's expected respondents: 15 unless you change it, 5 to 50."),
)


def adaptive_mechanisms() -> frozenset[str]:
    """The mechanisms a two-phase design starts from and may switch to (:func:`ldp.adaptive.design_candidates`)."""
    return frozenset(m.name for m in design_candidates(4, 1.0))


def clean_adaptive(kind: QuestionKind, data: dict[str, Any], expected: int, recurring: bool) -> int | None:
    """The per cent to store (None: one design throughout); KindError when the design cannot re-tune."""
    if not (kind.adapts and data.get("adaptive")):
        return None
    percent = data.get("adaptive_percent") or DEFAULT_PERCENT
    if recurring:
        raise KindError(
            "adaptive", _("A recurring survey keeps one randomization across its rounds, so it cannot re-tune.")
        )
    if data["mechanism"] not in adaptive_mechanisms():
        raise KindError(
            "adaptive",
            _("Re-tuning chooses among k-RR, subset selection, OUE and OLH: pick one of them, or Automatic."),
        )
    count = phase_one_size(percent, expected)
    if count < MIN_PHASE_ONE or count >= expected:
        raise KindError(
            "adaptive_percent",
            _(
                "With %(expected)s expected respondents, %(percent)s %% is %(count)s reports; re-tuning needs "
                "at least %(least)s. Raise the survey's expected respondents or this share."
            )
            % {"expected": expected, "percent": percent, "count": count, "least": MIN_PHASE_ONE},
        )
    return int(percent)


def phase_one_size(percent: int, expected: int) -> int:
    """Reports under the first version after which the question re-tunes: ceil(percent x expected / 100)."""
    return math.ceil(percent * expected / 100)


def pending(question: Question) -> bool:
    """Whether the question waits for its re-tune (it has a two-phase design not yet decided)."""
    return question.adaptive_percent is not None and question.retuned_after is None


def threshold(question: Question) -> int:
    assert question.adaptive_percent is not None
    return phase_one_size(question.adaptive_percent, question.survey.expected_respondents)


def next_design(randomization: Randomization, tally: ldp.Tally, expected: int) -> tuple[str, dict[str, Any]] | None:
    """The design for the respondents still to come, from the first version's tally alone; None: keep it.

    ``expected - n`` respondents are expected after the n phase-1 reports (at least n, when the survey
    has outrun its expectation).
    """
    mechanism = cast(Mechanism, randomization.build_mechanism())  # a choice mechanism (adaptive_mechanisms)
    design = retune_from_tally(mechanism, tally, max(expected - tally.n, tally.n))
    if (design.mechanism, dict(design.params)) == (mechanism.name, dict(mechanism.params())):
        return None
    return design.mechanism, dict(design.params)


def pooled_versions(versions: Sequence[Randomization]) -> list[Randomization]:
    """The versions estimated together, oldest first: a re-tuned version and the one it followed
    (empty when the question has no re-tuned version). ``versions`` are the question's, any order."""
    ordered = sorted(versions, key=lambda r: r.version)
    for i, randomization in enumerate(ordered):
        if randomization.retuned_after is not None and i > 0:
            return [ordered[i - 1], randomization]
    return []


def pooled_estimates(parts: Sequence[tuple[Any, ldp.Tally]], summary: Summary) -> Estimates:
    """Every version's reports as one estimate: (mechanism, tally) per version, those without reports
    skipped; one version with reports is ``summary``'s estimate of it alone.

    The unbiased shares are the per-option inverse-variance combination u = sum_i w_i u_i
    (:func:`ldp.adaptive.combine`), its covariance taken diagonal, Var(u_v) = (V f)_v / n with the
    combination's per-report variances V at f = Norm-Sub(u); the consistent shares and their bands
    are :func:`ldp.adaptive.combined_consistent`'s; the joint bands Šidák's over V; the expected
    half-width Z_95 sqrt(max_v (V 1/k)_v / n), as :func:`ldp.advisor.expected_half_width` for one version.
    """
    present = [(m, t) for m, t in parts if t.n]
    if not present:
        return Estimates(None, None, None)
    if len(present) == 1:
        return summary.estimates(*present[0])
    versions = [(m, m.estimate(t).proportions, t.n) for m, t in present]
    combination = combine(versions)
    u, n, v = combination.unbiased, combination.n, combination.unit_variances
    covariance = np.diag(np.maximum(v @ project_onto_simplex(u), 0.0) / n)
    even = np.full(u.size, 1.0 / u.size)
    return Estimates(
        unbiased=FrequencyEstimate(u, covariance, n),
        consistent=combined_consistent(combination),
        expected_half_width=Z_95 * float(np.sqrt(np.max(v @ even) / n)),
        joint=simultaneous_bands(v, u, n),
    )


def design_label(randomization: Randomization) -> str:
    """A version's design in words: its mechanism's label, with subset selection's size or OLH's range."""
    label = str(Question.MechanismName(randomization.mechanism).label)
    knobs = ", ".join(f"{name} = {value}" for name, value in sorted(randomization.params.items()))
    return f"{label} ({knobs})" if knobs else label


def change_note(first: Randomization, second: Randomization) -> str:
    """The results card's sentence: the design changed after N respondents, and to what."""
    return _(
        "The design changed after %(n)s respondents: from %(old)s (v%(v1)s) to %(new)s (v%(v2)s), chosen from "
        "their randomized reports alone. The estimate pools both versions' reports, each option weighted by "
        "the inverse of its variance; the raw counts are the newest version's."
    ) % {
        "n": second.retuned_after,
        "old": design_label(first),
        "v1": first.version,
        "new": design_label(second),
        "v2": second.version,
    }


def kept_note(question: Question) -> str:
    """The results card's sentence when the re-tune kept the design (empty: none was decided, or it changed)."""
    if question.retuned_after is None:
        return ""
    return _(
        "After %(n)s respondents Murmur checked, from their randomized reports alone, whether another design "
        "would err less for the rest; none would by 5 %%, so every respondent uses this one."
    ) % {"n": question.retuned_after}


def receipt_words(question: Question, randomization: Randomization) -> str:
    """What a respondent's receipt says about a two-phase question's version (empty: not two-phase)."""
    if question.adaptive_percent is None:
        return ""
    epsilon = f"{randomization.epsilon:g}"
    if randomization.retuned_after is not None:
        return _(
            "You got version %(version)s of this question's randomization, chosen after %(n)s earlier "
            "respondents from their randomized reports only, before your answer was read. Every version is "
            "ε-LDP at the same ε = %(epsilon)s."
        ) % {"version": randomization.version, "n": randomization.retuned_after, "epsilon": epsilon}
    return _(
        "You got version %(version)s of this question's randomization, fixed before your answer was read. "
        "After the first respondents Murmur may switch later respondents to another design, chosen from "
        "randomized reports only; every version is ε-LDP at the same ε = %(epsilon)s."
    ) % {"version": randomization.version, "epsilon": epsilon}


def transparency_words(question: Question, versions: Sequence[Randomization]) -> str:
    """What the transparency page says of a two-phase question (empty: not two-phase)."""
    if question.adaptive_percent is None:
        return ""
    epsilon = f"{question.epsilon:g}"
    rule = _(
        "Two-phase design: after the first %(percent)s %% of the expected respondents (%(count)s reports), "
        "Murmur may switch later respondents to another design, chosen once from those earlier respondents' "
        "randomized reports only. Each respondent's randomization comes with the answer page, fixed before "
        "their answer is read, and every version is ε-LDP at the same ε = %(epsilon)s; the estimate combines "
        "the versions' reports."
    ) % {"percent": question.adaptive_percent, "count": threshold(question), "epsilon": epsilon}
    retuned = next((r for r in versions if r.retuned_after is not None), None)
    if retuned is not None:
        status = _("After %(n)s respondents it switched to version %(version)s (%(design)s).") % {
            "n": retuned.retuned_after,
            "version": retuned.version,
            "design": design_label(retuned),
        }
    elif question.retuned_after is not None:
        status = _("After %(n)s respondents it kept its design: no other was expected to err 5 %% less.") % {
            "n": question.retuned_after
        }
    else:
        status = _("It has not been re-tuned yet.")
    return f"{rule} {status}"


def builder_words(question: Question, expected: int) -> str:
    """What the builder's question card says of a two-phase design (empty: not two-phase)."""
    if question.adaptive_percent is None:
        return ""
    if question.retuned_after is not None:
        return _("Re-tuned after %(n)s reports; it now uses %(design)s.") % {
            "n": question.retuned_after,
            "design": str(Question.MechanismName(question.mechanism).label),
        }
    return _("Re-tunes once after %(count)s reports (%(percent)s %% of %(expected)s expected respondents).") % {
        "count": phase_one_size(question.adaptive_percent, expected),
        "percent": question.adaptive_percent,
        "expected": expected,
    }
