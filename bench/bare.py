"""The submit benchmark's baseline: a bare WSGI insert beside Murmur, in the same gunicorn.

``POST /bench/baseline/<slug>/`` never enters Django: no middleware, no URL resolution, no
request object, no token or report checks. It reads the body, takes each report's question id,
and inserts the rows a submission stores (one submission, one report per question, the report's
JSON as its bytes) in one transaction on a connection of its own (psycopg, one per worker
thread). It is the floor a submit endpoint cannot go below on this stack: the cost of the
rows, the HTTP server and the database. Everything else goes to Murmur's WSGI application.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
from collections.abc import Callable, Iterable
from typing import Any

import psycopg

from config.wsgi import application as murmur

PREFIX = "/bench/baseline/"
_local = threading.local()
#: slug -> (survey id, {question id: randomization id}), read once per process.
_targets: dict[str, tuple[int, dict[int, int]]] = {}


def _connection() -> psycopg.Connection[Any]:
    if getattr(_local, "connection", None) is None:
        # Behind PgBouncer in transaction mode (1.18) no prepared statements: psycopg's are per connection.
        pooled = os.environ.get("DATABASE_POOLER", "").lower() in ("1", "true", "yes", "on")
        _local.connection = psycopg.connect(
            os.environ["DATABASE_URL"], autocommit=True, prepare_threshold=None if pooled else 5
        )
    connection: psycopg.Connection[Any] = _local.connection
    return connection


def _target(slug: str) -> tuple[int, dict[int, int]]:
    if slug not in _targets:
        rows = (
            _connection()
            .execute(
                "SELECT s.id, q.id, r.id FROM surveys_survey s JOIN surveys_question q ON q.survey_id = s.id "
                "JOIN surveys_randomization r ON r.question_id = q.id WHERE s.slug = %s AND NOT r.retired",
                [slug],
            )
            .fetchall()
        )
        _targets[slug] = (rows[0][0], {question: randomization for _, question, randomization in rows})
    return _targets[slug]


def baseline(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    slug = environ["PATH_INFO"][len(PREFIX) :].strip("/")
    survey, randomizations = _target(slug)
    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    payload = json.loads(body)
    reports = payload["reports"]
    submission = secrets.randbits(62)
    with _connection().transaction():
        _connection().execute(
            "INSERT INTO surveys_submission (id, survey_id, received_hour, nonce) "
            "VALUES (%s, %s, date_trunc('hour', now()), %s)",
            [submission, survey, payload["token"][-32:]],
        )
        _connection().execute(
            "INSERT INTO surveys_report (survey_id, id, submission_id, question_id, randomization_id, packed) "
            "SELECT %s, * FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[], %s::bytea[])",
            [
                survey,
                [secrets.randbits(62) for _ in reports],
                [submission] * len(reports),
                [item["question"] for item in reports],
                [randomizations[item["question"]] for item in reports],
                [json.dumps(item["report"]).encode() for item in reports],
            ],
        )
    answer = json.dumps({"stored": len(reports)}).encode()
    start_response("201 Created", [("Content-Type", "application/json"), ("Content-Length", str(len(answer)))])
    return [answer]


def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    if environ.get("PATH_INFO", "").startswith(PREFIX) and environ.get("REQUEST_METHOD") == "POST":
        return baseline(environ, start_response)
    return murmur(environ, start_response)
