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

from ldp.advisor import recommend
from ldp.privacy import EPSILON_MAX, EPSILON_MIN
from ldp.registry import randomized
from surveys.models import Question, Survey, asked_jointly

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


@dataclass(frozen=True)
class Split:
    """The plan's epsilon per planned unit, and whether it fits the total."""

    total: float | None
    epsilons: dict[Any, float]
    fixed: float
    feasible: bool
    per_weight: float | None = None

    @property
    def spent(self) -> float:
        return self.fixed + sum(self.epsilons.values())


def floor4(value: float) -> float:
    """``value`` rounded down to four decimals (a hair of slack for values like 0.5 that are exact)."""
    return math.floor(value * 10_000 * (1 + 1e-12)) / 10_000


def split(total: float | None, units: Iterable[Unit]) -> Split:
    """Each planned unit's share of what the fixed units leave of ``total``.

    >>> split(5.0, [Unit(1), Unit(2), Unit(3, fixed=1.0), Unit(4, weight=2.0)]).epsilons
    {1: 1.0, 2: 1.0, 4: 2.0}
    """
    units = list(units)
    fixed = sum(u.fixed for u in units if u.fixed is not None)
    planned = [u for u in units if u.fixed is None]
    if total is None:
        epsilons = {u.key: min(max(UNPLANNED_EPSILON * u.weight, EPSILON_MIN), EPSILON_MAX) for u in planned}
        return Split(None, epsilons, fixed, True)
    if not planned:
        return Split(total, {}, fixed, fixed <= total + 1e-9)
    per_weight = (total - fixed) / sum(u.weight for u in planned)
    epsilons = {u.key: min(max(floor4(per_weight * u.weight), EPSILON_MIN), EPSILON_MAX) for u in planned}
    feasible = all(per_weight * u.weight >= EPSILON_MIN - 1e-12 for u in planned)
    return Split(total, epsilons, fixed, feasible, per_weight)


def frozen_ids(survey: Survey, questions: list[Question]) -> set[int]:
    """The questions whose randomization reports froze (:meth:`~surveys.models.Question.randomization_frozen`).

    A first draft has none, so it costs no query.
    """
    if survey.status == Survey.Status.DRAFT and survey.series_id is None:
        return set()
    return {q.pk for q in questions if q.planned_epsilon and q.randomization_frozen()}


