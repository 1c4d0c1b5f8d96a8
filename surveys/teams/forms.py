"""Forms of the workspace pages."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from surveys.models import Survey
from surveys.teams.models import Role, Workspace


class WorkspaceForm(forms.ModelForm):
    class Meta:
        model = Workspace
        fields = ["name"]


class InviteForm(forms.Form):
    email = forms.EmailField(label=_("Email address"))
    role = forms.ChoiceField(label=_("Role"), choices=Role.choices, initial=Role.EDITOR)
    language = forms.ChoiceField(
        label=_("Language of the mail"),
        choices=settings.LANGUAGES,
        help_text=_("Someone who already has an account gets the mail in their account's language."),
    )


class RoleForm(forms.Form):
    role = forms.ChoiceField(label=_("Role"), choices=Role.choices)


class MoveSurveyForm(forms.Form):
    survey: forms.ModelChoiceField[Survey] = forms.ModelChoiceField(
        label=_("Survey"), queryset=Survey.objects.none(), empty_label=None
    )

    def __init__(self, *args: object, surveys: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["survey"].queryset = surveys  # type: ignore[attr-defined]  # a ModelChoiceField
