from __future__ import annotations

from django.urls import path

from surveys.views import home

urlpatterns = [
    path("", home.home, name="home"),
]