def units_of(survey: Survey, questions: list[Question], frozen: set[int] | None = None) -> list[Unit]:
    """The units of these questions: a declared pair's two questions are none (the pair is one)."""
    members = asked_jointly(questions)
    frozen = frozen_ids(survey, questions) if frozen is None else frozen
    return [
        Unit(q.pk, q.budget_weight, None if q.planned_epsilon and q.pk not in frozen else q.epsilon)
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
    units = [(replace or {}).get(u.key, u) for u in units_of(survey, questions)]
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


def replan(survey: Survey) -> list[Question]:
    """Give every planned question its share of the survey's plan; returns those that changed.

    Each changed question goes through its form again at the new epsilon (:func:`rebuilt`), so
    "Automatic" picks its mechanism for it and every kind's parameters follow. Call inside a
    transaction; in an open survey, each changed question gets a new randomization.
    """
    from surveys import actions

    questions = list(survey.questions.all())
    if not any(q.planned_epsilon for q in questions):
        return []
    plan = split(survey.epsilon_cap, units_of(survey, questions))
    changed = []
    for question in questions:
        epsilon = plan.epsilons.get(question.pk)
        if epsilon is None or math.isclose(epsilon, question.epsilon, rel_tol=1e-12):
            continue
        cleaned = rebuilt(question, epsilon)
        if cleaned is None:
            continue
        actions.assign_randomization(question, cleaned)
        changed.append(question)
    return changed


def form_data(question: Question, epsilon: float) -> dict[str, Any]:
    """The question's builder form data at ``epsilon`` (its other fields as stored)."""
    from surveys.forms.question import initial_from_question

    data = {name: value for name, value in initial_from_question(question).items() if value is not None}
    return {**data, "epsilon": epsilon, "budget": "fixed", "weight": question.budget_weight}


def rebuilt(question: Question, epsilon: float, n: int | None = None) -> dict[str, Any] | None:
    """The question's form cleaned at ``epsilon`` (and n expected respondents), without budget checks;
    None if it does not validate there (a knob that no longer fits)."""
    from surveys.forms.question import QuestionForm

    form = QuestionForm(
        form_data(question, epsilon), survey=question.survey, question=question, respondents=n, check_budget=False
    )
    if not form.is_valid():
        return None
    return {**form.cleaned_data, "planned_epsilon": question.planned_epsilon}


@dataclass
class Row:
    """One question in the budget panel."""

    question: Question
    epsilon: float
    planned: bool
    frozen: bool
    cost: Any
    paired: bool = False

    @property
    def relative_half_width(self) -> float | None:
        return None if self.cost is None else self.cost.relative_half_width

    @property
    def unreadable(self) -> bool:
        return self.relative_half_width is not None and self.relative_half_width > UNREADABLE


@dataclass
class Panel:
    """What the budget panel shows: the plan, each question's expected error, and the audience advice."""

    survey: Survey
    total: float | None
    respondents: int
    plan: Split
    rows: list[Row]
    advice: list[str] = field(default_factory=list)
    headline: str = ""

    @property
    def all_unreadable(self) -> bool:
        """Whether every estimate is expected wider than :data:`UNREADABLE` (opening asks to confirm)."""
        rows = [row for row in self.rows if row.cost is not None]
        return bool(rows) and all(row.unreadable for row in rows)

    @property
    def over(self) -> bool:
        return not self.plan.feasible

    @property
    def likelier(self) -> str:
        """What the total means for a respondent: e^total, in words (:func:`ratio`)."""
        return ratio(self.plan.spent) if self.total is not None else ""

    @property
    def above_default(self) -> float | None:
        """The default total (:data:`surveys.forms.survey.DEFAULT_EPSILON_CAP`) if the plan spends more; else None."""
        from surveys.forms.survey import DEFAULT_EPSILON_CAP

        return DEFAULT_EPSILON_CAP if self.plan.spent > DEFAULT_EPSILON_CAP + 1e-9 else None


def panel(survey: Survey, total: float | None | str = "", respondents: int | None = None) -> Panel:
    """The budget panel at the survey's total and expected respondents, or at a draft of them."""
    from surveys.kinds import cost_of

    n = respondents or survey.expected_respondents
    questions = list(survey.questions.all())
    frozen = frozen_ids(survey, questions)
    plan_total = survey.epsilon_cap if total == "" else total
    plan = split(plan_total, units_of(survey, questions, frozen))  # type: ignore[arg-type]
    members = asked_jointly(questions)
    recurring = survey.series_id is not None
    rows = []
    for question in questions:
        if question.pk in members or not randomized(question.mechanism):
            continue
        epsilon = plan.epsilons.get(question.pk, question.epsilon)
        cost: Any = None
        if math.isclose(epsilon, question.epsilon, rel_tol=1e-12):
            try:
                cost = cost_of(question.build_mechanism(), n, question.unit, "", recurring)
            except ValueError:
                cost = None
        else:
            cleaned = rebuilt(question, epsilon, n)
            cost = cleaned["cost"] if cleaned else None
        planned = question.planned_epsilon and question.pk not in frozen
        rows.append(Row(question, epsilon, planned, question.pk in frozen, cost))
    result = Panel(survey, plan_total, n, plan, rows)  # type: ignore[arg-type]
    audience(result)
    return result


def yes_no_half_width(epsilon: float, n: int) -> float:
    """The narrowest expected 95 % half-width of a yes/no question's share at epsilon and n (:mod:`ldp.advisor`)."""
    epsilon = min(max(epsilon, EPSILON_MIN), EPSILON_MAX)
    return recommend(2, epsilon, max(n, 1)).best.half_width


def total_for(target: float, count: int, n: int) -> float | None:
    """The smallest total (to 0.1) that brings each of ``count`` yes/no questions to ``target``; None
    if even ε = 10 each would not."""
    if yes_no_half_width(EPSILON_MAX, n) > target:
        return None
    low, high = EPSILON_MIN, EPSILON_MAX
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (middle, high) if yes_no_half_width(middle, n) > target else (low, middle)
    return math.ceil(high * count * 10) / 10


def audience(result: Panel) -> None:
    """Fill the panel's headline and advice: what the expected respondents let the organizer learn, and
    concrete changes that would reach :data:`TARGET` (fewer options, yes/no, fewer questions, a higher
    total with its meaning)."""
    from django.utils.translation import gettext as _
    from django.utils.translation import ngettext

    from surveys.templatetags.murmur import count, epsilon, points

    n, total = result.respondents, result.total
    if total is None:
        return
    one = yes_no_half_width(total, n)
    five = yes_no_half_width(total / 5, n)
    result.headline = ngettext(
        "With %(n)s respondent and a total of ε = %(total)s you can learn one yes/no answer to ± %(one)s points, "
        "or five to ± %(five)s points each.",
        "With %(n)s respondents and a total of ε = %(total)s you can learn one yes/no answer to ± %(one)s points, "
        "or five to ± %(five)s points each.",
        n,
    ) % {"n": count(n), "total": epsilon(total), "one": points(one, 0), "five": points(five, 0)}
    wide = [row for row in result.rows if row.cost is not None and row.cost.relative_half_width > TARGET]
    if not wide:
        return
    advice = result.advice
    for row in sorted(wide, key=lambda row: -float(row.cost.relative_half_width))[:2]:
        k = getattr(row.cost, "k", 0) if not row.cost.is_mean else 0
        if k > 2:
            advice.append(
                _(
                    "“%(text)s”: ± %(now)s points over %(k)s options; as a yes/no question it would be "
                    "± %(yes_no)s, or offer fewer options."
                )
                % {
                    "text": row.question.text,
                    "now": points(row.cost.relative_half_width, 0),
                    "k": k,
                    "yes_no": points(yes_no_half_width(row.epsilon, n), 0),
                }
            )
    units = len(result.rows)
    # Aim at ± 10 points where these respondents can reach it at all, else at ± 25.
    target = TARGET if yes_no_half_width(EPSILON_MAX, n) <= TARGET else UNREADABLE
    values = {"target": points(target, 0)}
    fit = max((m for m in range(1, units + 1) if yes_no_half_width(total / m, n) <= target), default=0)
    if 0 < fit < units:
        advice.append(
            ngettext(
                "Ask fewer questions: with %(fit)s question, each yes/no answer is known within ± %(target)s points.",
                "Ask fewer questions: with %(fit)s questions, each yes/no answer is known within ± %(target)s points.",
                fit,
            )
            % {**values, "fit": fit}
        )
    needed = total_for(target, max(units, 1), n)
    if needed is not None and needed > total:
        advice.append(
            _(
                "Raise the total to ε = %(needed)s to know each yes/no answer within ± %(target)s points. It "
                "means one respondent's reports could be up to %(ratio)s times likelier under one set of answers "
                "than under another: tell respondents."
            )
            % {**values, "needed": epsilon(needed), "ratio": ratio(needed)}
        )
    respondents = max((row.cost.respondents_needed for row in wide), default=0)
    if respondents > n:
        advice.append(
            _("Or invite more people: about %(needed)s respondents bring every question to ± 10 points.")
            % {"needed": count(respondents)}
        )


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
