"""Single choice and yes/no: one option of k, summarized as each option's share (:mod:`surveys.kinds.shares`)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from surveys.kinds.base import QuestionKind
from surveys.models import Question


class ChoiceKind(QuestionKind):
    """One option of k (the builder's option lines)."""


class YesNoKind(ChoiceKind):
    def options(self, data: dict[str, Any], question: Question | None) -> list[str]:
        if question is not None and question.kind == Question.Kind.YES_NO and len(question.options) == 2:
            return list(question.options)  # keep their wording (and language) once set
        return [str(_("Yes")), str(_("No"))]
