"""What the server's log lines may say: never a secret a URL carries, never what a form held.

Every handler of Murmur's logging (``settings.LOGGING``) passes records through
:class:`RedactSecrets`, which rewrites the formatted message before it is written:

- a query string becomes ``?[…]`` (the builder's live preview used to send the draft's text and
  the form's CSRF token as one; it is a POST now, but no GET form's fields reach a log either);
- a share link's or a published results page's slug becomes ``[slug]``: it is the survey's
  capability, and whoever reads the log should not be able to answer or read the survey;
- a password-reset or address-confirmation link's tokens become ``[token]``.

Submission bodies (page tokens, reports) and form posts are never logged: Django logs a request's
method, path, status and size, and the path is redacted as above. docs/deployment.md lists what is
logged and how long to keep it.
"""

from __future__ import annotations

import logging
import re

_PATTERNS = [
    (re.compile(r"\?[^\s\"']*"), "?[…]"),
    (re.compile(r"(/[sr]/)[^/\s\"'?]+"), r"\1[slug]"),
    (re.compile(r"(/accounts/(?:reset|confirm)/)[^\s\"'?]+"), r"\1[token]"),
]


def redact(text: str) -> str:
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class RedactSecrets(logging.Filter):
    """Rewrite the record's message with :func:`redact`; the record itself is kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            message = str(record.msg)
        redacted = redact(message)
        if redacted != message or record.args:
            record.msg, record.args = redacted, ()
        return True
