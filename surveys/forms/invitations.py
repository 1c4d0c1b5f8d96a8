"""Invitation links and mailed invitations."""

from __future__ import annotations

from django import forms
from django.core.validators import validate_email
from django.utils.translation import gettext_lazy as _

#: Most invitations made or mailed in one request.
MAX_INVITATIONS = 5000


class InvitationLinksForm(forms.Form):
    count = forms.IntegerField(
        label=_("Number of links"),
        min_value=1,
        max_value=MAX_INVITATIONS,
        initial=10,
        help_text=_("Each link accepts exactly one response. Links are shown once: copy them before leaving the page."),
    )


class InvitationEmailsForm(forms.Form):
    emails = forms.CharField(
        label=_("Email addresses"),
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text=_("One address per line (or separated by commas). Each is mailed its own link, once."),
    )

    def clean_emails(self) -> list[str]:
        raw = self.cleaned_data["emails"].replace(",", "\n").replace(";", "\n").split()
        addresses = sorted({a.strip().lower() for a in raw if a.strip()})
        invalid = [a for a in addresses if not _valid_email(a)]
        if invalid:
            raise forms.ValidationError(
                _("These are not email addresses: %(addresses)s") % {"addresses": ", ".join(invalid[:10])}
            )
        if not addresses:
            raise forms.ValidationError(_("Enter at least one email address."))
        if len(addresses) > MAX_INVITATIONS:
            raise forms.ValidationError(_("At most %(count)s addresses at a time.") % {"count": MAX_INVITATIONS})
        return addresses


def _valid_email(address: str) -> bool:
    try:
        validate_email(address)
    except forms.ValidationError:
        return False
    return True
