"""The organizer API, ``/api/v1/``: django-ninja, with its OpenAPI 3 schema at ``/api/v1/openapi.json``
and a server-rendered guide to it at ``/api/v1/docs/`` (:mod:`surveys.views.api_docs`).

Every error body is ``{"detail": "<sentence>", "fields": {...}}``: ``fields`` names, per input
field, why the builder's form refused it (422). docs/api.md is the guide, with curl examples.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError

from surveys.api import outreach, results, translations  # noqa: F401  (their operations register on the router)
from surveys.api.auth import Throttled
from surveys.api.routes import FormRefused, router


class OrganizerAPI(NinjaAPI):
    def get_openapi_operation_id(self, operation: Any) -> str:
        """Operation ids are the view functions' names (``list_surveys``), stable for generated clients."""
        return str(operation.view_func.__name__)


api = OrganizerAPI(
    title="Murmur organizer API",
    version="1",
    description=(
        "Build, open and close surveys under local differential privacy, invite respondents, and read "
        "estimates and exports. Authenticate with a personal access token: `Authorization: Bearer mur_…`."
    ),
    urls_namespace="api-v1",
    docs_url=None,
    openapi_url="/openapi.json",
)
api.add_router("/", router)


def _error(request: HttpRequest, status: int, detail: str, fields: dict[str, list[str]] | None = None) -> HttpResponse:
    return api.create_response(request, {"detail": detail, "fields": fields or {}}, status=status)


@api.exception_handler(FormRefused)
def form_refused(request: HttpRequest, exc: FormRefused) -> HttpResponse:
    return _error(request, 422, str(exc), exc.fields)


@api.exception_handler(Throttled)
def throttled(request: HttpRequest, exc: Throttled) -> HttpResponse:
    response = _error(request, 429, str(exc))
    response["Retry-After"] = str(exc.wait)
    return response


@api.exception_handler(AuthenticationError)
def unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    response = _error(request, 401, "A valid, unrevoked token is required: Authorization: Bearer mur_…")
    response["WWW-Authenticate"] = "Bearer"
    return response


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return _error(request, exc.status_code, str(exc))


@api.exception_handler(ValidationError)
def invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    fields: dict[str, list[str]] = {}
    for error in exc.errors:
        location: Any = error.get("loc", ())
        name = ".".join(str(part) for part in location[1:]) or "__all__"
        fields.setdefault(name, []).append(str(error.get("msg", "invalid")))
    return _error(request, 422, "The request does not match the schema; see fields.", fields)


@api.exception_handler(Http404)
def not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return _error(request, 404, "Not found.")
