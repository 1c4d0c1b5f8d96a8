"""A matrix block: its items and shared options, added at once and reworded later."""

from __future__ import annotations

import copy
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from surveys import budget as plans
from surveys.forms import interpolate_lazy
from surveys.forms.question import QuestionForm, explain_automatic, over_total
from surveys.kinds import KindError, clean_option_lines
from surveys.models import Matrix, Question, Report, Survey

#: Most rows of one matrix.
MAX_MATRIX_ITEMS = 30


class MatrixForm(forms.Form):
    """A matrix block: a title, its items (rows) and their shared options, one epsilon per item.

    Every item becomes its own choice question with the same epsilon and mechanism (each is then
    edited on its own, like any question); the block spends the items' epsilons in sum, and that
    sum must fit under the survey's cap.
    """

    title = forms.CharField(label=_("Title"), max_length=500)
    items_text = forms.CharField(
        label=_("Items (rows)"),
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=interpolate_lazy(_("One item per line, 2 to %(high)s items."), {"high": MAX_MATRIX_ITEMS}),
    )
    options_text = QuestionForm.base_fields["options_text"]
    budget = copy.deepcopy(QuestionForm.base_fields["budget"])
    budget.help_text = _("Each row is randomized on its own and counts as one question in the survey's plan.")
    epsilon = copy.deepcopy(QuestionForm.base_fields["epsilon"])
    epsilon.label = _("Privacy budget ε of each item")
    epsilon.help_text = _(
        "Each row is randomized on its own with this ε; the block spends the sum. Edit a row to change its own."
    )
    mechanism = QuestionForm.base_fields["mechanism"]

    def __init__(self, *args: Any, survey: Survey, **kwargs: Any) -> None:
        self.survey = survey
        kwargs.setdefault("auto_id", "id_matrix_%s")  # beside the question form's fields of the same names
        super().__init__(*args, **kwargs)
        explain_automatic(self, survey)

    def clean_items_text(self) -> list[str]:
        items = [line.strip() for line in self.cleaned_data["items_text"].splitlines() if line.strip()]
        if not 2 <= len(items) <= MAX_MATRIX_ITEMS:
            raise forms.ValidationError(
                _("Give between 2 and %(high)s items; you gave %(count)s.")
                % {"high": MAX_MATRIX_ITEMS, "count": len(items)}
            )
        if len({item.casefold() for item in items}) != len(items):
            raise forms.ValidationError(_("Each item may appear only once."))
        if any(len(item) > 500 for item in items):
            raise forms.ValidationError(_("Items are at most 500 characters long."))
        return items

    def clean(self) -> dict[str, Any]:
        super().clean()  # Form.clean returns self.cleaned_data; the stubs allow None
        data = self.cleaned_data
        if self.errors:
            return data
        items = data["items_text"]
        plan = planned_block(self, data, len(items))
        if plan is None:
            return data
        # One item's question form validates the options and the mechanism for all: they are the same.
        probe = QuestionForm(
            {
                "text": data["items_text"][0],
                "kind": Question.Kind.SINGLE_CHOICE,
                "options_text": self.data.get("options_text", ""),
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
        cleaned = {**probe.cleaned_data, "planned_epsilon": plan, "budget_weight": 1.0}
        data["items"] = [{**cleaned, "text": item, "kind": Question.Kind.MATRIX} for item in items]
        data["cost"] = cleaned["cost"]
        data["total_epsilon"] = data["epsilon"] * len(items)
        return data


def planned_block(form: forms.Form, data: dict[str, Any], count: int) -> bool | None:
    """Set ``data["epsilon"]`` for a block of ``count`` new units (a matrix's rows, a pair) from the
    survey's plan, or check the fixed one against it (:mod:`surveys.budget`); whether it is planned,
    or None after adding the form's error.

    Without a ``budget`` field (an older client, a test) a posted ε is fixed, as it always was.
    """
    survey: Survey = form.survey  # type: ignore[attr-defined]
    mode = data.get("budget") or ("fixed" if form.data.get("epsilon") not in (None, "") else "plan")
    without = [q.pk for q in (data.get("first_question"), data.get("second_question")) if q is not None]
    if mode == "plan":
        units = [plans.Unit((plans.NEW, i)) for i in range(count)]
    elif data.get("epsilon") is None:
        form.add_error("epsilon", forms.Field.default_error_messages["required"])
        return None
    else:
        units = [plans.Unit((plans.NEW, i), fixed=data["epsilon"]) for i in range(count)]
    plan = plans.preview(survey, add=units, without=without)
    if not plan.feasible:
        form.add_error("budget" if mode == "plan" else "epsilon", over_total(plan))
        return None
    if mode == "plan":
        data["epsilon"] = plan.epsilons[(plans.NEW, 0)]
    return mode == "plan"


class MatrixEditForm(forms.Form):
    """A matrix's title and the wording of its shared options (their number stays: it is each item's k)."""

    title = forms.CharField(label=_("Title"), max_length=500)
    options_text = forms.CharField(label=_("Options"), widget=forms.Textarea(attrs={"rows": 4}))

    def __init__(self, *args: Any, matrix: Matrix, **kwargs: Any) -> None:
        self.matrix = matrix
        first = matrix.items.order_by("position", "id").first()
        self.k = first.k if first is not None else 0
        self.current = list(first.options) if first is not None else []
        kwargs.setdefault("initial", {"title": matrix.title, "options_text": "\n".join(first.options if first else [])})
        kwargs.setdefault("prefix", f"matrix-{matrix.pk}")  # several matrices' forms on one page
        super().__init__(*args, **kwargs)

    def clean_options_text(self) -> list[str]:
        lines = [line.strip() for line in self.cleaned_data["options_text"].splitlines() if line.strip()]
        try:
            options = clean_option_lines(lines)
        except KindError as error:
            raise forms.ValidationError(error.message) from None
        if len(options) != self.k:
            raise forms.ValidationError(
                _(
                    "Keep the %(k)s options: each item is randomized over that many. Reword them here; "
                    "for another number of options, delete the matrix and add it again."
                )
                % {"k": self.k}
            )
        reordered = options != self.current and sorted(options) == sorted(self.current)
        if reordered and Report.objects.filter(survey_id=self.matrix.survey_id, question__matrix=self.matrix).exists():
            # As a question's: reports are kept by option position, so moving the same labels would
            # silently swap what every item's reports mean.
            raise forms.ValidationError(
                _(
                    "This matrix already has reports, so its options keep their order; you may reword them, "
                    "but not move them."
                )
            )
        return options
