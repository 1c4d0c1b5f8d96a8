"""A survey's privacy budget as a plan: the organizer states the total and Murmur splits it.

The organizer gives the survey's total epsilon (its cap, :data:`surveys.forms.survey.DEFAULT_EPSILON_CAP`
by default) and the respondents they expect. Every *planned* question (``Question.planned_epsilon``)
gets its weight's share of what the *fixed* questions leave:

    epsilon_q = (total - sum of fixed epsilons) * w_q / sum of planned weights,

rounded down to four decimals, so that the questions never spend more than the total. By sequential
composition (Dwork and Roth 2014, ref. 1, theorem 3.16) a respondent who answers every question then
spends at most the total. Units are counted honestly: each matrix row is randomized on its own and
is a unit of its own; a declared pair is one unit and its two questions none (they are answered in
the pair's one report). A question whose randomization is frozen by reports keeps its epsilon, as a
fixed one does.

A survey that asks each respondent m of a pool of q questions (:mod:`surveys.sampling`) spends the
epsilon of only the m it really answers (the others send fake reports: :mod:`ldp.sampling`), so each
pooled question counts for a share m / q of its epsilon, and all get the same epsilon' (their weights
are not used): the pool spends m epsilon', and

    epsilon' = (total - sum of fixed epsilons) / (sum of other planned weights + m).

Adding, editing or deleting a question re-plans (:func:`replan`): the other planned questions get their
new share, and "Automatic" picks their mechanism again for it. The panel (:func:`panel`) shows each
question's expected 95 % half-width at the plan's epsilon and the expected respondents, from the same
cost machinery as the question form (:mod:`surveys.costs`), and what the audience will see
(:func:`audience`).

References
----------
1. C. Dwork, A. Roth. "The Algorithmic Foundations of Differential Privacy." Foundations and Trends
   in Theoretical Computer Science 9(3-4), 2014.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ldp.privacy import EPSILON_MAX, EPSILON_MIN
from ldp.registry import randomized
from surveys.models import Question, Survey, asked_jointly
from surveys.sampling import pool_of

#: A planned question's epsilon when its survey states no total (the builder's old default).
UNPLANNED_EPSILON = 1.0
WEIGHT_MIN = 0.1
WEIGHT_MAX = 10.0
#: Above this expected half-width (points of a share, or of a mean's range) an estimate says little:
#: opening a survey whose every estimate is this wide asks for a confirmation.
UNREADABLE = 0.25
#: The half-width the audience advice aims at.
TARGET = 0.10
#: The key of a question that is not saved yet, in :func:`preview`.
NEW = "new"


@dataclass(frozen=True)
class Unit:
    """One thing that spends epsilon: a question, a matrix row or a declared pair."""

    key: Any
    weight: float = 1.0
    fixed: float | None = None
    """Its own epsilon when fixed (by the organizer, or by reports); None: planned."""
    share: float = 1.0
    """The share of respondents whose answer it randomizes: m / q for a sampled question, else 1."""


@dataclass(frozen=True)
class Split:
    """The plan's epsilon per planned unit, and whether it fits the total."""

    total: float | None
    epsilons: dict[Any, float]
    fixed: float
    feasible: bool
    per_weight: float | None = None
    shares: dict[Any, float] = field(default_factory=dict)
    """The planned units sampled at a share below 1 (:attr:`Unit.share`)."""

    @property
    def spent(self) -> float:
        return self.fixed + sum(e * self.shares.get(key, 1.0) for key, e in self.epsilons.items())


def floor4(value: float) -> float:
    """``value`` rounded down to four decimals (a hair of slack for values like 0.5 that are exact)."""
    return math.floor(value * 10_000 * (1 + 1e-12)) / 10_000


