"""`system_one=http`: the wire contract spoken to a real endpoint (a hosted service, or loclab's
own `experiments.serve_system_one`)."""

from __future__ import annotations

import httpx
from pydantic import ValidationError

from locator.redact import redact
from locator.system_one.transport import RetryPolicy, bearer_headers, get_json, post_json
from locator.system_one.wire import InvalidAnswerError, Request, Response


class HttpBackend:
    def __init__(self, *, url: str, model: str, api_key_env: str | None, timeout_s: float, max_attempts: int,
                 backoff_initial_s: float, backoff_max_s: float, max_connections: int):
        self.url = url
        self.model = model
        self.api_key_env = api_key_env
        self.policy = RetryPolicy(max_attempts, backoff_initial_s, backoff_max_s, timeout_s)
        self._client = httpx.Client(limits=httpx.Limits(max_connections=max_connections))

    @property
    def identity(self) -> str:
        # The key is who pays, not what answers: it is never part of the identity (nor are URL credentials).
        return f"http:{redact(self.url)}:{self.model}"

    def served_identity(self) -> str | None:
        """What the endpoint says answers it (loclab's own server names its backend, code included, at
        /healthz); None for an endpoint that does not say. Asked once, before the first task, so an
        endpoint that is not there is said plainly, naming how to point at one or start one."""
        health = str(httpx.URL(self.url).copy_with(path="/healthz", query=None, fragment=None))
        body = get_json(self._client, health, {}, self.policy.timeout_s,
                        f"System One at {redact(self.url)} is not reachable ({{error}}): set LOCLAB_SYSTEM_ONE_URL "
                        "(system_one.backend.url) to a running endpoint, or start one with "
                        "`python -m experiments.serve_system_one system_one=lexical`")
        served = body.get("backend") if isinstance(body, dict) else None
        return redact(served) if isinstance(served, str) else None

    def answer(self, request: Request) -> Response:
        body = post_json(self._client, self.url, request.model_dump(mode="json"), bearer_headers(self.api_key_env), self.policy)
        try:
            return Response.model_validate(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise InvalidAnswerError(f"System One at {redact(self.url)} sent an invalid response: {where}: {first['msg']}") from None

    def close(self) -> None:
        self._client.close()
