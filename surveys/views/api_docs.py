"""The organizer API's reference, rendered on the server from its OpenAPI schema.

Swagger UI and ReDoc load their scripts from a CDN, which the Content-Security-Policy forbids
(:mod:`surveys.headers`); this page lists the same operations as plain HTML instead, and links the
schema itself (``/api/v1/openapi.json``) for tools that render or generate clients from it.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from surveys.api import api

METHODS = ("get", "post", "put", "patch", "delete")


def _schema_name(content: dict[str, Any]) -> str:
    schema = content.get("application/json", {}).get("schema", {})
    ref = schema.get("$ref") or schema.get("items", {}).get("$ref", "")
    name = ref.rsplit("/", 1)[-1]
    return f"[{name}]" if name and "items" in schema else name


@require_GET
def api_docs(request: HttpRequest) -> HttpResponse:
    schema = json.loads(json.dumps(api.get_openapi_schema()))
    operations = []
    for path, item in schema["paths"].items():
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            responses = operation.get("responses", {})
            success = next((code for code in sorted(responses) if code.startswith("2")), "")
            operations.append(
                {
                    "method": method.upper(),
                    "path": path,
                    "summary": operation.get("summary", ""),
                    "description": operation.get("description", ""),
                    "writes": any("WriteToken" in scheme for scheme in operation.get("security", [])),
                    "body": _schema_name(operation.get("requestBody", {}).get("content", {})),
                    "success": success,
                    "returns": _schema_name(responses.get(success, {}).get("content", {})),
                    "tag": (operation.get("tags") or [""])[0],
                }
            )
    components = {
        name: json.dumps(body, indent=1, ensure_ascii=False) for name, body in schema["components"]["schemas"].items()
    }
    context = {"title": schema["info"]["title"], "operations": operations, "components": components}
    return render(request, "surveys/api_docs.html", context)
