"""One survey in several languages: which strings need translating, what is missing, and the
survey as a respondent reads it in their language.

The organizer writes a survey in its base language and adds others (any language Django knows,
:data:`django.conf.locale.LANG_INFO`); :func:`source_strings` lists every string a respondent reads
that the organizer wrote (title, description, each question's wording, option labels with words
in them, a rating's end labels, a number's unit, a matrix's title and options). A language whose
strings are all translated is *offered* on the answer page; opening the survey is refused while an
added language has a string missing or outdated (:func:`translation_problems`).

Translations are applied to unsaved copies of the models (:func:`localize`) and change nothing but
text: the randomization, the client specs and their digest, the body a browser posts and the one
tally per question are the same in every language, so estimates pool every respondent. The
language a respondent read is never sent in the submission body nor stored: it would be an
attribute linking reports.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.conf.locale import LANG_INFO
from django.db import transaction
from django.http import HttpRequest
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.utils.translation.trans_real import parse_accept_lang_header

from surveys.models import Question, Survey
from surveys.translations import SurveyLanguage, Translation, source_hash

#: The query parameter that picks a survey's language on its answer, submit and transparency pages.
LANGUAGE_PARAMETER = "lang"
#: A number-like label (a bin "0–10", a scale point "7") needs no translation.
_NUMBER = re.compile(r"[-+]?\d*[.,]?\d+(?:[eE][-+]?\d+)?")


def language_name(code: str) -> str:
    """The language's own name, and its name in the current language when different ("한국어 (Korean)")."""
    info = LANG_INFO.get(code, {})
    local = info.get("name_local", code)
    translated = _(info["name"]) if "name" in info else code  # Django's catalog names languages
    return local if local == translated else f"{local} ({translated})"


def language_choices() -> list[tuple[str, str]]:
    """Every language Django knows (codes with a name, not fallbacks), by code."""
    return sorted((code, language_name(code)) for code, info in LANG_INFO.items() if "name" in info)


def pair_options(first: Question, second: Question) -> list[str]:
    """A declared pair's k1 k2 options, in the order of its one answer first * k2 + second."""
    return [f"{a} × {b}" for a in first.options for b in second.options]


@dataclass(frozen=True)
class SourceString:
    """One string the organizer wrote, in the base language, with its stable key."""

    key: str
    label: Any
    text: str


def needs_translation(label: str) -> bool:
    """Whether an option label has words in it (numbers alone read the same in every language)."""
    return any(ch.isalpha() for ch in _NUMBER.sub("", label))


def source_strings(survey: Survey, questions: list[Question] | None = None) -> list[SourceString]:
    """Every string of the survey a respondent reads that the organizer wrote, in page order.

    A declared pair's options are made of its two questions' options, so only its wording is asked for;
    a matrix's title and shared options are asked once, under the matrix.
    """
    if questions is None:
        questions = list(survey.questions.select_related("matrix"))
    found = [SourceString("survey:title", gettext_lazy("Title"), survey.title)]
    if survey.description:
        found.append(SourceString("survey:description", gettext_lazy("Description"), survey.description))
    if survey.thank_you:
        found.append(SourceString("survey:thank_you", gettext_lazy("Thank-you message"), survey.thank_you))
    matrices: set[int] = set()
    for number, question in enumerate(questions, start=1):
        if question.matrix_id is not None and question.matrix_id not in matrices:
            matrices.add(question.matrix_id)
            matrix = question.matrix
            assert matrix is not None
            found.append(SourceString(f"m:{matrix.pk}:title", _label("Matrix", number), matrix.title))
            found.extend(_options(f"m:{matrix.pk}", number, question.options))
        found.append(SourceString(f"q:{question.pk}:text", _label("Question", number), question.text))
        for name, label in (("low_label", "lowest point"), ("high_label", "highest point"), ("unit", "unit")):
            value = getattr(question, name)
            if value:
                found.append(SourceString(f"q:{question.pk}:{name}", _label(label, number), value))
        if question.matrix_id is None and question.pair_first_id is None:
            found.extend(_options(f"q:{question.pk}", number, question.options))
    return found


def _label(what: str, number: int) -> str:
    labels = {
        "Matrix": _("Matrix %(number)s: title"),
        "Question": _("Question %(number)s"),
        "lowest point": _("Question %(number)s: label of the lowest point"),
        "highest point": _("Question %(number)s: label of the highest point"),
        "unit": _("Question %(number)s: unit"),
    }
    return labels[what] % {"number": number}


def _options(prefix: str, number: int, options: Iterable[str]) -> list[SourceString]:
    return [
        SourceString(f"{prefix}:option:{i}", _("Question %(number)s: option %(option)s") % {
            "number": number, "option": i + 1}, label)
        for i, label in enumerate(options)
        if needs_translation(label)
    ]  # fmt: skip


@dataclass
class LanguageStatus:
    """One added language's state: its strings missing (never translated, or emptied) and outdated."""

    code: str
    is_base: bool
    missing: list[SourceString] = field(default_factory=list)
    outdated: list[SourceString] = field(default_factory=list)

    @property
    def name(self) -> str:
        return language_name(self.code)

    @property
    def complete(self) -> bool:
        return not self.missing


