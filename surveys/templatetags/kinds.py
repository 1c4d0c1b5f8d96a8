"""The question's kind description for templates (:mod:`surveys.kinds`): its answer and builder widgets.

Its own library, apart from :mod:`surveys.templatetags.murmur`, whose number filters
:mod:`surveys.kinds` itself formats with.
"""

from __future__ import annotations

from typing import Any

from django import template

from surveys.kinds import QuestionKind, kind_of

register = template.Library()


@register.filter
def question_kind(question: Any) -> QuestionKind:
    """The question's kind description (:func:`surveys.kinds.kind_of`): its answer and builder templates."""
    return kind_of(question.kind)
