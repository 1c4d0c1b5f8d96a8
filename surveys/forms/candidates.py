"""A short-answer question's candidate answers, edited on its results page at any time."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from surveys.kinds import KindError, clean_candidates


class CandidatesForm(forms.Form):
    """The candidate answers of a short-answer question, edited on its results page at any time."""

    candidates_text = forms.CharField(
        label=_("Candidate answers"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text=_("One per line. Each is normalized as the browsers normalize answers, then counted."),
    )

    def clean_candidates_text(self) -> list[str]:
        lines = [line for line in self.cleaned_data["candidates_text"].splitlines() if line.strip()]
        try:
            return clean_candidates(lines)
        except KindError as error:
            raise forms.ValidationError(error.message) from None
