"""The respondent's privacy ledger page: an empty frame that the browser fills from its own storage.

The server renders the same page for everyone and never learns what is in a ledger:
``static/surveys/ledger-page.js`` reads it from this browser's localStorage
(``static/ldp/ledger.js``), where the answer page records each sent question's ε.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET


@require_GET
def ledger(request: HttpRequest) -> HttpResponse:
    return render(request, "surveys/ledger.html")
