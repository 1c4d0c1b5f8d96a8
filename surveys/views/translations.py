"""The builder's languages and translations pages (:mod:`surveys.languages`): add or remove a
language, and translate every string of the survey side by side with its base language."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from surveys import languages
from surveys.access import get_survey_for_owner
from surveys.forms.translations import AddLanguageForm, TranslationForm
from surveys.models import AuditEntry, Survey, Translation
from surveys.teams import audit
from surveys.translations import source_hash


def _record(request: HttpRequest, survey: Survey, detail: str) -> None:
    audit.record(request.user, survey.workspace, AuditEntry.Action.EDITED, detail, survey=survey)


@login_required
@require_http_methods(["GET", "POST"])
def survey_languages(request: HttpRequest, survey_id: int) -> HttpResponse:
    survey = get_survey_for_owner(request.user, survey_id)
    statuses = languages.statuses(survey)
    base, added = languages.base_and_added(statuses)
    form = AddLanguageForm(request.POST or None, survey=survey, base=base, added=added)
    if request.method == "POST":
        remove = request.POST.get("remove")
        if remove is not None:
            if remove not in added:
                raise Http404
            languages.do_remove_language(survey, remove)
            _record(request, survey, _("removed the language %(language)s") % {"language": remove})
            messages.success(request, _("The survey is no longer offered in %(language)s.") % {
                "language": languages.language_name(remove)})  # fmt: skip
            return redirect("survey_languages", survey.pk)
        if form.is_valid():
            code = form.cleaned_data["language"]
            languages.do_add_language(survey, code, form.cleaned_data["base"])
            _record(request, survey, _("added the language %(language)s") % {"language": code})
            messages.success(request, _("Now translate the survey into %(language)s.") % {
                "language": languages.language_name(code)})  # fmt: skip
            return redirect("survey_translations", survey.pk, code)
    return render(request, "surveys/languages.html", {"survey": survey, "statuses": statuses, "form": form})


@login_required
@require_http_methods(["GET", "POST"])
def survey_translations(request: HttpRequest, survey_id: int, language: str) -> HttpResponse:
    survey = get_survey_for_owner(request.user, survey_id)
    statuses = languages.statuses(survey)
    status = next((s for s in statuses if s.code == language and not s.is_base), None)
    if status is None:
        raise Http404
    strings = languages.source_strings(survey)
    saved = {t.key: t for t in Translation.objects.filter(survey=survey, language=language)}
    initial = {key: t.text for key, t in saved.items()}
    form = TranslationForm(request.POST or None, initial=initial, strings=strings, language=language)
    if request.method == "POST" and form.is_valid():
        languages.do_save_translations(survey, language, form.cleaned_data)
        _record(request, survey, _("translated into %(language)s") % {"language": language})
        messages.success(request, _("Translations saved."))
        return redirect(reverse("survey_translations", args=[survey.pk, language]))
    rows = []
    for string in strings:
        stored = saved.get(string.key)
        state = "missing" if stored is None or not stored.text else "done"
        if stored is not None and stored.text and stored.source_hash != source_hash(string.text):
            state = "outdated"
        rows.append({"string": string, "field": form[string.key], "state": state})
    context = {"survey": survey, "status": status, "statuses": statuses, "rows": rows, "form": form}
    return render(request, "surveys/translations.html", context)
