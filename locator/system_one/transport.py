"""JSON over HTTP with the retry policy every remote System One backend shares.

Transient statuses and transport errors are retried with exponential backoff (honouring
Retry-After) up to a bounded number of attempts; anything else fails at once with the server's
own message. The API key is sent as a bearer header and never appears in errors or events.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx

from locator.redact import REDACTED, redact, secret_from_env
from locator.system_one.events import notify

TRANSIENT_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
log = logging.getLogger("loclab.system_one")


class SystemOneUnavailableError(RuntimeError):
    """The endpoint failed: a non-transient status, or transient failures past the attempt limit."""


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 4
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 8.0
    timeout_s: float = 30.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1 or self.timeout_s <= 0 or self.backoff_initial_s < 0:
            raise ValueError("retry policy: max_attempts >= 1, timeout_s > 0, backoff_initial_s >= 0")

    def delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after is not None:
            try:
                return min(float(retry_after), self.backoff_max_s)
            except ValueError:
                pass
        return min(self.backoff_initial_s * 2 ** (attempt - 1), self.backoff_max_s)


def bearer_headers(api_key_env: str | None) -> dict[str, str]:
    if not api_key_env:
        return {}
    key = secret_from_env(api_key_env)
    if not key:
        raise SystemOneUnavailableError(f"System One API key: environment variable {api_key_env} is not set")
    return {"Authorization": f"Bearer {key}"}


ECHO_MIN_CHARS = 4  # the shortest piece of a key an endpoint's echo is scrubbed of


def without_echo(message: str, key: str | None) -> str:
    """An endpoint's message with what it echoes of the key removed: a 401 says "Incorrect API key
    provided: sk-ab**********9931zz", a head and a tail that `redact` (whole secrets) cannot see.
    Every head and tail of the key of ECHO_MIN_CHARS or more is replaced, longest first."""
    if not key:
        return message
    for size in range(len(key), ECHO_MIN_CHARS - 1, -1):
        for piece in {key[:size], key[-size:]}:
            if piece in message:
                message = message.replace(piece, REDACTED)
    return message


def _server_message(response: httpx.Response, key: str | None = None) -> str:
    try:
        body = response.json()
    except ValueError:
        return without_echo(response.text[:500], key)
    if isinstance(body, dict):
        detail = body.get("detail") or body.get("error") or body
        return without_echo(str(detail)[:500], key)
    return without_echo(str(body)[:500], key)


class _DeadlineExceeded(Exception):
    pass


def _within_deadline(client: httpx.Client, url: str, payload: dict[str, Any], headers: dict[str, str],
                     timeout_s: float) -> httpx.Response:
    """One attempt, answered whole within `timeout_s` or abandoned. httpx's timeout is per read: an
    endpoint that drips a byte a second never trips it. The attempt runs in a thread of its own, so
    the caller can stop waiting at the deadline; an abandoned attempt ends with its connection."""
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    def attempt() -> None:
        try:
            outcome["response"] = client.post(url, json=payload, headers=headers, timeout=timeout_s)
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            outcome["error"] = exc
        finally:
            finished.set()

    threading.Thread(target=attempt, name="system-one-request", daemon=True).start()
    if not finished.wait(timeout_s):
        raise _DeadlineExceeded
    if "error" in outcome:
        raise outcome["error"]
    return outcome["response"]


def get_json(client: httpx.Client, url: str, headers: dict[str, str], timeout_s: float, unreachable: str) -> Any:
    """An endpoint's JSON answer to one GET, asked before the first task (what it says it serves):
    None for a status that is not 200 or a body that is not JSON; an endpoint that is not there at all
    is `SystemOneUnavailableError` saying `unreachable`, its `{error}` the transport's error (and which
    setting to point elsewhere, or what to start)."""
    try:
        response = client.get(url, headers=headers, timeout=timeout_s)
    except httpx.TransportError as exc:
        raise SystemOneUnavailableError(unreachable.format(error=type(exc).__name__)) from None
    if response.status_code != 200:
        return None
    try:
        return response.json()
    except ValueError:
        return None


def post_json(client: httpx.Client, url: str, payload: dict[str, Any], headers: dict[str, str],
              policy: RetryPolicy) -> Any:
    """The endpoint's JSON answer. Every attempt has a total deadline of `policy.timeout_s` (headers
    and body), whatever pace the endpoint answers at."""
    last_problem = ""
    shown = redact(url)  # the URL may carry credentials: only its redacted form is ever written
    key = headers.get("Authorization", "").removeprefix("Bearer ").strip() or None
    for attempt in range(1, policy.max_attempts + 1):
        retry_after = None
        try:
            response = _within_deadline(client, url, payload, headers, policy.timeout_s)
        except _DeadlineExceeded:
            last_problem = f"timed out after {policy.timeout_s}s (no whole answer by the request's total deadline)"
        except httpx.TimeoutException as exc:
            last_problem = f"timed out after {policy.timeout_s}s ({type(exc).__name__})"
        except httpx.TransportError as exc:
            last_problem = redact(f"transport error: {type(exc).__name__}: {exc}")
        else:
            if response.status_code < 400:
                try:
                    return response.json()
                except ValueError:
                    raise SystemOneUnavailableError(
                        f"System One at {shown} answered {response.status_code} with a body that is not JSON: "
                        f"{response.text[:200]!r}"
                    ) from None
            if response.status_code not in TRANSIENT_STATUSES:
                raise SystemOneUnavailableError(
                    redact(f"System One at {shown} answered {response.status_code}: {_server_message(response, key)}")
                )
            last_problem = redact(f"status {response.status_code}: {_server_message(response, key)}")
            retry_after = response.headers.get("retry-after")
        if attempt == policy.max_attempts:
            break
        delay = policy.delay(attempt, retry_after)
        log.warning("System One at %s: %s; retry %d/%d in %.2fs", shown, last_problem, attempt, policy.max_attempts - 1, delay)
        notify("retry", url=shown, attempt=attempt, problem=last_problem, delay_s=delay)
        time.sleep(delay)
    raise SystemOneUnavailableError(
        f"System One at {shown} failed after {policy.max_attempts} attempts; last: {last_problem}"
    )
