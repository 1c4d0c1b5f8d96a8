"""The analysis page's choices: a randomized outcome, the direct questions to group it by, and the
population margins to weight it to; and the builder's sample-size question."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from surveys.models import Question
from surveys.results.analysis import Choices


def margin_field_name(question: Question, index: int) -> str:
    return f"margin_{question.pk}_{index}"


class AnalysisForm(forms.Form):
    """``outcome`` (a randomized question whose report is one option), ``covariates`` (direct
    questions), and per direct question one population percentage per option (optional: given for
    a question, it is weighted to)."""

    outcome = forms.TypedChoiceField(label=_("Randomized question (outcome)"), coerce=int)
    covariates = forms.TypedMultipleChoiceField(
        label=_("Group by the questions asked directly"), coerce=int, widget=forms.CheckboxSelectMultiple
    )

    def __init__(self, *args: Any, choices: Choices, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.choices = choices
        self.by_id = {q.pk: q for q in [*choices.outcomes, *choices.covariates]}
        outcome = self.fields["outcome"]
        assert isinstance(outcome, forms.TypedChoiceField)
        outcome.choices = [(q.pk, q.text) for q in choices.outcomes]
        covariates = self.fields["covariates"]
        assert isinstance(covariates, forms.TypedMultipleChoiceField)
        covariates.choices = [(q.pk, q.text) for q in choices.covariates]
        self.margin_rows = []
        for question in choices.covariates:
            row = []
            for i, option in enumerate(question.options):
                name = margin_field_name(question, i)
                self.fields[name] = forms.FloatField(
                    label=option, required=False, min_value=0, max_value=100, widget=forms.NumberInput({"step": "any"})
                )
                row.append(name)
            self.margin_rows.append((question, [self[name] for name in row]))

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        data["margins"] = {}
        for question in self.choices.covariates:
            values = [data.get(margin_field_name(question, i)) for i in range(question.k)]
            given = [v for v in values if v is not None]
            if not given:
                continue
            if len(given) != len(values):
                self.add_error(
                    None,
                    _("Give a population percentage for every option of “%(question)s”, or none.")
                    % {"question": question.text},
                )
            elif abs(sum(given) - 100) > 0.5:
                self.add_error(
                    None,
                    _("The population percentages of “%(question)s” add up to %(total)s, not 100.")
                    % {"question": question.text, "total": f"{sum(given):g}"},
                )
            elif question.pk not in data.get("covariates", []):
                self.add_error(
                    None, _("Also group by “%(question)s” to weight by its margins.") % {"question": question.text}
                )
            else:
                data["margins"][question.pk] = [v / sum(given) for v in values]
        return data


class PowerForm(forms.Form):
    """How many respondents tell two groups' (or two rounds') shares apart with 80 % power."""

    question = forms.TypedChoiceField(label=_("Randomized question"), coerce=int)
    share_a = forms.FloatField(
        label=_("Share answering the first option in one group (%)"), min_value=0.5, max_value=99.5, initial=30
    )
    share_b = forms.FloatField(label=_("… and in the other group (%)"), min_value=0.5, max_value=99.5, initial=40)

    def __init__(self, *args: Any, questions: list[Question], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["question"]
        assert isinstance(field, forms.TypedChoiceField)
        field.choices = [(q.pk, q.text) for q in questions]

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if data.get("share_a") is not None and data.get("share_a") == data.get("share_b"):
            self.add_error("share_b", _("Give two different shares: the difference to detect."))
        return data
