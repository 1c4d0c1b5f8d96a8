"""The builder's budget panel: each question's epsilon under the survey's plan
(:mod:`surveys.budget`) and its expected 95 % half-width at the expected respondents, with advice
for the audience (what they will see, and what would make it readable).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ldp.advisor import expected_half_width, recommend
from ldp.privacy import EPSILON_MAX, EPSILON_MIN
from ldp.registry import randomized
from ldp.sampling import expected_sampled_half_width
from surveys.budget import TARGET, UNREADABLE, Split, Unit, frozen_ids, ratio, split, units_of
from surveys.forms.question import form_data, rebuilt
from surveys.forms.survey import DEFAULT_EPSILON_CAP
from surveys.models import Question, Survey, asked_jointly
from surveys.sampling import MIN_POOL, Pool, pool_of


@dataclass
class Row:
    """One question in the budget panel."""

    question: Question
    epsilon: float
    planned: bool
    frozen: bool
    cost: Any
    paired: bool = False
    sampled_half_width: float | None = None
    """A sampled question's expected half-width, asked of a share m / q and corrected for the fakes."""
    split_half_width: float | None = None
    """The same question's without sampling: the pool's epsilon split over all q, everyone asked."""
    split_epsilon: float | None = None

    @property
    def relative_half_width(self) -> float | None:
        if self.sampled_half_width is not None:
            return self.sampled_half_width
        return None if self.cost is None else self.cost.relative_half_width

    @property
    def sampling_wins(self) -> bool:
        """Whether sampling gives this question a narrower band than splitting its epsilon over the pool."""
        return (
            self.sampled_half_width is not None
            and self.split_half_width is not None
            and self.sampled_half_width < self.split_half_width
        )

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
    pool: Pool | None = None
    questions: list[Question] = field(default_factory=list)
    """All the survey's questions (a sampling offer needs them: :func:`sampling_offer`)."""
    frozen: set[int] = field(default_factory=set)

    @property
    def all_unreadable(self) -> bool:
        """Whether every estimate is expected wider than :data:`UNREADABLE` (opening asks to confirm)."""
        rows = [row for row in self.rows if row.relative_half_width is not None]
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
    pool = pool_of(survey, [q.pk for q in questions])
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
        row = Row(question, epsilon, planned, question.pk in frozen, cost)
        if pool is not None and question.pk in pool and cost is not None and hasattr(cost, "mechanism"):
            compare_sampling(row, pool, n)
        rows.append(row)
    result = Panel(survey, plan_total, n, plan, rows, pool=pool, questions=questions, frozen=frozen)  # type: ignore[arg-type]
    audience(result)
    return result


def compare_sampling(row: Row, pool: Pool, n: int) -> None:
    """Fill a pooled row's expected 95 % half-widths with sampling (its epsilon', asked of m / q,
    corrected for fakes: :func:`ldp.sampling.expected_sampled_half_width`) and without (the m epsilon'
    the pool spends split over its q questions, everyone asked; "Automatic" picks for that epsilon)."""
    row.sampled_half_width = expected_sampled_half_width(row.cost.mechanism, n, pool.rate)
    split = row.epsilon * pool.m / pool.q
    row.split_epsilon = split
    if split < EPSILON_MIN:
        return
    cleaned = rebuilt(row.question, split, n)
    if cleaned and cleaned.get("cost") is not None and hasattr(cleaned["cost"], "mechanism"):
        row.split_half_width = expected_half_width(cleaned["cost"].mechanism, n)


@dataclass(frozen=True)
class SamplingOffer:
    """Question sampling the audience advice suggests: ask each respondent m of the pooled questions."""

    numbers: tuple[int, ...]
    """The pooled questions' numbers in the survey (1-based)."""
    m: int
    now: float
    """The pool's widest expected 95 % half-width with everyone asked everything."""
    sampled: float
    """The same with each respondent asked m of them."""

    @property
    def q(self) -> int:
        return len(self.numbers)


