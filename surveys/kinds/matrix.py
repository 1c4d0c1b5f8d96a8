"""A matrix item: one row of a :class:`surveys.models.Matrix`, a choice question on the block's options."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from surveys.kinds.base import KindError, QuestionKind
from surveys.models import Question


class MatrixItemKind(QuestionKind):
    """One row of a matrix (:class:`surveys.models.Matrix`): a choice question on the block's options.

    Items are made and their shared options reworded by the matrix's own form; an item's editor
    changes its wording, epsilon and mechanism only, so every row keeps the same options.
    """

    def options(self, data: dict[str, Any], question: Question | None) -> list[str]:
        if question is not None and question.matrix_id is not None:
            return list(question.options)
        raise KindError("kind", _("Matrix items are added with “Add a matrix”."))

    def demo_truth(self, sources: Any) -> Any:
        return next(sources.matrix)
