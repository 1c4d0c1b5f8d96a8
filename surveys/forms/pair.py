"""Two choice questions declared a pair, asked jointly under one epsilon."""

from __future__ import annotations

import copy
from typing import Any, cast

from django import forms
from django.utils.translation import gettext_lazy as _

from surveys.forms.matrix import planned_block
from surveys.forms.question import QuestionForm, explain_automatic
from surveys.kinds import kind_of, summary_of
from surveys.models import MAX_OPTIONS, MIN_OPTIONS, Question, Survey, asked_jointly


class PairForm(forms.Form):
    """Declare two choice questions a pair asked jointly: one randomized answer over their k1 k2
    combinations, with one epsilon (and mechanism) that replaces the two questions' own budgets.

    Either question may be single choice, yes/no, a rating's shares or a number's histogram, not yet
    answered, not a matrix item and not in another pair; k1 k2 is at most MAX_OPTIONS.
    """

    first = forms.TypedChoiceField(label=_("First question (rows)"), coerce=int)
    second = forms.TypedChoiceField(label=_("Second question (columns)"), coerce=int)
    budget = copy.deepcopy(QuestionForm.base_fields["budget"])
    epsilon = copy.deepcopy(QuestionForm.base_fields["epsilon"])
    epsilon.label = _("Privacy budget ε of the pair")
    epsilon.help_text = _("Spent once for both answers, instead of the two questions' own ε.")
    mechanism = QuestionForm.base_fields["mechanism"]

    def __init__(self, *args: Any, survey: Survey, **kwargs: Any) -> None:
        self.survey = survey
        kwargs.setdefault("auto_id", "id_pair_%s")  # beside the question form's fields of the same names
        super().__init__(*args, **kwargs)
        explain_automatic(self, survey)
        self.eligible = pairable(survey)
        choices = [("", "—"), *((q.pk, q.text) for q in self.eligible)]
        for name in ("first", "second"):
            cast(forms.TypedChoiceField, self.fields[name]).choices = choices

    def clean(self) -> dict[str, Any]:
        super().clean()  # Form.clean returns self.cleaned_data; the stubs allow None
        data = self.cleaned_data
        if self.errors:
            return data
        by_id = {q.pk: q for q in self.eligible}
        first, second = data["first_question"], data["second_question"] = by_id[data["first"]], by_id[data["second"]]
        if first.pk == second.pk:
            self.add_error("second", _("Choose two different questions."))
            return data
        cells = first.k * second.k
        if cells > MAX_OPTIONS:
            self.add_error(
                "second",
                _("A pair has at most %(high)s combinations of answers; these two have %(count)s.")
                % {"high": MAX_OPTIONS, "count": cells},
            )
            return data
        # The pair is one unit of the survey's plan; its two questions then spend none.
        planned = planned_block(self, data, 1)
        if planned is None:
            return data
        # The mechanism over the k1 k2 combinations is checked as a choice question's would be.
        probe = QuestionForm(
            {
                "text": "pair",
                "kind": Question.Kind.SINGLE_CHOICE,
                "options_text": "\n".join(str(i) for i in range(cells)),
                "epsilon": data["epsilon"],
                "mechanism": data["mechanism"],
                "budget": "fixed",
            },
            survey=self.survey,
            check_budget=False,
        )
        if not probe.is_valid() and "built" not in getattr(probe, "cleaned_data", {}):
            for field, errors in probe.errors.items():
                for error in errors:
                    self.add_error(field if field in self.fields else None, error)
            return data
        data["pair"] = {
            **probe.cleaned_data,
            "text": f"{first.text} × {second.text}"[:500],
            "planned_epsilon": planned,
            "budget_weight": 1.0,
        }
        return data


def pairable(survey: Survey) -> list[Question]:
    """The survey's questions that may be declared a pair: choice reports over their options, no
    reports yet, not matrix items, not pairs and not already in one."""
    questions = list(survey.questions.all())
    members = asked_jointly(questions)
    return [
        q
        for q in questions
        if not kind_of(q.kind).made_elsewhere
        and q.pk not in members
        and summary_of(q.mechanism).choice_reports
        and q.k >= MIN_OPTIONS
        and not q.has_reports()
    ]
