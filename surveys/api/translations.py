"""The organizer API's languages and translations (registered on :data:`surveys.api.routes.router`).

The builder's languages and translations pages as operations (:mod:`surveys.views.translations`):
the same forms check the input, the same named actions of :mod:`surveys.languages` store it, and
they need what the pages need (``edit``). Opening still refuses a survey whose offered language has
a string missing or outdated (``POST /open``, 409).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils.translation import gettext as _
from ninja import Status
from ninja.errors import HttpError

from surveys import languages
from surveys.access import get_survey_for_owner
from surveys.api import schemas
from surveys.api.auth import read_token, write_token
from surveys.api.routes import ERRORS, FormRefused, id_path, router, token_owner
from surveys.forms.translations import AddLanguageForm, TranslationForm
from surveys.models import Survey, Translation
from surveys.teams import audit


def languages_out(survey: Survey) -> dict[str, Any]:
    strings = languages.source_strings(survey)
    statuses = languages.statuses(survey, strings)
    texts: dict[str, dict[str, str]] = {}
    for language, key, text in Translation.objects.filter(survey=survey).values_list("language", "key", "text"):
        texts.setdefault(language, {})[key] = text
    return {
        "base": languages.base_and_added(statuses)[0],
        "strings": [{"key": s.key, "label": str(s.label), "text": s.text} for s in strings],
        "languages": [
            {
                "code": s.code,
                "name": s.name,
                "base": s.is_base,
                "complete": s.complete,
                "missing": [m.key for m in s.missing],
                "outdated": [o.key for o in s.outdated],
                "texts": {} if s.is_base else texts.get(s.code, {}),
            }
            for s in statuses
        ],
    }


@router.get(
    "/surveys/{survey_id}/languages",
    response={200: schemas.LanguagesOut, **ERRORS},
    auth=read_token,
    tags=["languages"],
)
def list_languages(request: HttpRequest, survey_id: int = id_path()) -> Any:
    """Every string a respondent reads, in the base language, and each added language's translations
    with the keys still missing or outdated (as the builder's languages page shows them)."""
    return languages_out(get_survey_for_owner(token_owner(request), survey_id))


@router.post(
    "/surveys/{survey_id}/languages",
    response={201: schemas.LanguagesOut, **ERRORS},
    auth=write_token,
    tags=["languages"],
)
def add_language(request: HttpRequest, body: schemas.LanguageIn, survey_id: int = id_path()) -> Any:
    """Offer the survey in one more language (any Django knows); the first time, ``base`` says which
    language it is written in."""
    survey = get_survey_for_owner(token_owner(request), survey_id)
    statuses = languages.statuses(survey)
    base, added = languages.base_and_added(statuses)
    form = AddLanguageForm(body.dict(exclude_none=True), survey=survey, base=base, added=added)
    if not form.is_valid():
        raise FormRefused(form)
    code = form.cleaned_data["language"]
    languages.do_add_language(survey, code, form.cleaned_data["base"])
    audit.edited(survey, _("added the language %(language)s") % {"language": code})
    return Status(201, languages_out(survey))


def _added(survey: Survey, language: str) -> None:
    """404 unless ``language`` is one the survey was added (its base has nothing to translate)."""
    if language not in languages.base_and_added(languages.statuses(survey))[1]:
        raise HttpError(404, "The survey is not offered in that language.")


@router.patch(
    "/surveys/{survey_id}/languages/{language}",
    response={200: schemas.LanguagesOut, **ERRORS},
    auth=write_token,
    tags=["languages"],
)
def save_translations(
    request: HttpRequest, body: schemas.TranslationsIn, language: str, survey_id: int = id_path()
) -> Any:
    """Store the translations given, by key; saving a string confirms it against the current base text."""
    survey = get_survey_for_owner(token_owner(request), survey_id)
    _added(survey, language)
    strings = languages.source_strings(survey)
    unknown = sorted(set(body.texts) - {s.key for s in strings})
    if unknown:
        raise HttpError(422, f"No such string: {', '.join(unknown[:5])}.")
    saved = dict(Translation.objects.filter(survey=survey, language=language).values_list("key", "text"))
    form = TranslationForm({**saved, **body.texts}, strings=strings, language=language)
    if not form.is_valid():
        raise FormRefused(form)
    languages.do_save_translations(survey, language, {key: form.cleaned_data[key] for key in body.texts})
    audit.edited(survey, _("translated into %(language)s") % {"language": language})
    return languages_out(survey)


@router.delete(
    "/surveys/{survey_id}/languages/{language}", response={204: None, **ERRORS}, auth=write_token, tags=["languages"]
)
def remove_language(request: HttpRequest, language: str, survey_id: int = id_path()) -> Any:
    """Stop offering the language and forget its translations (the last one leaves a one-language survey)."""
    survey = get_survey_for_owner(token_owner(request), survey_id)
    _added(survey, language)
    languages.do_remove_language(survey, language)
    audit.edited(survey, _("removed the language %(language)s") % {"language": language})
    return Status(204, None)
