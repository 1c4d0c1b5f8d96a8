"""The only way views load a protected survey or question for a user.

Someone who may not see a survey gets 404, exactly as if it did not exist, so that survey
ids reveal nothing.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import Http404
from django.shortcuts import get_object_or_404

from surveys.models import Matrix, Question, Survey


def get_survey_for_owner(user: AbstractBaseUser | AnonymousUser, survey_id: int) -> Survey:
    """The survey with this id if ``user`` owns it; else 404."""
    if not user.is_authenticated:
        raise Http404
    return get_object_or_404(Survey, pk=survey_id, owner=user)


def get_survey_for_results(user: AbstractBaseUser | AnonymousUser, survey_id: int) -> Survey:
    """The survey if ``user`` owns it or is staff; else 404."""
    if not user.is_authenticated:
        raise Http404
    if getattr(user, "is_staff", False):
        return get_object_or_404(Survey, pk=survey_id)
    return get_object_or_404(Survey, pk=survey_id, owner=user)


def get_question_for_owner(user: AbstractBaseUser | AnonymousUser, survey_id: int, question_id: int) -> Question:
    """A question of a survey that ``user`` owns; else 404."""
    survey = get_survey_for_owner(user, survey_id)
    return get_object_or_404(Question, pk=question_id, survey=survey)


def get_matrix_for_owner(user: AbstractBaseUser | AnonymousUser, survey_id: int, matrix_id: int) -> Matrix:
    """A matrix block of a survey that ``user`` owns; else 404."""
    survey = get_survey_for_owner(user, survey_id)
    return get_object_or_404(Matrix, pk=matrix_id, survey=survey)


def get_survey_by_share_slug(slug: str) -> Survey:
    """The survey behind a share link, for respondents; drafts are not shared."""
    return get_object_or_404(Survey.objects.exclude(status=Survey.Status.DRAFT), slug=slug)
