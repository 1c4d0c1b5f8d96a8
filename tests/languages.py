"""Bilingual surveys for tests: a survey's strings all translated by a rule."""

from __future__ import annotations

from collections.abc import Callable

from surveys import languages
from surveys.models import Survey


def english(text: str) -> str:
    return f"EN {text}"


def make_bilingual(
    survey: Survey, base: str = "ko", other: str = "en", translate: Callable[[str], str] = english
) -> None:
    """Offer ``survey`` (written in ``base``) in ``other`` too, every string translated by ``translate``."""
    languages.do_add_language(survey, other, base)
    strings = languages.source_strings(survey)
    languages.do_save_translations(survey, other, {s.key: translate(s.text) for s in strings})
