"""The builder's display-logic form: when a question is shown, and whether its options are shuffled.

A condition tests one earlier question's answer with an operator its kind supports
(:attr:`surveys.kinds.base.QuestionKind.condition_operators`): "in" (one of the options ticked) or
"between" (a value range). It is stored on the question (``Question.logic["show_if"]``, the JSON of
:class:`ldp.branching.Condition`) and changes nothing of the randomization: every question sends a
report on every path (:mod:`ldp.branching`).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from ldp.branching import MAX_CONDITIONS, parse_condition
from ldp.registry import randomized
from surveys.kinds import kind_of
from surveys.models import Question
from surveys.sampling import pool_of


def condition_sources(question: Question, questions: list[Question]) -> list[Question]:
    """The earlier questions whose answer may decide whether ``question`` is shown: plain questions
    (not matrix rows, not asked in a declared pair) of a kind with condition operators."""
    earlier = questions[: [q.pk for q in questions].index(question.pk)]
    pooled = sampled_ids(question, questions)
    return [
        q
        for q in earlier
        if kind_of(q.kind).condition_operators
        and q.matrix_id is None
        and not paired(q, questions)
        and q.pk not in pooled
    ]


def sampled_ids(question: Question, questions: list[Question]) -> tuple[int, ...]:
    """The survey's sampled questions (:mod:`surveys.sampling`): none takes or decides a condition, so
    that being asked depends on the draw alone, or on a condition alone."""
    pool = pool_of(question.survey, [q.pk for q in questions])
    return pool.questions if pool is not None else ()


def paired(question: Question, questions: list[Question]) -> bool:
    return any(question.pk in (q.pair_first_id, q.pair_second_id) for q in questions)


def branchable(question: Question, questions: list[Question]) -> bool:
    """Whether a condition may be put on the question (a plain question, not a matrix row or a pair's,
    and randomized: a question asked directly sends its answer only when answered, so hiding it on
    some paths would let its presence tell the path)."""
    return (
        question.matrix_id is None
        and question.pair_first_id is None
        and not paired(question, questions)
        and randomized(question.mechanism)
        and question.pk not in sampled_ids(question, questions)
    )


class LogicForm(forms.Form):
    source = forms.TypedChoiceField(
        label=gettext_lazy("Show this question"), coerce=int, empty_value=None, required=False
    )
    options = forms.MultipleChoiceField(
        label=gettext_lazy("…when the answer is one of"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
    low = forms.FloatField(label=gettext_lazy("…or lies from"), required=False)
    high = forms.FloatField(label=gettext_lazy("to"), required=False)
    shuffle_options = forms.BooleanField(
        label=gettext_lazy("Show the options in a random order for each respondent"), required=False
    )
    keep_last = forms.BooleanField(label=gettext_lazy("Keep the last option last"), required=False)
    block = forms.CharField(
        label=gettext_lazy("Random-order block"),
        help_text=gettext_lazy(
            "Neighbouring questions with the same block name are shown in a random order for each respondent."
        ),
        max_length=20,
        required=False,
    )

    def __init__(self, *args: Any, question: Question, questions: list[Question], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.question = question
        self.questions = questions
        self.sources = condition_sources(question, questions)
        number = {q.pk: index for index, q in enumerate(questions, start=1)}
        source_field = self.fields["source"]
        assert isinstance(source_field, forms.TypedChoiceField)
        source_field.choices = [("", _("Always"))] + [
            (
                q.pk,
                _("When question %(number)s (“%(text)s”) is answered so:") % {"number": number[q.pk], "text": q.text},
            )
            for q in self.sources
        ]
        options_field = self.fields["options"]
        assert isinstance(options_field, forms.MultipleChoiceField)
        options_field.choices = [
            (f"{q.pk}:{index}", _("Question %(number)s: %(option)s") % {"number": number[q.pk], "option": option})
            for q in self.sources
            if "in" in kind_of(q.kind).condition_operators
            for index, option in enumerate(q.options)
        ]
        if not kind_of(question.kind).shuffles_options:
            del self.fields["shuffle_options"], self.fields["keep_last"]
        for name in self.fields:
            self.fields[name].widget.attrs.setdefault("id", f"id_logic_{question.pk}_{name}")
        self.fields["block"].widget.attrs["aria-describedby"] = f"id_logic_{question.pk}_block-hint"

    def clean(self) -> dict[str, Any]:
        super().clean()  # Form.clean returns self.cleaned_data; the stubs allow None
        data = self.cleaned_data
        source_id = data.get("source")
        chosen = data.get("options") or []
        low, high = data.get("low"), data.get("high")
        data["show_if"] = None
        if source_id is None:
            if chosen or low is not None or high is not None:
                raise forms.ValidationError(_("Choose the question the condition tests, or leave the answers empty."))
            return data
        source = next((q for q in self.sources if q.pk == source_id), None)
        if source is None:
            raise forms.ValidationError(_("A condition can only test an earlier question."))
        operators = kind_of(source.kind).condition_operators
        if chosen:
            picked = [value.split(":") for value in chosen]
            if any(int(pk) != source.pk for pk, _index in picked):
                raise forms.ValidationError(_("Tick answers of the question the condition tests only."))
            condition: dict[str, Any] = {"question": source.pk, "in": sorted(int(index) for _pk, index in picked)}
        elif low is not None and high is not None and "between" in operators:
            condition = {"question": source.pk, "between": [low, high]}
        elif "between" in operators:
            raise forms.ValidationError(_("Give the range the answer must lie in, from and to, or tick answers."))
        else:
            raise forms.ValidationError(_("Tick the answers that show this question."))
        try:
            parse_condition(condition)
        except ValueError:
            raise forms.ValidationError(_("The range must go from a lower to a higher value.")) from None
        others = sum(1 for q in self.questions if q.pk != self.question.pk and (q.logic or {}).get("show_if"))
        if others >= MAX_CONDITIONS:
            raise forms.ValidationError(
                _("A survey has at most %(count)s conditions, so that every path can be previewed.")
                % {"count": MAX_CONDITIONS}
            )
        data["show_if"] = condition
        return data

    def logic(self) -> dict[str, Any]:
        """The question's new ``logic`` from the cleaned data."""
        data = self.cleaned_data
        logic: dict[str, Any] = {}
        if data["show_if"]:
            logic["show_if"] = data["show_if"]
        if data.get("shuffle_options"):
            logic["shuffle_options"] = True
            logic["keep_last"] = bool(data.get("keep_last"))
        if data.get("block", "").strip():
            logic["block"] = data["block"].strip()
        return logic
