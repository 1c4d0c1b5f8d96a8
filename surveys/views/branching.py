"""The builder's display logic: a question's condition and option order, and the preview of every path.

The panel (``templates/surveys/_branching.html``) is drawn on the survey's builder page by the
``branching_panel`` tag (:mod:`surveys.templatetags.branching`); its forms post here.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from ldp.branching import Condition, among_asked, paths
from surveys.access import get_question_for_owner
from surveys.forms.branching import LogicForm, branchable
from surveys.kinds import kind_of
from surveys.logic import conditions_of
from surveys.models import Question, Survey


@login_required
@require_POST
def question_logic(request: HttpRequest, survey_id: int, question_id: int) -> HttpResponse:
    """Save when a question is shown and whether its options are shuffled (never its randomization)."""
    question = get_question_for_owner(request.user, survey_id, question_id)
    questions = list(question.survey.questions.all())
    form = LogicForm(request.POST, question=question, questions=questions)
    if form.is_valid() and branchable(question, questions):
        question.logic = form.logic()
        question.save(update_fields=["logic"])
        messages.success(request, _("Saved when question “%(text)s” is shown.") % {"text": question.text})
    else:
        errors = [str(e) for e in form.non_field_errors()] or [_("That condition cannot be saved.")]
        messages.error(request, " ".join(errors))
    return redirect(f"{question.survey.get_absolute_url()}#logic-{question.pk}")


def describe(condition: Condition, numbers: dict[int, int], by_id: dict[int, Question]) -> str:
    """A condition in words: "question 3 is “Yes” or “No”" / "question 2 lies from 1 to 4"."""
    source = by_id[condition.question]
    if condition.operator == "in":
        labels = " / ".join(f"“{source.options[i]}”" for i in condition.values if i < len(source.options))
        return _("question %(number)s is %(answers)s") % {"number": numbers[source.pk], "answers": labels}
    return _("question %(number)s lies from %(low)s to %(high)s") % {
        "number": numbers[source.pk],
        "low": f"{condition.low:g}",
        "high": f"{condition.high:g}",
    }


def panel_context(survey: Survey) -> dict[str, Any]:
    """What the builder's logic panel shows: each question's form, and every path through the survey."""
    questions = list(survey.questions.all())
    numbers = {q.pk: index for index, q in enumerate(questions, start=1)}
    by_id = {q.pk: q for q in questions}
    conditions = conditions_of(questions)
    rows = []
    for question in questions:
        if not branchable(question, questions):
            continue
        rules = question.logic or {}
        condition = conditions.get(question.pk)
        initial: dict[str, Any] = {
            "shuffle_options": rules.get("shuffle_options", False),
            "keep_last": rules.get("keep_last", False),
            "block": rules.get("block", ""),
        }
        if condition is not None:
            initial["source"] = condition.question
            if condition.operator == "in":
                initial["options"] = [f"{condition.question}:{i}" for i in condition.values]
            else:
                initial |= {"low": condition.low, "high": condition.high}
        form = LogicForm(initial=initial, question=question, questions=questions)
        rows.append(
            {
                "question": question,
                "number": numbers[question.pk],
                "form": form,
                "condition": describe(condition, numbers, by_id) if condition else "",
                "ranged": any("between" in kind_of(q.kind).condition_operators for q in form.sources),
            }
        )
    order = [q.pk for q in questions]
    previews = []
    if conditions:
        for path in paths(order, conditions):
            previews.append(
                {
                    "numbers": [numbers[q] for q in path.shown],
                    "holding": [describe(conditions[q], numbers, by_id) for q in path.holding],
                    "skipped": [numbers[q] for q in order if q not in path.shown],
                }
            )
    return {"survey": survey, "logic_rows": rows, "paths": previews, "question_count": len(questions)}


def among_asked_view(estimate: Any, first: Question, second: Question) -> dict[str, Any] | None:
    """The cross-tab page's "among those asked" figures when ``second`` is shown only for some options
    of ``first`` (:func:`ldp.branching.among_asked`): the share asked and the second question's shares
    among them, with 95 % bands. None when the second question has no such condition on the first."""
    condition = conditions_of([first, second]).get(second.pk)
    if condition is None or condition.question != first.pk or condition.operator != "in":
        return None
    rows = [i for i in condition.values if i < first.k]
    if not rows:
        return None
    found = among_asked(estimate, rows)
    if not found.asked > 0:
        return None
    shares = [
        {"label": label, "estimate": float(share), "low": float(low), "high": float(high)}
        for label, share, low, high in zip(second.options, found.shares, found.bands.low, found.bands.high, strict=True)
    ]
    return {
        "answers": [first.options[i] for i in rows],
        "asked": found.asked,
        "asked_band": found.asked_band,
        "shares": shares,
    }
