"""Secrets never leave memory: every recorded form of a URL loses its credentials.

A System One URL may carry credentials (`http://user:pass@host/...`, `?api_key=...`). The request
itself needs them; nothing that is written may hold them — params, tags, logs, Hydra's saved
config, caches, artifacts, error messages. `redact` is applied at each of those sinks.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from typing import Any, TextIO
from urllib.parse import quote, quote_plus

REDACTED = "***"
# scheme://userinfo@  ->  scheme://***@
_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^/\s@'\"]+)@")
# ?token=... / &api_key=... (query parameters whose name says secret). MLflow's `viewStateShareKey`
# names a shared view (an experiment tag any reader of the experiment sees), not a credential.
_SECRET_QUERY = re.compile(
    r"(?P<name>[?&;](?!viewStateShareKey=)(?:[a-z0-9_-]*(?:key|token|secret|password|passwd|pwd|auth|signature|sig|credential)s?[a-z0-9_-]*)=)"
    r"(?P<value>[^&#\s'\"]+)", re.IGNORECASE)


# Secrets read from the environment in this process, in every form a sink might write them.
_SECRETS: list[str] = []
# Shorter values are too likely to be ordinary words to be scrubbed from every text.
_MIN_SECRET_CHARS = 6


def _forms(value: str) -> set[str]:
    """The ways `value` shows up when written: as is, stripped, escaped by repr or JSON (a trailing
    newline becomes `\\n`), URL-encoded."""
    forms = set()
    for v in {value, value.strip()}:
        forms |= {v, repr(v)[1:-1], json.dumps(v)[1:-1], quote(v, safe=""), quote_plus(v)}
    return {f for f in forms if len(f.strip()) >= _MIN_SECRET_CHARS}


def register_secret(value: str) -> None:
    """Redact `value`, in all its written forms, from everything `redact` sees from now on."""
    known = set(_SECRETS) | _forms(value)
    _SECRETS[:] = sorted(known, key=len, reverse=True)  # longest first: a form never leaves a tail behind


def secret_from_env(name: str) -> str | None:
    """The secret in environment variable `name`, registered for redaction; surrounding whitespace
    (a newline left by `echo` or a file) is stripped, since no bearer key or password contains it
    and an HTTP header cannot carry it."""
    raw = os.environ.get(name)
    if raw is None:
        return None
    register_secret(raw)
    return raw.strip() or None


def redact(text: str) -> str:
    """`text` with registered secrets, URL credentials and secret-named query values replaced by ***."""
    for secret in _SECRETS:
        if secret in text:
            text = text.replace(secret, REDACTED)
    if "://" not in text and "=" not in text:
        return text
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{REDACTED}@", text)
    return _SECRET_QUERY.sub(lambda m: f"{m['name']}{REDACTED}", text)


def redact_value(value):
    """Strings redacted; containers walked; anything else as is."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_value(v) for v in value)
    return value


def redact_logging() -> None:
    """Every log record created from now on, by any logger, carries its message redacted. A record
    factory (not a handler filter) because Hydra reconfigures logging handlers for the launcher and
    for each job; the factory survives that. Idempotent."""
    current = logging.getLogRecordFactory()
    if getattr(current, "redacts", False):
        return

    def factory(*args, **kwargs) -> logging.LogRecord:
        record = current(*args, **kwargs)
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        return record

    factory.redacts = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


class RedactingStream:
    """A text stream that redacts what is written to it (whole writes: Hydra and tracebacks write
    whole lines), delegating everything else to the wrapped stream."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def redact_std_streams() -> None:
    """Hydra writes a failed job's overrides straight to sys.stderr; wrap both streams once."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, RedactingStream):
            setattr(sys, name, RedactingStream(stream))
