"""The rule that heavy work never runs inside a web request, checked where the work starts.

:class:`RequestGuardMiddleware` marks the request's context; :func:`off_request_path` raises
inside it unless a job is running there (the ``sync`` transport of tests). Exports, decoding,
mail and scheduled rounds call it first, so a view that calls them inline fails loudly in tests
and in production alike instead of holding a worker for minutes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

from django.http import HttpRequest, HttpResponse

_in_request: ContextVar[bool] = ContextVar("murmur_in_request", default=False)
_in_job: ContextVar[bool] = ContextVar("murmur_in_job", default=False)


class InlineWorkError(RuntimeError):
    """Work meant for a job was started inside a web request."""


def off_request_path(what: str) -> None:
    """Raise :class:`InlineWorkError` if called inside a web request and not inside a job."""
    if _in_request.get() and not _in_job.get():
        raise InlineWorkError(f"{what} runs in a job (surveys.jobs), never inside a web request")


@contextlib.contextmanager
def in_job() -> Iterator[None]:
    """Within this block a job runs: :func:`off_request_path` lets its work through."""
    token = _in_job.set(True)
    try:
        yield
    finally:
        _in_job.reset(token)


@contextlib.contextmanager
def in_request() -> Iterator[None]:
    token = _in_request.set(True)
    try:
        yield
    finally:
        _in_request.reset(token)


class RequestGuardMiddleware:
    """Marks every request's context, so that :func:`off_request_path` knows it is in one."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with in_request():
            return self.get_response(request)
