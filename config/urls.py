from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from django.views.i18n import JavaScriptCatalog

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    # set_language: the header's language switcher posts here; the choice is kept in a cookie.
    path("i18n/", include("django.conf.urls.i18n")),
    # The browser's translations (our djangojs catalog only, not the admin's) as a same-origin script
    # defining gettext().
    path("jsi18n/", JavaScriptCatalog.as_view(packages=["surveys"]), name="javascript-catalog"),
    path("", include("surveys.urls")),
]
