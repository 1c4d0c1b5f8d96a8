"""Multi-step writes, each one named and transactional (Zulip's ``do_*`` convention)."""

from __future__ import annotations

import math
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from ldp.memo import memo_flip
from surveys import accounts, budget
from surveys.forms.question import rebuilt
from surveys.languages import copy_languages, pair_options, translation_problems
from surveys.logic import remapped
from surveys.models import (
    Matrix,
    Question,
    Randomization,
    Report,
    Survey,
    TallyCell,
    asked_jointly,
    spent_epsilon,
)
from surveys.responding import invitations
from surveys.results import stamps
from surveys.sampling import QuestionSample, pool_of


class LifecycleError(Exception):
    """A survey cannot make the requested transition; the message says why."""


@transaction.atomic
def do_add_question(survey: Survey, cleaned: dict[str, Any], replan: bool = True) -> Question:
    """Append a question; re-plan the survey's budget (:func:`replan_budget`) unless told not to."""
    last = survey.questions.aggregate(last=Max("position"))["last"]
    question = Question(survey=survey, position=0 if last is None else last + 1)
    _assign(question, cleaned)
    question.save()
    if survey.status == Survey.Status.OPEN:
        sync_randomization(question)
    if replan:
        replan_budget(survey)
    return question


@transaction.atomic
def do_update_question(question: Question, cleaned: dict[str, Any]) -> Question:
    """Store the question's form and re-plan the survey's budget."""
    _assign(question, cleaned)
    question.save(update_fields=["text", "kind", "options", *RANDOMIZATION_FIELDS, *KIND_FIELDS])
    joint = asked_jointly(list(question.survey.questions.all()))
    if question.pk in joint:  # its answers go into its pair's report: relabel the pair's options
        pair = joint[question.pk][0]
        pair.options = pair_options(pair.pair_first, pair.pair_second)
        pair.save(update_fields=["options"])
    elif question.survey.status == Survey.Status.OPEN:
        sync_randomization(question)
    replan_budget(question.survey)
    return question


#: The fields :func:`assign_randomization` sets: a question's epsilon, mechanism and place in the plan.
RANDOMIZATION_FIELDS = (
    "epsilon",
    "mechanism",
    "mechanism_params",
    "mechanism_chosen_automatically",
    "planned_epsilon",
    "budget_weight",
)


def assign_randomization(question: Question, cleaned: dict[str, Any]) -> None:
    """Store a re-planned question's epsilon and what follows from it (:func:`replan_budget`):
    its mechanism and parameters, and in an open survey a new randomization, unless a declared pair
    randomizes it."""
    _assign(question, cleaned)
    question.save(update_fields=[*RANDOMIZATION_FIELDS, *KIND_FIELDS])
    if question.survey.status == Survey.Status.OPEN and question.pk not in asked_jointly(
        list(question.survey.questions.all())
    ):
        sync_randomization(question)


@transaction.atomic
def do_save_settings(form: Any) -> Survey:
    """Save a survey's settings form and re-plan its budget at the (maybe new) total."""
    survey: Survey = form.save()
    replan_budget(survey)
    return survey


@transaction.atomic
def do_declare_pair(first: Question, second: Question, cleaned: dict[str, Any]) -> Question:
    """Ask two choice questions jointly: a question of kind "pair" randomizes both answers as one.

    The pair comes right after the later of the two. Their own randomizations in force (without
    reports: the form checks) are retired, so that no report of theirs alone can be taken meanwhile.
    """
    survey = first.survey
    later = max(first.position, second.position)
    for question in survey.questions.filter(position__gt=later).order_by("-position"):
        question.position += 1
        question.save(update_fields=["position"])
    pair = Question(survey=survey, position=later + 1, pair_first=first, pair_second=second)
    _assign(pair, {**cleaned, "kind": Question.Kind.PAIR, "options": pair_options(first, second)})
    pair.save()
    Randomization.objects.filter(question__in=[first, second], retired=False).update(retired=True)
    if survey.status == Survey.Status.OPEN:
        sync_randomization(pair)
    replan_budget(survey)
    return pair


@transaction.atomic
def do_add_matrix(survey: Survey, title: str, items: list[dict[str, Any]]) -> Matrix:
    """A matrix block and its items, appended to the survey as consecutive questions."""
    matrix = Matrix.objects.create(survey=survey, title=title)
    for cleaned in items:
        question = do_add_question(survey, cleaned, replan=False)
        question.matrix = matrix
        question.save(update_fields=["matrix"])
    replan_budget(survey)
    return matrix


