"""The builder's question-sampling form: "Ask each respondent m of these q questions" (:mod:`surveys.sampling`).

A question may join the pool when a fake answer's report can be corrected for
(:attr:`surveys.kinds.base.Summary.samples`: one option of k, randomized on its own) and nothing
else depends on whether it was asked: not a matrix row or a declared pair's question, not asked
directly, no condition of its own and no condition testing it (a sampled-away answer would decide
another question's path, and "asked" would no longer mean "the condition held"). Its epsilon must
be planned, so that the plan gives every pooled question the same epsilon'.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from surveys.forms.branching import paired
from surveys.kinds import summary_for
from surveys.logic import conditions_of
from surveys.models import Question
from surveys.sampling import MIN_POOL


def poolable(question: Question, questions: list[Question]) -> bool:
    """Whether the question may be one of the sampled pool (module docstring), its epsilon aside."""
    conditions = conditions_of(questions)
    sources = {condition.question for condition in conditions.values()}
    return (
        question.matrix_id is None
        and question.pair_first_id is None
        and not paired(question, questions)
        and summary_for(question.kind, question.mechanism).samples
        and question.pk not in conditions
        and question.pk not in sources
    )


class SamplingForm(forms.Form):
    questions = forms.MultipleChoiceField(
        label=gettext_lazy("Questions in the pool"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
    size = forms.IntegerField(
        label=gettext_lazy("Questions each respondent answers (m)"),
        min_value=1,
        required=False,
    )

    def __init__(self, *args: Any, questions: list[Question], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.all_questions = questions
        self.eligible = [q for q in questions if poolable(q, questions)]
        number = {q.pk: index for index, q in enumerate(questions, start=1)}
        field = self.fields["questions"]
        assert isinstance(field, forms.MultipleChoiceField)
        field.choices = [(str(q.pk), f"{number[q.pk]}. {q.text}") for q in self.eligible]
        self.fields["size"].widget.attrs.update(
            {"id": "id_sampling_size", "inputmode": "numeric", "aria-describedby": "id_sampling_size-hint"}
        )
        self.fields["questions"].widget.attrs["id"] = "id_sampling_questions"

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        chosen = [int(pk) for pk in data.get("questions") or []]
        size = data.get("size")
        data["pool"] = None
        if not chosen:
            return data  # no pool: every respondent is asked every question
        by_id = {q.pk: q for q in self.eligible}
        fixed = [by_id[pk] for pk in chosen if not by_id[pk].planned_epsilon]
        if fixed:
            raise forms.ValidationError(
                _(
                    "“%(text)s” has an ε of its own: sampled questions take the ε the plan gives them. "
                    "Let the plan set its ε first."
                )
                % {"text": fixed[0].text}
            )
        if len(chosen) < MIN_POOL:
            raise forms.ValidationError(_("Choose at least two questions for the pool."))
        if size is None or not 1 <= size < len(chosen):
            raise forms.ValidationError(
                _("Each respondent answers from 1 to %(most)s of the %(count)s questions in the pool.")
                % {"most": len(chosen) - 1, "count": len(chosen)}
            )
        order = [q.pk for q in self.all_questions]
        data["pool"] = (sorted(chosen, key=order.index), size)
        return data