def sampling_offer(result: Panel) -> SamplingOffer | None:
    """The question sampling that narrows the expected band of every question it pools, if any.

    The pool: every question that may be sampled (:func:`surveys.forms.sampling.poolable`) and whose
    epsilon the plan sets. For each m from 1 to q - 1 the total is split again as if they were pooled
    (one epsilon' each, counted m / q of it: :mod:`surveys.budget`), "Automatic" picks each one's
    mechanism for epsilon', and its band comes from :func:`ldp.sampling.expected_sampled_half_width`.
    The m whose widest band is narrowest is offered only if it narrows every pooled question's band
    and leaves every other planned question at least its epsilon. That is computed, not assumed: at a
    low epsilon per question a k-RR share's variance grows like 1 / epsilon^2, and one question at q
    times the epsilon from a share 1 / q of respondents wins; at a high epsilon asking everyone wins
    (docs/experiments.md, "Question sampling"). None when the survey samples already, states no total,
    or has reports (its sampling can no longer change).
    """
    from surveys.forms.sampling import poolable
    from surveys.models import Report

    if result.pool is not None or result.total is None:
        return None
    rows = [
        row
        for row in result.rows
        if row.planned
        and row.relative_half_width is not None
        and hasattr(row.cost, "mechanism")
        and poolable(row.question, result.questions)
    ]
    if len(rows) < MIN_POOL or Report.objects.filter(survey=result.survey).exists():
        return None
    q, pooled = len(rows), {row.question.pk for row in rows}
    now = max(float(row.relative_half_width or 0) for row in rows)
    units = units_of(result.survey, result.questions, result.frozen)
    number = {question.pk: index for index, question in enumerate(result.questions, start=1)}
    widths: dict[Any, float | None] = {}
    best: SamplingOffer | None = None
    for m in range(1, q):
        plan = split(result.total, [Unit(u.key, 1.0, None, m / q) if u.key in pooled else u for u in units])
        others = [key for key in plan.epsilons if key not in pooled]
        if not plan.feasible or any(plan.epsilons[key] < result.plan.epsilons.get(key, 0) - 1e-9 for key in others):
            continue
        sampled = [
            sampled_half_width(row.question, plan.epsilons[row.question.pk], result.respondents, m / q, widths)
            for row in rows
        ]
        if any(
            width is None or width >= float(row.relative_half_width or 0)
            for width, row in zip(sampled, rows, strict=True)
        ):
            continue
        widest = max(width for width in sampled if width is not None)
        if best is None or widest < best.sampled:
            best = SamplingOffer(tuple(sorted(number[key] for key in pooled)), m, now, widest)
    return best


def sampled_half_width(
    question: Question, epsilon: float, n: int, rate: float, seen: dict[Any, float | None]
) -> float | None:
    """The question's expected 95 % half-width asked of a share ``rate`` at ``epsilon`` ("Automatic"
    choosing again); None if its form does not validate there or the chosen mechanism cannot be sampled.
    Questions of the same shape (their form data but the text and option names) share one computation
    in ``seen``."""
    from surveys.kinds import summary_for

    data = form_data(question, epsilon)
    shape = (
        repr(sorted((name, value) for name, value in data.items() if name not in ("text", "options_text"))),
        len(question.options),
        rate,
        n,
    )
    if shape not in seen:
        cleaned = rebuilt(question, epsilon, n) or {}
        mechanism = getattr(cleaned.get("cost"), "mechanism", None)
        samples = mechanism is not None and summary_for(question.kind, cleaned["mechanism"]).samples
        seen[shape] = expected_sampled_half_width(mechanism, n, rate) if mechanism is not None and samples else None
    return seen[shape]


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
    concrete changes that would reach :data:`TARGET` (fewer options, yes/no, fewer questions, question
    sampling where it narrows the bands (:func:`sampling_offer`), a higher total with its meaning)."""
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
    wide = [row for row in result.rows if row.relative_half_width is not None and row.relative_half_width > TARGET]
    if not wide:
        return
    advice = result.advice
    for row in sorted(wide, key=lambda row: -float(row.relative_half_width or 0))[:2]:
        k = getattr(row.cost, "k", 0) if not row.cost.is_mean else 0
        if k > 2:
            advice.append(
                _(
                    "“%(text)s”: ± %(now)s points over %(k)s options; as a yes/no question it would be "
                    "± %(yes_no)s, or offer fewer options."
                )
                % {
                    "text": row.question.text,
                    "now": points(row.relative_half_width or 0, 0),
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
    offer = sampling_offer(result)
    if offer is not None and round(100 * offer.sampled) < round(100 * offer.now):
        advice.append(
            _(
                "Ask each respondent %(m)s of questions %(numbers)s, drawn at random (“Ask each respondent some "
                "of the questions”): each of them would be known within ± %(sampled)s points instead of ± %(now)s."
            )
            % {
                "m": offer.m,
                "numbers": ", ".join(str(number) for number in offer.numbers),
                "sampled": points(offer.sampled, 0),
                "now": points(offer.now, 0),
            }
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
