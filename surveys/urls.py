from __future__ import annotations

from django.urls import path, register_converter

from surveys.views import (
    accounts,
    author,
    crosstab,
    dashboard,
    exports,
    home,
    invitations,
    ledger,
    preview,
    respond,
    rounds,
    transparency,
)


class ExportFormat:
    regex = "csv|json"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(ExportFormat, "format")

urlpatterns = [
    path("", home.home, name="home"),
    path("ledger/", ledger.ledger, name="ledger"),
    path("accounts/signup/", author.signup, name="signup"),
    path("accounts/confirm/", accounts.resend_confirmation, name="resend_confirmation"),
    path("accounts/confirm/<str:token>/", accounts.confirm_email, name="confirm_email"),
    path("surveys/", author.survey_list, name="survey_list"),
    path("surveys/new/", author.survey_create, name="survey_create"),
    path("surveys/<int:survey_id>/", author.survey_detail, name="survey_detail"),
    path("surveys/<int:survey_id>/settings/", author.survey_settings, name="survey_settings"),
    path("surveys/<int:survey_id>/delete/", author.survey_delete, name="survey_delete"),
    path("surveys/<int:survey_id>/duplicate/", author.survey_duplicate, name="survey_duplicate"),
    path("surveys/<int:survey_id>/preview/", preview.survey_preview, name="survey_preview"),
    path("surveys/<int:survey_id>/preview/check/", preview.preview_check, name="survey_preview_check"),
    path("surveys/<int:survey_id>/open/", author.survey_open, name="survey_open"),
    path("surveys/<int:survey_id>/close/", author.survey_close, name="survey_close"),
    path("surveys/<int:survey_id>/recurrence/", rounds.survey_recurrence, name="survey_recurrence"),
    path("surveys/<int:survey_id>/rounds/next/", rounds.survey_next_round, name="survey_next_round"),
    path("surveys/<int:survey_id>/invitations/", invitations.invitation_links, name="invitations"),
    path("surveys/<int:survey_id>/invitations/mail/", invitations.invitation_emails, name="invitation_emails"),
    path("surveys/<int:survey_id>/invitations/remind/", invitations.invitation_reminders, name="invitation_reminders"),
    path("surveys/<int:survey_id>/questions/new/", author.question_add, name="question_add"),
    path("surveys/<int:survey_id>/questions/cost/", author.question_cost_preview, name="question_cost_preview"),
    path("surveys/<int:survey_id>/questions/<int:question_id>/", author.question_card, name="question_card"),
    path("surveys/<int:survey_id>/questions/<int:question_id>/edit/", author.question_edit, name="question_edit"),
    path("surveys/<int:survey_id>/questions/<int:question_id>/delete/", author.question_delete, name="question_delete"),
    path("surveys/<int:survey_id>/questions/<int:question_id>/move/", author.question_move, name="question_move"),
    path("surveys/<int:survey_id>/pairs/new/", author.pair_add, name="pair_add"),
    path("surveys/<int:survey_id>/matrices/new/", author.matrix_add, name="matrix_add"),
    path("surveys/<int:survey_id>/matrices/<int:matrix_id>/move/", author.matrix_move, name="matrix_move"),
    path("surveys/<int:survey_id>/matrices/<int:matrix_id>/edit/", author.matrix_edit, name="matrix_edit"),
    path("surveys/<int:survey_id>/matrices/<int:matrix_id>/delete/", author.matrix_delete, name="matrix_delete"),
    path("surveys/<int:survey_id>/results/", dashboard.survey_results, name="survey_results"),
    path("surveys/<int:survey_id>/results/crosstab/", crosstab.survey_crosstab, name="survey_crosstab"),
    path("surveys/<int:survey_id>/export/crosstab.json", crosstab.export_crosstab, name="export_crosstab"),
    path("surveys/<int:survey_id>/results/<int:question_id>/", dashboard.question_results, name="question_results"),
    path(
        "surveys/<int:survey_id>/results/<int:question_id>/candidates/",
        dashboard.question_candidates,
        name="question_candidates",
    ),
    path(
        "surveys/<int:survey_id>/export/estimates.<format:fmt>",
        exports.export_estimates,
        name="export_estimates",
    ),
    path("surveys/<int:survey_id>/export/reports.<format:fmt>", exports.export_reports, name="export_reports"),
    path("surveys/<int:survey_id>/export/survey.xlsx", exports.export_reports, {"fmt": "xlsx"}, name="export_workbook"),
    path("surveys/<int:survey_id>/exports/", exports.exports_page, name="exports"),
    path("surveys/<int:survey_id>/exports/<int:job_id>/", exports.export_download, name="export_download"),
    path(
        "surveys/<int:survey_id>/export/synthetic-<int:question_id>-v<int:version>.csv",
        exports.export_synthetic,
        name="export_synthetic",
    ),
    path("r/<str:slug>/", dashboard.public_results, name="public_results"),
    path("r/<str:slug>/crosstab/", crosstab.public_crosstab, name="public_crosstab"),
    path("s/<str:slug>/", respond.respond, name="respond"),
    path("s/<str:slug>/submit/", respond.submit, name="submit"),
    path("s/<str:slug>/transparency/", transparency.transparency, name="transparency"),
]
