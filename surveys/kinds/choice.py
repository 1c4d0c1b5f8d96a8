"""Single choice and yes/no: one option of k, summarized as each option's share (:mod:`surveys.kinds.shares`).

Both may offer "Prefer not to say": one more option, added last, in the randomized domain like any
other (k grows by one; epsilon and the mechanism's rules are unchanged). Choosing it and skipping
the question send the same thing, its randomized report (:meth:`QuestionKind.skip_index`), so
its estimated share is everyone who chose it or left the question empty.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from ldp.registry import NOT_RANDOMIZED
from surveys.kinds import adaptive
from surveys.kinds.base import KindError, QuestionKind, clean_option_lines
from surveys.models import MAX_OPTIONS, Question

#: The builder's field (added to the question form; shown for the kinds that offer it).
PREFER_NOT_FIELD = forms.BooleanField(
    label=gettext_lazy("Offer “Prefer not to say”"),
    required=False,
    help_text=gettext_lazy(
        "Adds it as the last option, randomized like the others. A respondent who skips the question sends "
        "its randomized report too, so its share counts both, and skipping reveals nothing more than answering."
    ),
)


def prefer_not_labels(question: Question | None) -> set[str]:
    """The labels Murmur gives the "Prefer not to say" it adds, casefolded: the default in every
    language the site speaks, and ``question``'s own once it offers one (its wording is kept)."""
    labels = set()
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            labels.add(str(_("Prefer not to say")).casefold())
    if question is not None and question.prefer_not_index is not None:
        labels.add(question.options[-1].casefold())
    return labels


class ChoiceKind(QuestionKind):
    """One option of k (the builder's option lines). It may also be asked directly (not randomized,
    :data:`ldp.registry.NOT_RANDOMIZED`; at most :data:`surveys.kinds.designs.MAX_DIRECT_OPTIONS`
    options), to stratify the randomized answers by it."""

    def mechanisms(self, estimate: str | None = None) -> tuple[str, ...]:
        randomized = super().mechanisms(estimate)
        return randomized + NOT_RANDOMIZED if estimate in (None, "shares") else randomized

    def options(self, data: dict[str, Any], question: Question | None) -> list[str]:
        """The written options, then "Prefer not to say" when the builder asks for it (its wording kept
        once set, as a yes/no question's)."""
        written = self.written_options(data, question)
        if not (self.offers_prefer_not_to_say and data.get("prefer_not_to_say")):
            return written
        label = question.options[-1] if question is not None and question.prefer_not_index is not None else None
        label = label or str(_("Prefer not to say"))
        if label.casefold() in {option.casefold() for option in written}:
            message = _("Remove “%(option)s” from the options: ticking “Offer ‘Prefer not to say’” adds it last.")
            raise KindError("options_text", message % {"option": label})
        if len(written) >= MAX_OPTIONS:
            message = _("With “Prefer not to say” give at most %(high)s options; you gave %(count)s.")
            raise KindError("options_text", message % {"high": MAX_OPTIONS - 1, "count": len(written)})
        return [*written, label]

    def written_options(self, data: dict[str, Any], question: Question | None) -> list[str]:
        """The options the organizer wrote (the builder's option lines)."""
        return clean_option_lines(data.get("options_text") or [])

    def builder_facts(self, question: Question, n: int) -> dict[str, Any]:
        """A two-phase design's state in words (:func:`surveys.kinds.adaptive.builder_words`)."""
        words = adaptive.builder_words(question, n)
        return {"adaptive": words} if words else {}


class YesNoKind(ChoiceKind):
    def written_options(self, data: dict[str, Any], question: Question | None) -> list[str]:
        if question is not None and question.kind == Question.Kind.YES_NO and len(question.written_options) == 2:
            return question.written_options  # keep their wording (and language) once set
        return [str(_("Yes")), str(_("No"))]