def base_language(survey_id: int) -> str | None:
    """The survey's base language, or None when it is written in one language only."""
    return SurveyLanguage.objects.filter(survey_id=survey_id, is_base=True).values_list("code", flat=True).first()


def base_and_added(statuses: list[LanguageStatus]) -> tuple[str | None, list[str]]:
    """The base language's code (None for a one-language survey) and the added languages' codes."""
    return next((s.code for s in statuses if s.is_base), None), [s.code for s in statuses if not s.is_base]


def statuses(survey: Survey, strings: list[SourceString] | None = None) -> list[LanguageStatus]:
    """Each language of the survey, its base first, with what it still lacks (nothing for the base)."""
    rows = list(SurveyLanguage.objects.filter(survey=survey))
    if not rows:
        return []
    strings = source_strings(survey) if strings is None else strings
    saved: dict[tuple[str, str], str] = {
        (t.language, t.key): t.source_hash
        for t in Translation.objects.filter(survey=survey).exclude(text="").only("language", "key", "source_hash")
    }
    result = []
    for row in rows:
        status = LanguageStatus(row.code, row.is_base)
        if not row.is_base:
            for string in strings:
                stored = saved.get((row.code, string.key))
                if stored is None:
                    status.missing.append(string)
                elif stored != source_hash(string.text):
                    status.outdated.append(string)
        result.append(status)
    return result


def translation_problems(survey: Survey) -> list[str]:
    """Why the survey's translations keep it from opening: per language, how many strings are missing
    or outdated, and which (the first few)."""
    problems = []
    for status in statuses(survey):
        if status.missing:
            message = ngettext(
                "%(language)s: %(count)s string not translated (%(which)s).",
                "%(language)s: %(count)s strings not translated (%(which)s).",
                len(status.missing),
            )
            problems.append(message % _problem_words(status, status.missing))
        if status.outdated:
            message = ngettext(
                "%(language)s: %(count)s translation outdated by a later edit (%(which)s).",
                "%(language)s: %(count)s translations outdated by a later edit (%(which)s).",
                len(status.outdated),
            )
            problems.append(message % _problem_words(status, status.outdated))
    return problems


def _problem_words(status: LanguageStatus, strings: list[SourceString]) -> dict[str, Any]:
    which = ", ".join(str(s.label) for s in strings[:3]) + (", …" if len(strings) > 3 else "")
    return {"language": status.name, "count": len(strings), "which": which}


def offered_languages(survey: Survey) -> list[str]:
    """The languages respondents may read the survey in: its base first, then every complete one."""
    return [s.code for s in statuses(survey) if s.complete]


def chosen_language(request: HttpRequest, offered: list[str]) -> str | None:
    """The language a respondent reads: the one they picked (``?lang=``), else the first of their
    browser's (Accept-Language) the survey offers, else its base. None: a one-language survey."""
    if not offered:
        return None
    picked = request.GET.get(LANGUAGE_PARAMETER, "")
    if picked in offered:
        return picked
    for code, _quality in parse_accept_lang_header(request.headers.get("Accept-Language", "")):
        for candidate in (code, code.split("-")[0]):
            match = next((o for o in offered if o.lower() == candidate), None)
            if match is not None:
                return match
    return offered[0]


def chrome_language(language: str | None) -> str | None:
    """The language Murmur's own words follow for a survey language: itself when Murmur speaks it."""
    available = {code for code, _name in settings.LANGUAGES}
    if language is None:
        return None
    return language if language in available else None


@dataclass(frozen=True)
class Reading:
    """In which language a respondent reads a survey, and the others they may switch to."""

    language: str | None
    """None: a one-language survey (nothing is translated, no switcher)."""
    offered: list[str]

    @property
    def chrome(self) -> str | None:
        """The language of Murmur's own words on the page, when Murmur speaks the survey's."""
        return chrome_language(self.language)

    @property
    def query(self) -> str:
        """The query string that keeps the language on the page's next requests ("" when one-language)."""
        return f"?{LANGUAGE_PARAMETER}={self.language}" if self.language else ""

    @property
    def content_lang(self) -> str:
        """The survey text's ``lang`` attribute where it differs from the page's (else "")."""
        return self.language if self.language and self.chrome is None else ""

    @property
    def links(self) -> list[dict[str, Any]]:
        """The switcher's links, one per offered language (none for a one-language survey)."""
        return [
            {
                "code": code,
                "name": LANG_INFO.get(code, {}).get("name_local", code),
                "query": f"?{LANGUAGE_PARAMETER}={code}",
                "current": code == self.language,
            }
            for code in (self.offered if len(self.offered) > 1 else [])
        ]


def reading(request: HttpRequest, survey: Survey) -> Reading:
    """The respondent's language for this survey (:func:`chosen_language`) among those it offers."""
    offered = offered_languages(survey)
    return Reading(chosen_language(request, offered), offered)


