"""The sign-up form."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm
from django.utils.translation import gettext_lazy as _


class SignUpForm(UserCreationForm):
    """A username, a password and an email address (required, one account per address): password
    resets and the address check before a first survey opens need it."""

    email = forms.EmailField(
        label=_("Email address"),
        help_text=_("We send a link to confirm it; you can open surveys once it is confirmed."),
    )

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")

    def clean_email(self) -> str:
        email = self.cleaned_data["email"]
        if get_user_model().objects.filter(email__iexact=email).exists():
            raise forms.ValidationError(_("An account with this email address already exists."))
        return email