@transaction.atomic
def do_update_matrix(matrix: Matrix, title: str, options: list[str]) -> None:
    """Retitle a matrix and reword its shared options on every item (their number, each item's k, stays)."""
    matrix.title = title
    matrix.save(update_fields=["title"])
    for item in matrix.items.all():
        item.options = options
        item.save(update_fields=["options"])


@transaction.atomic
def do_delete_matrix(matrix: Matrix) -> None:
    """Delete a matrix and its items, unless one of them has reports (then nothing is deleted)."""
    if Report.objects.filter(survey_id=matrix.survey_id, question__matrix=matrix).exists():
        raise LifecycleError(_("This matrix has reports; it cannot be deleted. Close the survey instead."))
    survey = matrix.survey
    matrix.delete()
    _renumber(survey)
    replan_budget(survey)


def _assign(question: Question, cleaned: dict[str, Any]) -> None:
    question.text = cleaned["text"]
    question.kind = cleaned["kind"]
    question.options = cleaned["options"]
    question.epsilon = cleaned["epsilon"]
    question.mechanism = cleaned["mechanism"]
    question.mechanism_params = cleaned["mechanism_params"]
    question.mechanism_chosen_automatically = cleaned.get("mechanism_chosen_automatically", False)
    question.planned_epsilon = cleaned.get("planned_epsilon", False)
    question.budget_weight = cleaned.get("budget_weight") or 1.0
    for name in KIND_FIELDS:
        if name in cleaned:
            setattr(question, name, cleaned[name] if cleaned[name] is not None else KIND_FIELD_EMPTY.get(name))


#: Fields of number, rating and choice questions (:mod:`surveys.kinds`); what an absent value is stored as.
KIND_FIELDS = (
    "prefer_not_to_say",
    "adaptive_percent",
    "bins",
    "range_low",
    "range_high",
    "whole_numbers",
    "unit",
    "scale",
    "low_label",
    "high_label",
    "rating_estimate",
    "candidates",
)
KIND_FIELD_EMPTY = {
    "prefer_not_to_say": False,
    "candidates": [],
    "whole_numbers": True,
    "unit": "",
    "scale": "",
    "low_label": "",
    "high_label": "",
    "rating_estimate": "shares",
}


def do_set_candidates(question: Question, candidates: list[str]) -> None:
    """Store a short-answer question's (normalized) candidate answers; the randomization is untouched."""
    question.candidates = candidates
    question.save(update_fields=["candidates"])


@transaction.atomic
def do_delete_question(question: Question) -> list[Question]:
    """Delete a question without reports; returns the questions the budget plan then changed."""
    if question.has_reports():
        raise LifecycleError(_("This question has reports; it cannot be deleted. Close the survey instead."))
    survey = question.survey
    question.delete()
    Matrix.objects.filter(survey=survey, items__isnull=True).delete()  # a matrix left without items
    _renumber(survey)
    return replan_budget(survey)


@transaction.atomic
def do_move_question(question: Question, direction: str, whole_matrix: bool = False) -> None:
    """Swap the question with its neighbour above ("up") or below ("down").

    A matrix's items move among themselves; with ``whole_matrix`` the question's whole matrix moves
    past its neighbour (a question, or another matrix), so a matrix's items stay together.
    """
    questions = list(question.survey.questions.select_for_update())
    if question.matrix_id is not None and not whole_matrix:
        units = [[q] for q in questions if q.matrix_id == question.matrix_id]
    else:
        units = _units(questions)
    index = next(i for i, unit in enumerate(units) if any(q.pk == question.pk for q in unit))
    other = index - 1 if direction == "up" else index + 1
    if direction not in ("up", "down") or not 0 <= other < len(units):
        return
    units[index], units[other] = units[other], units[index]
    moved = iter(q for unit in units for q in unit)
    in_place = {q.pk for unit in units for q in unit}
    _renumber(question.survey, [next(moved) if q.pk in in_place else q for q in questions])


def _units(questions: list[Question]) -> list[list[Question]]:
    """The survey's order as units: a question alone, or a matrix's consecutive items together."""
    units: list[list[Question]] = []
    for question in questions:
        if question.matrix_id is not None and units and units[-1][0].matrix_id == question.matrix_id:
            units[-1].append(question)
        else:
            units.append([question])
    return units


def _renumber(survey: Survey, questions: list[Question] | None = None) -> None:
    for position, question in enumerate(questions if questions is not None else survey.questions.all()):
        if question.position != position:
            question.position = position
            question.save(update_fields=["position"])