def render_in(reading: Reading, render: Any) -> Any:
    """``render()``'s response with Murmur's own words in the reader's language when Murmur speaks it."""
    if reading.chrome is None:
        return render()
    with translation.override(reading.chrome):
        response = render()
        # LocaleMiddleware sets the header only where missing: state what the page is written in.
        response.headers["Content-Language"] = reading.chrome
    return response


def localize(survey: Survey | None, questions: Iterable[Question], language: str | None) -> None:
    """Put the language's translations on these unsaved instances (never save them afterwards).

    Only text changes: a question's number of options, and everything its randomization depends on,
    stay as they are. The base language, or none, leaves everything as it is.
    """
    owner = survey if survey is not None else next(iter(questions), None)
    if owner is None or language is None:
        return
    survey_id = owner.pk if isinstance(owner, Survey) else owner.survey_id
    if language == base_language(survey_id):
        return
    texts = dict(
        Translation.objects.filter(survey_id=survey_id, language=language).exclude(text="").values_list("key", "text")
    )
    if survey is not None:
        survey.title = texts.get("survey:title", survey.title)
        survey.description = texts.get("survey:description", survey.description)
        survey.thank_you = texts.get("survey:thank_you", survey.thank_you)
    questions = list(questions)
    for question in questions:
        _localize_question(question, texts)
    for question in questions:
        if question.pair_first_id is not None and question.pair_second_id is not None:
            first, second = copy.copy(question.pair_first), copy.copy(question.pair_second)
            assert first is not None and second is not None
            question.pair_first, question.pair_second = first, second
            _localize_question(first, texts)
            _localize_question(second, texts)
            question.options = pair_options(first, second)


def _localize_question(question: Question, texts: dict[str, str]) -> None:
    if getattr(question, "_localized", False):
        return
    question._localized = True  # type: ignore[attr-defined]
    prefix = f"q:{question.pk}"
    question.text = texts.get(f"{prefix}:text", question.text)
    for name in ("low_label", "high_label", "unit"):
        setattr(question, name, texts.get(f"{prefix}:{name}", getattr(question, name)))
    if question.matrix_id is not None:
        prefix = f"m:{question.matrix_id}"
        matrix = question.matrix = copy.copy(question.matrix)
        assert matrix is not None
        matrix.title = texts.get(f"{prefix}:title", matrix.title)
    if question.pair_first_id is None:
        question.options = [texts.get(f"{prefix}:option:{i}", label) for i, label in enumerate(question.options)]


# -- writes ------------------------------------------------------------------------------------


def copy_languages(source: Survey, target: Survey, questions: dict[int, int], matrices: dict[int, int]) -> None:
    """The source's languages and translations on its copy (a duplicate, a next round), re-keyed to the
    copy's question and matrix ids (``questions``, ``matrices``: old id to new)."""
    rows = list(SurveyLanguage.objects.filter(survey=source))
    if not rows:
        return
    SurveyLanguage.objects.bulk_create(SurveyLanguage(survey=target, code=r.code, is_base=r.is_base) for r in rows)
    ids = {"q": questions, "m": matrices}

    def rekeyed(key: str) -> str | None:
        prefix, _colon, rest = key.partition(":")
        if prefix not in ids:
            return key
        old, _colon, tail = rest.partition(":")
        new = ids[prefix].get(int(old))
        return None if new is None else f"{prefix}:{new}:{tail}"

    copies = []
    for t in Translation.objects.filter(survey=source):
        key = rekeyed(t.key)
        if key is not None:
            copies.append(
                Translation(survey=target, language=t.language, key=key, text=t.text, source_hash=t.source_hash)
            )
    Translation.objects.bulk_create(copies)


@transaction.atomic
def do_add_language(survey: Survey, code: str, base: str) -> None:
    """Offer the survey in ``code`` too; the first language added also sets its ``base``."""
    if not SurveyLanguage.objects.filter(survey=survey).exists():
        SurveyLanguage.objects.create(survey=survey, code=base, is_base=True)
    SurveyLanguage.objects.get_or_create(survey=survey, code=code)


@transaction.atomic
def do_remove_language(survey: Survey, code: str) -> None:
    """Stop offering ``code`` and forget its translations; removing the last one besides the base
    makes the survey a one-language survey again."""
    SurveyLanguage.objects.filter(survey=survey, code=code, is_base=False).delete()
    Translation.objects.filter(survey=survey, language=code).delete()
    if not SurveyLanguage.objects.filter(survey=survey, is_base=False).exists():
        SurveyLanguage.objects.filter(survey=survey).delete()


@transaction.atomic
def do_save_translations(survey: Survey, language: str, texts: dict[str, str]) -> None:
    """Store the language's strings, keyed as :func:`source_strings` keys them; an empty text is
    removed. Saving a string also confirms it against the base text it now translates."""
    current = {s.key: s for s in source_strings(survey)}
    for key, text in texts.items():
        if key not in current:
            continue
        text = text.strip()
        if not text:
            Translation.objects.filter(survey=survey, language=language, key=key).delete()
            continue
        Translation.objects.update_or_create(
            survey=survey,
            language=language,
            key=key,
            defaults={"text": text, "source_hash": source_hash(current[key].text)},
        )
