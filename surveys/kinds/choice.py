"""Single choice and yes/no: one option of k, summarized as each option's share (:mod:`surveys.kinds.shares`)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from ldp.registry import NOT_RANDOMIZED
from surveys.kinds.base import QuestionKind
from surveys.models import Question


class ChoiceKind(QuestionKind):
    """One option of k (the builder's option lines). It may also be asked directly (not randomized,
    :data:`ldp.registry.NOT_RANDOMIZED`; at most :data:`surveys.kinds.designs.MAX_DIRECT_OPTIONS`
    options), to stratify the randomized answers by it."""

    def mechanisms(self, estimate: str | None = None) -> tuple[str, ...]:
        randomized = super().mechanisms(estimate)
        return randomized + NOT_RANDOMIZED if estimate in (None, "shares") else randomized


class YesNoKind(ChoiceKind):
    def options(self, data: dict[str, Any], question: Question | None) -> list[str]:
        if question is not None and question.kind == Question.Kind.YES_NO and len(question.options) == 2:
            return list(question.options)  # keep their wording (and language) once set
        return [str(_("Yes")), str(_("No"))]
