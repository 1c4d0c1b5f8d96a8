from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from surveys.accounts import LocalizedPasswordResetForm
from surveys.api import api
from surveys.responding.ratelimits import rate_limited
from surveys.teams import oidc
from surveys.views import catalog, health, respond

urlpatterns = [
    # The submit endpoint first: the busiest path resolves at the first pattern, not after about 80.
    path("s/<str:slug>/submit/", respond.submit, name="submit"),
    # Probes for load balancers (surveys/views/health.py): no login, no rate limit, no survey data.
    path("healthz", health.healthz, name="healthz"),
    path("ready", health.ready, name="ready"),
    # Both log-in forms are throttled by django-axes' authentication backend
    # (surveys/responding/ratelimits.py: LoginThrottle).
    path("admin/", admin.site.urls),
    path(
        "accounts/password_reset/",
        rate_limited("mail")(
            auth_views.PasswordResetView.as_view(
                form_class=LocalizedPasswordResetForm,
                email_template_name="registration/password_reset_email.txt",
                subject_template_name="registration/password_reset_subject.txt",
            )
        ),
        name="password_reset",
    ),
    path("accounts/", include("django.contrib.auth.urls")),
    # OpenID Connect sign-on (404 unless OIDC_RP_CLIENT_ID is set; surveys/teams/oidc.py).
    path("oidc/authenticate/", oidc.AuthenticateView.as_view(), name="oidc_authentication_init"),
    path("oidc/callback/", oidc.CallbackView.as_view(), name="oidc_authentication_callback"),
    # set_language: the header's language switcher posts here; the choice is kept in a cookie.
    path("i18n/", include("django.conf.urls.i18n")),
    # The browser's translations (our djangojs catalog only, not the admin's) as a same-origin script
    # defining gettext().
    path("jsi18n/", catalog.javascript_catalog, name="javascript-catalog"),
    # The organizer API (surveys/api/, docs/api.md): its schema at /api/v1/openapi.json.
    path("api/v1/", api.urls),
    path("", include("surveys.urls")),
]