def split(total: float | None, units: Iterable[Unit]) -> Split:
    """Each planned unit's share of what the fixed units leave of ``total``.

    >>> split(5.0, [Unit(1), Unit(2), Unit(3, fixed=1.0), Unit(4, weight=2.0)]).epsilons
    {1: 1.0, 2: 1.0, 4: 2.0}
    """
    units = list(units)
    fixed = sum(u.fixed * u.share for u in units if u.fixed is not None)
    planned = [u for u in units if u.fixed is None]
    shares = {u.key: u.share for u in planned if u.share != 1.0}
    if total is None:
        epsilons = {u.key: min(max(UNPLANNED_EPSILON * u.weight, EPSILON_MIN), EPSILON_MAX) for u in planned}
        return Split(None, epsilons, fixed, True, shares=shares)
    if not planned:
        return Split(total, {}, fixed, fixed <= total + 1e-9)
    per_weight = (total - fixed) / sum(u.weight * u.share for u in planned)
    epsilons = {u.key: min(max(floor4(per_weight * u.weight), EPSILON_MIN), EPSILON_MAX) for u in planned}
    feasible = all(per_weight * u.weight >= EPSILON_MIN - 1e-12 for u in planned)
    return Split(total, epsilons, fixed, feasible, per_weight, shares)


def frozen_ids(survey: Survey, questions: list[Question]) -> set[int]:
    """The questions whose randomization reports froze (:meth:`~surveys.models.Question.randomization_frozen`).

    A first draft has none, so it costs no query.
    """
    if survey.status == Survey.Status.DRAFT and survey.series_id is None:
        return set()
    return {q.pk for q in questions if q.planned_epsilon and q.randomization_frozen()}


def units_of(survey: Survey, questions: list[Question], frozen: set[int] | None = None) -> list[Unit]:
    """The units of these questions: a declared pair's two questions are none (the pair is one); a
    sampled question counts for m / q of its epsilon, at weight 1 (module docstring)."""
    members = asked_jointly(questions)
    frozen = frozen_ids(survey, questions) if frozen is None else frozen
    pool = pool_of(survey, [q.pk for q in questions])
    return [
        Unit(
            q.pk,
            1.0 if pool is not None and q.pk in pool else q.budget_weight,
            None if q.planned_epsilon and q.pk not in frozen else q.epsilon,
            pool.rate if pool is not None and q.pk in pool else 1.0,
        )
        for q in questions
        if q.pk not in members and randomized(q.mechanism)  # asked directly: no epsilon to plan
    ]


def preview(
    survey: Survey,
    *,
    replace: dict[Any, Unit] | None = None,
    add: Iterable[Unit] = (),
    without: Iterable[Any] = (),
    total: float | None | str = "",
) -> Split:
    """The plan of the survey with some units replaced, added or left out (a form's draft), at its total
    or at ``total`` (the panel's draft; "" keeps the survey's)."""
    questions = list(survey.questions.all())
    gone = set(without)
    questions = [q for q in questions if q.pk not in gone]
    replaced = replace or {}
    units = [
        Unit(u.key, 1.0, replaced[u.key].fixed, u.share)
        if u.key in replaced and u.share != 1.0
        else replaced.get(u.key, u)
        for u in units_of(survey, questions)
    ]
    return split(survey.epsilon_cap if total == "" else total, [*units, *add])  # type: ignore[arg-type]


def planned_for(survey: Survey, question: Question | None, weight: float, count: int = 1) -> Split:
    """The plan with ``question`` (None: ``count`` new units) planned at ``weight``.

    A question asked in a declared pair is planned as if the pair were deleted (it then gets its own
    epsilon back), as the form's budget check always did.
    """
    if question is None:
        return preview(survey, add=[Unit((NEW, i), weight) for i in range(count)])
    joint = asked_jointly(list(survey.questions.all()))
    without = [joint[question.pk][0].pk] if question.pk in joint else []
    return preview(survey, replace={question.pk: Unit(question.pk, weight)}, without=without)


def ratio(total: float) -> str:
    """e^total in words a reader can take in: "148", "about 22,000", "more than a million"."""
    from django.utils.translation import gettext as _

    from surveys.templatetags.murmur import count

    value = math.exp(total)
    if value < 1000:
        return count(round(value))
    if value < 1e6:
        return _("about %(value)s") % {"value": count(int(round(value, -3)))}
    return _("more than a million")