def sync_randomization(question: Question) -> Randomization:
    """The randomization for the question's current parameters, creating a new version if needed.

    Call inside a transaction. A new version retires the one in force, which must have no reports:
    it is locked ``FOR UPDATE`` first, which waits for every submission in flight to it (they hold
    ``FOR KEY SHARE``, see :data:`surveys.responding.writes.SUBMIT_SQL`), and the reports are
    counted only then, so a report accepted a moment ago refuses the edit instead of being stranded
    under a retired version.
    """
    current = question.current_randomization()
    if current is not None:
        return current
    in_force = list(Randomization.objects.select_for_update().filter(question=question, retired=False))
    if Report.objects.filter(randomization__in=in_force).exists():
        raise LifecycleError(
            _("“%(text)s” has received reports, so its randomization can no longer change. Reload the page.")
            % {"text": question.text}
        )
    Randomization.objects.filter(pk__in=[r.pk for r in in_force]).update(retired=True)
    last = question.randomizations.aggregate(last=Max("version"))["last"] or 0
    mechanism, k, epsilon, params = question.randomization_key()
    recurring = question.survey.series_id is not None
    return Randomization.objects.create(
        question=question,
        version=last + 1,
        mechanism=mechanism,
        k=k,
        epsilon=epsilon,
        params=params,
        memo_gamma=memo_flip(mechanism) if recurring else None,
    )


#: Fields a copy of a survey does not take over: identity, lifecycle and timestamps.
SURVEY_FIELDS_NOT_COPIED = {"id", "owner", "slug", "status", "created_at", "opened_at", "series", "round_number"}


def copy_survey(survey: Survey, *, same_series: bool, **fields: Any) -> Survey:
    """A new survey with the survey's settings and questions, and none of its reports or invitations.

    Every concrete field but :data:`SURVEY_FIELDS_NOT_COPIED` is copied, so question kinds added
    later are copied too, then ``fields`` override. With ``same_series`` the questions keep their id
    in the series (a next round, :mod:`surveys.series.rounds`); otherwise they start their own. The copy
    gets a new share link; its questions get their randomizations when it opens. Call inside a
    transaction.
    """
    copy = Survey(owner=survey.owner)
    for field in Survey._meta.concrete_fields:
        if field.name not in SURVEY_FIELDS_NOT_COPIED:
            setattr(copy, field.attname, getattr(survey, field.attname))
    for name, value in fields.items():
        setattr(copy, name, value)
    copy.save()
    originals = list(survey.questions.values_list("pk", "matrix_id"))
    copies = copy_questions(survey, copy, (lambda question: question.memo_key) if same_series else (lambda q: ""))
    pairs = list(zip(originals, copies, strict=True))
    copy_languages(
        survey,
        copy,
        {old: new.pk for (old, _), new in pairs},
        {m: new.matrix_id for (_, m), new in pairs if m and new.matrix_id},
    )
    return copy


def copy_questions(source: Survey, target: Survey, series_question: Any) -> list[Question]:
    """Copy the source's questions into the target (a duplicate, or a recurring survey's next round).

    Matrices are copied with them, so a copy's items belong to the copy's matrix, and a declared pair
    points at the copies of its two questions; ``series_question(question)`` is the copy's id in a
    series ("" outside one).
    """
    questions = []
    matrices: dict[int, Matrix] = {}
    originals = list(source.questions.select_related("matrix"))
    pairs = [(q.pair_first_id, q.pair_second_id) for q in originals]
    old_ids = [q.pk for q in originals]
    for question in originals:
        key = series_question(question)
        if question.matrix is not None:
            matrix = question.matrix
            if matrix.pk not in matrices:
                matrices[matrix.pk] = Matrix.objects.create(survey=target, title=matrix.title)
            question.matrix = matrices[matrix.pk]
        question.pk = None
        question._state.adding = True
        question.survey = target
        question.series_question = key
        question.pair_first = question.pair_second = None
        question.retuned_after = None  # a two-phase design re-tunes afresh on the copy's own reports
        questions.append(question)
    Question.objects.bulk_create(questions)
    stamps.changed(target.pk)  # bulk_create sends no signal
    # A declared pair points at the copies of its two questions.
    new_of = dict(zip(old_ids, questions, strict=True))
    for question, (first, second) in zip(questions, pairs, strict=True):
        if first is not None:
            assert second is not None  # a declared pair has both of its questions
            question.pair_first, question.pair_second = new_of[first], new_of[second]
            question.save(update_fields=["pair_first", "pair_second"])
    # A condition names the copy of the question it tests (surveys.logic).
    new_ids = {old: new.pk for old, new in new_of.items()}
    for question in questions:
        if question.logic:
            question.logic = remapped(question.logic, new_ids)
            question.save(update_fields=["logic"])
    # So does the question sampling's pool (surveys.sampling).
    pool = pool_of(source, old_ids)
    if pool is not None:
        QuestionSample.objects.create(survey=target, size=pool.m, questions=[new_ids[q] for q in pool.questions])
    return questions


