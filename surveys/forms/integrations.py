"""Forms of the organizer API's tokens and of webhooks."""

from __future__ import annotations

from urllib.parse import urlsplit

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from surveys.integrations import ApiToken, Webhook


class ApiTokenForm(forms.Form):
    name = forms.CharField(
        label=_("Name"), max_length=100, help_text=_("What the token is for, e.g. “nightly estimates”.")
    )
    scope = forms.ChoiceField(label=_("Scope"), choices=ApiToken.Scope.choices, initial=ApiToken.Scope.READ)


class WebhookForm(forms.ModelForm):
    url = forms.URLField(label=_("Address (HTTPS)"), max_length=500, assume_scheme="https")

    class Meta:
        model = Webhook
        fields = ["url", "min_new_reports"]

    def clean_url(self) -> str:
        url: str = self.cleaned_data["url"]
        parts = urlsplit(url)
        local_test = parts.scheme == "http" and parts.hostname in getattr(settings, "WEBHOOK_HTTP_HOSTS", ())
        if parts.scheme != "https" and not local_test:
            raise forms.ValidationError(_("Give an HTTPS address: summaries are sent only encrypted."))
        return url

    def clean_min_new_reports(self) -> int:
        value: int = self.cleaned_data["min_new_reports"]
        if value < 1:
            raise forms.ValidationError(_("At least one new report."))
        return value
