"""Organizer accounts: an email address confirmed by a signed link before the first survey opens,
and every mail in the account's language.

The confirmation link carries ``signing.dumps({"user": id, "email": address})`` (salted, valid
for :data:`CONFIRM_MAX_AGE`); it confirms that address only, so changing the address voids it,
and it needs no stored token. Mail goes out in :attr:`Account.language`, the language the organizer
last used Murmur in (set at sign-up and at each log-in); English and Korean templates come from
the catalogs like every page.

A password reset answers in the same time whether or not the address belongs to an account: the
request only schedules one background task (:func:`in_background`), which looks the address up,
makes the link and sends the mail. No job queue is installed, so the task runs in a daemon
thread once the request's transaction has committed and its response has been sent; a worker
that dies first loses that mail, which the organizer can ask for again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import PasswordResetForm
from django.contrib.auth.models import AnonymousUser, User
from django.contrib.auth.signals import user_logged_in
from django.core import signing
from django.core.mail import send_mail
from django.core.signals import request_finished
from django.db import connections, transaction
from django.dispatch import receiver
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation

from surveys.models import Account

logger = logging.getLogger(__name__)

CONFIRM_SALT = "murmur.confirm-email"
CONFIRM_MAX_AGE = 3 * 24 * 3600


def email_unconfirmed(user: User | AnonymousUser) -> bool:
    """Whether ``user`` signed up and has not confirmed their address yet."""
    return bool(user.is_authenticated and Account.objects.filter(user=user, email_confirmed=False).exists())


def may_publish(user: User | AnonymousUser) -> bool:
    """Whether ``user`` may open a survey to respondents: not while their address is unconfirmed."""
    return not email_unconfirmed(user)


def mail_language(user: Any) -> str:
    account = Account.objects.filter(user=user).first()
    return account.language if account is not None else translation.get_language()


def confirmation_token(user: Any) -> str:
    return signing.dumps({"user": user.pk, "email": user.email}, salt=CONFIRM_SALT)


def confirm_email(token: str) -> Any | None:
    """Mark the token's address confirmed; return its user, or None for a bad, old or stale link."""
    try:
        data = signing.loads(token, salt=CONFIRM_SALT, max_age=CONFIRM_MAX_AGE)
    except (signing.BadSignature, ValueError):
        return None
    if not isinstance(data, dict) or set(data) != {"user", "email"} or not isinstance(data["user"], int):
        return None
    user = get_user_model().objects.filter(pk=data["user"], is_active=True).first()
    if user is None or not user.email or user.email != data["email"]:
        return None
    Account.objects.update_or_create(user=user, defaults={"email_confirmed": True})
    return user


def send_localized_mail(user: Any, subject_template: str, body_template: str, context: dict[str, Any]) -> None:
    """Render and send a plain-text mail to ``user`` in the language of their account."""
    with translation.override(mail_language(user)):
        subject = "".join(render_to_string(subject_template, context).splitlines())
        body = render_to_string(body_template, context)
    send_mail(subject, body, None, [user.email])


def send_confirmation(request: HttpRequest, user: Any) -> None:
    link = request.build_absolute_uri(reverse("confirm_email", args=[confirmation_token(user)]))
    context = {"user": user, "link": link, "days": CONFIRM_MAX_AGE // 86400}
    send_localized_mail(user, "registration/confirm_email_subject.txt", "registration/confirm_email.txt", context)


def in_background(task: Callable[[], None]) -> None:
    """Run ``task`` off the request path (``MAIL_IN_BACKGROUND``, on in production): in a daemon
    thread started once the transaction has committed *and* the response has been sent, so that
    not even its competition for the interpreter shows in the answer's time. Without the setting
    (development, where mail goes to the console), at once. The thread speaks the request's
    language and closes its own database connections."""
    if not settings.MAIL_IN_BACKGROUND:
        task()
        return
    language = translation.get_language()

    def run() -> None:
        try:
            with translation.override(language):
                task()
        except Exception:
            logger.exception("A background mail task failed.")
        finally:
            connections.close_all()

    def start() -> None:
        threading.Thread(target=run, name="murmur-mail", daemon=True).start()

    transaction.on_commit(lambda: _after_response.__dict__.setdefault("starts", []).append(start))


#: Per request-handling thread: the background tasks waiting for the response to be sent.
_after_response = threading.local()


@receiver(request_finished)
def start_background_tasks(**_: Any) -> None:
    """The response has been sent (Django sends request_finished when the server closes it)."""
    starts = _after_response.__dict__.pop("starts", [])
    for start in starts:
        start()


class LocalizedPasswordResetForm(PasswordResetForm):
    """Django's reset form, writing each mail in its recipient's language, in the background: the
    request does the same work for a known and an unknown address (see the module docstring)."""

    def save(
        self, domain_override: str | None = None, *args: Any, request: HttpRequest | None = None, **kwargs: Any
    ) -> None:
        # PasswordResetView passes every argument by keyword; the request stays here, its host goes on.
        if domain_override is None and request is not None:
            domain_override = request.get_host()
        send = super().save
        in_background(lambda: send(domain_override, *args, **kwargs))

    def send_mail(
        self,
        subject_template_name: str,
        email_template_name: str,
        context: dict[str, Any],
        from_email: str | None,
        to_email: str,
        html_email_template_name: str | None = None,
    ) -> None:
        with translation.override(mail_language(context["user"])):
            super().send_mail(
                subject_template_name, email_template_name, context, from_email, to_email, html_email_template_name
            )


@receiver(user_logged_in)
def remember_language(sender: Any, request: HttpRequest | None, user: Any, **_: Any) -> None:
    """Mail follows the language the organizer uses Murmur in."""
    if request is not None:
        Account.objects.filter(user=user).exclude(language=translation.get_language()).update(
            language=translation.get_language()
        )
