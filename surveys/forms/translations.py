"""A survey's languages and its translations (:mod:`surveys.languages`)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from surveys.languages import SourceString, language_choices, language_name
from surveys.models import Survey

#: The longest translation of each kind of string (the base text's own field limits).
MAX_LENGTHS = {"title": 500, "text": 500, "low_label": 60, "high_label": 60, "unit": 30, "option": 200}


class AddLanguageForm(forms.Form):
    """Offer the survey in one more language; the first time, also say which language it is written in."""

    base = forms.ChoiceField(label=_("The survey is written in"), choices=language_choices)
    language = forms.ChoiceField(label=_("Also offer it in"), choices=language_choices)

    def __init__(self, *args: Any, survey: Survey, base: str | None, added: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.base_code, self.added = base, added
        if base is not None:
            del self.fields["base"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        base = self.base_code or cleaned.get("base")
        code = cleaned.get("language")
        if code and code == base:
            self.add_error("language", _("That is the language the survey is written in."))
        elif code and code in self.added:
            self.add_error("language", _("The survey is already offered in %(language)s.") % {
                "language": language_name(code)})  # fmt: skip
        cleaned["base"] = base
        return cleaned


class TranslationForm(forms.Form):
    """One field per string of the survey (keyed as :func:`surveys.languages.source_strings` keys them);
    an empty field is an untranslated string."""

    def __init__(self, *args: Any, strings: list[SourceString], language: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.strings = strings
        for string in strings:
            kind = string.key.rsplit(":", 2)[-2] if ":option:" in string.key else string.key.rsplit(":", 1)[-1]
            long_text = string.key in ("survey:description", "survey:thank_you")
            field = forms.CharField(
                label=string.label,
                required=False,
                max_length=None if long_text else 200 if string.key == "survey:title" else MAX_LENGTHS.get(kind, 500),
                widget=forms.Textarea(attrs={"rows": 3 if long_text else 1, "lang": language}),
            )
            self.fields[string.key] = field

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        # A question's options must stay distinguishable in every language.
        seen: dict[tuple[str, str], str] = {}
        for key, value in list(cleaned.items()):
            if ":option:" not in key or not value.strip():
                continue
            group = (key.split(":option:")[0], value.strip().casefold())
            if group in seen:
                self.add_error(key, _("Two options of the same question read the same."))
            seen[group] = key
        return cleaned
