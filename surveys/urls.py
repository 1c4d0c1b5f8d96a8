from __future__ import annotations

from django.urls import path, register_converter

from surveys.views import (
    accounts,
    analysis,
    api_docs,
    api_tokens,
    author,
    blocks,
    branching,
    budget,
    crosstab,
    dashboard,
    exports,
    home,
    invitations,
    ledger,
    presets,
    preview,
    respond,
    rounds,
    sampling,
    stats_exports,
    translations,
    transparency,
    webhooks,
    workspaces,
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
    # The organizer API's reference; the API itself (surveys/api/) is included in config/urls.py.
    path("api/v1/docs/", api_docs.api_docs, name="api_docs"),
    path("accounts/tokens/", api_tokens.api_tokens, name="api_tokens"),
    path("accounts/tokens/<int:token_id>/revoke/", api_tokens.api_token_revoke, name="api_token_revoke"),
    path("ledger/", ledger.ledger, name="ledger"),
    path("accounts/signup/", author.signup, name="signup"),
    path("accounts/confirm/", accounts.resend_confirmation, name="resend_confirmation"),
    path("accounts/confirm/<str:token>/", accounts.confirm_email, name="confirm_email"),
    path("surveys/", author.survey_list, name="survey_list"),
    path("surveys/new/", author.survey_create, name="survey_create"),
    path("surveys/<int:survey_id>/", author.survey_detail, name="survey_detail"),
    path("surveys/<int:survey_id>/settings/", author.survey_settings, name="survey_settings"),
    path("surveys/<int:survey_id>/budget/", budget.budget_save, name="budget_save"),
    path("surveys/<int:survey_id>/questions/template/", presets.question_preset, name="question_preset"),
    path("surveys/<int:survey_id>/budget/preview/", budget.budget_preview, name="budget_preview"),
    path("surveys/<int:survey_id>/delete/", author.survey_delete, name="survey_delete"),
    path("surveys/<int:survey_id>/duplicate/", author.survey_duplicate, name="survey_duplicate"),
    path("surveys/<int:survey_id>/preview/", preview.survey_preview, name="survey_preview"),
    path("surveys/<int:survey_id>/preview/check/", preview.preview_check, name="survey_preview_check"),
    path("surveys/<int:survey_id>/open/", author.survey_open, name="survey_open"),
    path("surveys/<int:survey_id>/close/", author.survey_close, name="survey_close"),
    path("surveys/<int:survey_id>/recurrence/", rounds.survey_recurrence, name="survey_recurrence"),
    path("surveys/<int:survey_id>/rounds/next/", rounds.survey_next_round, name="survey_next_round"),
    path("surveys/<int:survey_id>/languages/", translations.survey_languages, name="survey_languages"),
    path(
        "surveys/<int:survey_id>/languages/<str:language>/",
        translations.survey_translations,
        name="survey_translations",
    ),
    path("surveys/<int:survey_id>/invitations/", invitations.invitation_links, name="invitations"),
    path("surveys/<int:survey_id>/invitations/mail/", invitations.invitation_emails, name="invitation_emails"),
    path("surveys/<int:survey_id>/invitations/remind/", invitations.invitation_reminders, name="invitation_reminders"),
    path("surveys/<int:survey_id>/webhooks/", webhooks.webhooks, name="webhooks"),
    path("surveys/<int:survey_id>/webhooks/<int:webhook_id>/test/", webhooks.webhook_test, name="webhook_test"),
    path("surveys/<int:survey_id>/webhooks/<int:webhook_id>/toggle/", webhooks.webhook_toggle, name="webhook_toggle"),
    path("surveys/<int:survey_id>/webhooks/<int:webhook_id>/delete/", webhooks.webhook_delete, name="webhook_delete"),
    path("surveys/<int:survey_id>/questions/new/", author.question_add, name="question_add"),
    path("surveys/<int:survey_id>/questions/cost/", author.question_cost_preview, name="question_cost_preview"),
    path("surveys/<int:survey_id>/questions/<int:question_id>/", author.question_card, name="question_card"),
    path("surveys/<int:survey_id>/questions/<int:question_id>/edit/", author.question_edit, name="question_edit"),
    path("surveys/<int:survey_id>/questions/<int:question_id>/delete/", author.question_delete, name="question_delete"),
    path("surveys/<int:survey_id>/questions/<int:question_id>/move/", author.question_move, name="question_move"),
    path("surveys/<int:survey_id>/questions/<int:question_id>/logic/", branching.question_logic, name="question_logic"),
    path("surveys/<int:survey_id>/sampling/", sampling.survey_sampling, name="survey_sampling"),
    path("surveys/<int:survey_id>/pairs/new/", blocks.pair_add, name="pair_add"),
    path("surveys/<int:survey_id>/matrices/new/", blocks.matrix_add, name="matrix_add"),
    path("surveys/<int:survey_id>/matrices/<int:matrix_id>/move/", blocks.matrix_move, name="matrix_move"),
    path("surveys/<int:survey_id>/matrices/<int:matrix_id>/edit/", blocks.matrix_edit, name="matrix_edit"),
    path("surveys/<int:survey_id>/matrices/<int:matrix_id>/delete/", blocks.matrix_delete, name="matrix_delete"),
    path("surveys/<int:survey_id>/results/", dashboard.survey_results, name="survey_results"),
    path("surveys/<int:survey_id>/results/crosstab/", crosstab.survey_crosstab, name="survey_crosstab"),
    path("surveys/<int:survey_id>/results/analysis/", analysis.survey_analysis, name="survey_analysis"),
    path("surveys/<int:survey_id>/export/analysis.json", analysis.export_analysis, name="export_analysis"),
    path("surveys/<int:survey_id>/power/", analysis.survey_power, name="survey_power"),
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
    path("surveys/<int:survey_id>/export/reports.sav", stats_exports.export_sav, name="export_sav"),
    path("surveys/<int:survey_id>/export/reports.dta", stats_exports.export_dta, name="export_dta"),
    path("surveys/<int:survey_id>/export/analysis.R", stats_exports.export_r, name="export_r"),
    path("surveys/<int:survey_id>/export/survey.xlsx", exports.export_reports, {"fmt": "xlsx"}, name="export_workbook"),
    path("surveys/<int:survey_id>/exports/", exports.exports_page, name="exports"),
    path("surveys/<int:survey_id>/exports/<int:job_id>/", exports.export_download, name="export_download"),
    path(
        "surveys/<int:survey_id>/export/synthetic-<int:question_id>-v<int:version>.csv",
        exports.export_synthetic,
        name="export_synthetic",
    ),
    path("workspaces/", workspaces.workspace_list, name="workspace_list"),
    path("workspaces/join/<str:token>/", workspaces.workspace_join, name="workspace_join"),
    path("workspaces/<int:workspace_id>/", workspaces.workspace_detail, name="workspace_detail"),
    path("workspaces/<int:workspace_id>/invite/", workspaces.workspace_invite, name="workspace_invite"),
    path(
        "workspaces/<int:workspace_id>/invitations/<int:invitation_id>/withdraw/",
        workspaces.workspace_invitation_revoke,
        name="workspace_invitation_revoke",
    ),
    path(
        "workspaces/<int:workspace_id>/members/<int:membership_id>/role/",
        workspaces.workspace_member_role,
        name="workspace_member_role",
    ),
    path(
        "workspaces/<int:workspace_id>/members/<int:membership_id>/remove/",
        workspaces.workspace_member_remove,
        name="workspace_member_remove",
    ),
    path("workspaces/<int:workspace_id>/surveys/add/", workspaces.workspace_add_survey, name="workspace_add_survey"),
    path(
        "workspaces/<int:workspace_id>/surveys/new/", workspaces.workspace_survey_create, name="workspace_survey_create"
    ),
    path("r/<str:slug>/", dashboard.public_results, name="public_results"),
    path("r/<str:slug>/crosstab/", crosstab.public_crosstab, name="public_crosstab"),
    path("s/<str:slug>/", respond.respond, name="respond"),
    path("s/<str:slug>/transparency/", transparency.transparency, name="transparency"),
]
