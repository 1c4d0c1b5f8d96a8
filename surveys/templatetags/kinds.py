"""The question's kind description for templates (:mod:`surveys.kinds`): its answer and builder widgets.

Its own library, apart from :mod:`surveys.templatetags.murmur`, whose number filters
:mod:`surveys.kinds` itself formats with.
"""

from __future__ import annotations

from typing import Any

from django import template

from surveys.kinds import QuestionKind, kind_of
from surveys.kinds.designs import design_field_mechanisms, direct_note, instruction, is_direct

register = template.Library()


@register.filter
def question_kind(question: Any) -> QuestionKind:
    """The question's kind description (:func:`surveys.kinds.kind_of`): its answer and builder templates."""
    return kind_of(question.kind)


@register.filter
def method_note(item: Any) -> dict[str, Any]:
    """What the answer page says beside a question about how it is asked
    (:mod:`surveys.kinds.designs`): ``direct`` (not randomized) or a design's paper ``instruction``."""
    spec = item.spec
    if item.pair is not None:
        return {"direct": False, "instruction": ""}
    if is_direct(spec.get("mechanism", "")):
        return {"direct": True, "instruction": direct_note()}
    return {"direct": False, "instruction": instruction(spec, list(item.question.options))}


@register.filter
def design_rows(form: Any) -> list[tuple[Any, str]]:
    """The question form's design fields with the designs each belongs to (``data-mechanisms``)."""
    return [(form[name], " ".join(sorted(used))) for name, used in design_field_mechanisms().items()]


@register.filter
def asked_directly(items: Any) -> list[Any]:
    """The answer page's items asked directly (not randomized), in order."""
    return [item for item in items if item.pair is None and is_direct(item.spec.get("mechanism", ""))]
