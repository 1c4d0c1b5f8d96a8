"""A survey's settings: title, expected respondents, its epsilon cap, dates and limits."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from ldp.privacy import EPSILON_MIN
from surveys import budget as plans
from surveys.forms import interpolate_lazy
from surveys.models import Survey

#: A cap larger than this could not be spent: 64 questions x the largest epsilon is far less.
MAX_EPSILON_CAP = 1000.0
#: A new survey's total-ε cap. Above it a respondent's answers are barely protected: with ε = 5 a
#: report is up to e^5 ≈ 148 times likelier under one answer than another.
DEFAULT_EPSILON_CAP = 5.0


class SurveyForm(forms.ModelForm):
    class Meta:
        model = Survey
        fields = [
            "title",
            "description",
            "thank_you",
            "expected_respondents",
            "epsilon_cap",
            "closes_at",
            "response_limit",
            "allow_repeat_responses",
            "invite_only",
            "public_results",
        ]
        widgets = {
            "description": forms.Textarea(attrs={"rows": 3}),
            "thank_you": forms.Textarea(attrs={"rows": 2}),
            "closes_at": forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is None:
            self.fields["epsilon_cap"].initial = DEFAULT_EPSILON_CAP
        self.fields["epsilon_cap"].label = _("Total privacy budget ε")
        self.fields["epsilon_cap"].help_text = interpolate_lazy(
            _(
                "The most ε one respondent spends on the whole survey; Murmur splits it over the questions. "
                "New surveys start at %(cap)s: beyond that, randomization protects each answer only weakly. "
                "Raise it only knowingly; empty means no total (each planned question then gets ε = 1)."
            ),
            {"cap": DEFAULT_EPSILON_CAP},
        )
        self.fields["expected_respondents"].help_text = _(
            "How many people you expect to answer: the plan shows each question's expected error for them."
        )
        if "closes_at" not in self.fields:
            return
        # Django reads and shows the date in the active zone (surveys.timezones): say which.
        self.fields["closes_at"].help_text = _("In your time zone, %(zone)s. Empty: open until you close it.") % {
            "zone": timezone.get_current_timezone_name()
        }

    def clean_expected_respondents(self) -> int:
        value = self.cleaned_data["expected_respondents"]
        if value < 1:
            raise forms.ValidationError(_("Expect at least one respondent."))
        return value

    def clean_epsilon_cap(self) -> float | None:
        cap = self.cleaned_data["epsilon_cap"]
        if cap is None:
            return None
        if not EPSILON_MIN <= cap <= MAX_EPSILON_CAP:
            raise forms.ValidationError(
                _("The cap must lie between %(low)s and %(high)s.") % {"low": EPSILON_MIN, "high": MAX_EPSILON_CAP}
            )
        if self.instance.pk and not plans.preview(self.instance, total=cap).feasible:
            raise forms.ValidationError(
                _(
                    "Questions with a fixed ε (or with reports) already spend ε = %(total)s, and every planned "
                    "question needs at least %(low)s: lower their budgets first."
                )
                % {"total": f"{plans.preview(self.instance).fixed:g}", "low": EPSILON_MIN}
            )
        return cap


class BudgetForm(SurveyForm):
    """The budget panel's two settings: the survey's total epsilon and the respondents expected."""

    class Meta(SurveyForm.Meta):
        fields = ["epsilon_cap", "expected_respondents"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("prefix", "plan")  # its ids differ from the settings form's on the same page
        super().__init__(*args, **kwargs)