@transaction.atomic
def do_duplicate_survey(survey: Survey) -> Survey:
    """A new draft with the survey's settings and questions, outside any series (:func:`copy_survey`)."""
    title = _("Copy of %(title)s") % {"title": survey.title}
    return copy_survey(survey, same_series=False, title=title[: Survey._meta.get_field("title").max_length])


def open_problems(survey: Survey) -> list[str]:
    """Why the survey cannot be opened as it stands (empty when it can)."""
    problems = []
    if not accounts.may_publish(survey.owner):
        problems.append(
            _("Confirm your email address: open the link we mailed you (“Your surveys” can send it again).")
        )
    questions = list(survey.questions.all())
    if not questions:
        problems.append(_("Add at least one question."))
    for question in questions:
        try:
            question.build_mechanism()
        except ValueError as error:
            problems.append(_("Question “%(text)s”: %(error)s") % {"text": question.text, "error": error})
    total = spent_epsilon(questions, pool_of(survey, [q.pk for q in questions]))
    if survey.epsilon_cap is not None and total > survey.epsilon_cap + 1e-9:
        problems.append(
            _("The questions spend ε = %(total)s, over the cap of %(cap)s.")
            % {"total": f"{total:g}", "cap": f"{survey.epsilon_cap:g}"}
        )
    if survey.closes_at is not None and survey.closes_at <= timezone.now():
        problems.append(_("The close date is in the past."))
    if (
        survey.series_id is not None
        and Survey.objects.filter(series_id=survey.series_id, round_number__gt=survey.round_number or 0).exists()
    ):
        problems.append(_("A later round of this survey exists: only the latest round can be open."))
    problems.extend(translation_problems(survey))
    return problems


@transaction.atomic
def do_open_survey(survey: Survey) -> None:
    """Draft or closed -> open, once the survey is valid; freezes a randomization per question."""
    if survey.status == Survey.Status.OPEN:
        return
    problems = open_problems(survey)
    if problems:
        raise LifecycleError(" ".join(problems))
    questions = list(survey.questions.all())
    members = asked_jointly(questions)
    for question in questions:
        if question.pk not in members:
            sync_randomization(question)
    survey.status = Survey.Status.OPEN
    survey.opened_at = survey.opened_at or timezone.now()
    survey.save(update_fields=["status", "opened_at"])


@transaction.atomic
def do_close_survey(survey: Survey) -> None:
    if survey.status != Survey.Status.OPEN:
        raise LifecycleError(_("Only an open survey can be closed."))
    survey.status = Survey.Status.CLOSED
    survey.save(update_fields=["status"])
    invitations.forget_addresses(survey)


@transaction.atomic
def do_delete_survey(survey: Survey) -> None:
    """Delete a survey with everything it holds. Its reports and tally cells go first, one
    ``DELETE ... WHERE survey_id = %s`` each (one partition on PostgreSQL); the cascade that
    follows then finds none, where Django's collector would read every report to check the keys
    that restrict deleting a question or randomization."""
    Report.objects.filter(survey=survey).delete()
    TallyCell.objects.filter(survey=survey).delete()
    survey.delete()


def replan_budget(survey: Survey) -> list[Question]:
    """Give every planned question its share of the survey's plan; returns those that changed.

    Each changed question goes through its form again at the new epsilon (:func:`rebuilt`), so
    "Automatic" picks its mechanism for it and every kind's parameters follow. Call inside a
    transaction; in an open survey, each changed question gets a new randomization.
    """
    questions = list(survey.questions.all())
    if not any(q.planned_epsilon for q in questions):
        return []
    plan = budget.split(survey.epsilon_cap, budget.units_of(survey, questions))
    changed = []
    for question in questions:
        epsilon = plan.epsilons.get(question.pk)
        if epsilon is None or math.isclose(epsilon, question.epsilon, rel_tol=1e-12):
            continue
        cleaned = rebuilt(question, epsilon)
        if cleaned is None:
            continue
        assign_randomization(question, cleaned)
        changed.append(question)
    return changed
