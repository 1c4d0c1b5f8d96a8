"""Site admin: surveys, questions and counts of reports (a report is randomized; there is no raw answer)."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from surveys.models import Account, Question, Randomization, Survey


class QuestionInline(admin.TabularInline):
    model = Question
    fields = ("position", "text", "kind", "epsilon", "mechanism")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True


@admin.register(Survey)
class SurveyAdmin(admin.ModelAdmin):
    list_display = ("title", "owner", "status", "question_count", "submission_count", "created_at")
    list_filter = ("status",)
    search_fields = ("title", "owner__username")
    readonly_fields = ("slug", "created_at", "opened_at")
    inlines = [QuestionInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Survey]:
        return (
            super()
            .get_queryset(request)
            .annotate(n_questions=Count("questions", distinct=True), n_submissions=Count("submissions", distinct=True))
        )

    @admin.display(description=_("questions"), ordering="n_questions")
    def question_count(self, survey: Survey) -> int:
        return survey.n_questions  # type: ignore[attr-defined]

    @admin.display(description=_("responses"), ordering="n_submissions")
    def submission_count(self, survey: Survey) -> int:
        return survey.n_submissions  # type: ignore[attr-defined]


class RandomizationInline(admin.TabularInline):
    model = Randomization
    fields = ("version", "mechanism", "k", "epsilon", "params", "retired", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ("text", "survey", "kind", "epsilon", "mechanism", "report_count")
    list_filter = ("mechanism", "kind")
    search_fields = ("text", "survey__title")
    inlines = [RandomizationInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Question]:
        return super().get_queryset(request).select_related("survey").annotate(n_reports=Count("reports"))

    @admin.display(description=_("reports"), ordering="n_reports")
    def report_count(self, question: Question) -> int:
        return question.n_reports  # type: ignore[attr-defined]


@admin.register(Account)
class AccountAdmin(admin.ModelAdmin):
    """Staff may confirm an organizer's address by hand (e.g. when mail does not arrive)."""

    list_display = ("user", "email_confirmed", "language")
    list_filter = ("email_confirmed",)
    search_fields = ("user__username", "user__email")
    fields = ("user", "email_confirmed", "language")
    readonly_fields = ("user",)


from surveys.teams import admin as teams_admin  # noqa: E402, F401  (registers the workspace models)
