"""loclab's own System One server: any in-process backend behind the wire contract over HTTP.

One server lets the jobs of a sweep in several processes share one model and one decision cache,
and gives the `http` client a real endpoint to be tested against. Latency and faults can be
injected for benchmarks and reliability tests.
"""

from __future__ import annotations

import hmac
import json
import random
import threading
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from anyio import to_thread
from fastapi import Depends, FastAPI, Header, HTTPException
from fastapi.responses import JSONResponse, PlainTextResponse, Response as HttpResponse

from locator.system_one.backend import Backend
from locator.system_one.cache import DecisionCache, decision_key
from locator.system_one.lexical import MissingTaskTextError
from locator.system_one.wire import Request

Corruption = Literal["none", "malformed_json", "missing_answer", "probability_out_of_range", "choice_outside_criteria"]


@dataclass
class FaultPlan:
    """`fail_first`: statuses for the first requests, in order; then `fail_rate` of requests get
    `fail_status` (seeded); `corrupt` breaks every answer that is sent."""

    latency_ms: float = 0.0
    fail_first: list[int] = field(default_factory=list)
    fail_rate: float = 0.0
    fail_status: int = 503
    seed: int = 0
    corrupt: Corruption = "none"


@dataclass
class ServerStats:
    requests: int = 0
    faults: int = 0
    backend_calls: int = 0
    cache_hits: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0  # the most answers being worked on at once


def _corrupt(body: dict, how: Corruption) -> dict:
    answers = body["answers"]
    first = next(iter(answers), None)
    if how == "missing_answer" and first is not None:
        answers.pop(first)
    elif how == "probability_out_of_range" and first is not None:
        answers[first] = {"type": "noul", "noul": 1.7}
    elif how == "choice_outside_criteria":
        for key, answer in answers.items():
            if answer["type"] == "choice":
                answers[key] = {**answer, "choice": "__not_an_option__"}
    return body


@dataclass(frozen=True)
class Limits:
    """What one request may cost the server before it is even read: its body size and how many
    questions it holds (past either, the answer is 413); and how many are answered at once."""

    max_request_bytes: int
    max_questions: int
    # Answers are worked on in worker threads (a backend may block), by default 40: a job with more
    # requests in flight (tasks x max_concurrency) queued here behind them.
    max_concurrent_requests: int


class BodySizeLimit:
    """ASGI middleware: the body is read here, up to `max_bytes`, before the app sees it; a body past
    that is refused with 413 whatever its Content-Length says (or whether it says anything)."""

    def __init__(self, app: Any, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                await self._refuse(send)
                return
            more = message.get("more_body", False)
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Any) -> None:
        body = json.dumps({"detail": f"request body larger than {self.max_bytes} bytes"}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def create_app(backend: Backend, model: str, cache: DecisionCache | None, faults: FaultPlan, limits: Limits,
               api_key: str | None = None) -> FastAPI:
    @asynccontextmanager
    async def lifespan(_: FastAPI):
        to_thread.current_default_thread_limiter().total_tokens = limits.max_concurrent_requests
        yield

    app = FastAPI(title="loclab System One", docs_url=None, redoc_url=None, lifespan=lifespan)
    app.add_middleware(BodySizeLimit, max_bytes=limits.max_request_bytes)
    stats = ServerStats()
    lock = threading.Lock()
    rng = random.Random(faults.seed)

    def injected_fault() -> int | None:
        with lock:
            stats.requests += 1
            n = stats.requests
            if n <= len(faults.fail_first):
                status = faults.fail_first[n - 1]
            elif faults.fail_rate and rng.random() < faults.fail_rate:
                status = faults.fail_status
            else:
                return None
            stats.faults += 1
            return status

    @app.get("/healthz")
    def healthz() -> dict:
        return {"ok": True, "model": model, "backend": backend.identity}

    def authorized(authorization: str | None = Header(default=None)) -> None:
        # constant-time: the comparison's duration says nothing about how much of a guess was right
        if api_key is not None and not hmac.compare_digest((authorization or "").encode(), f"Bearer {api_key}".encode()):
            raise HTTPException(status_code=401, detail="missing or wrong bearer key")

    @app.get("/v1/stats", dependencies=[Depends(authorized)])
    def get_stats() -> dict:
        with lock:
            return dict(stats.__dict__)

    @app.post("/v1/answer", dependencies=[Depends(authorized)])
    def answer(request: Request) -> HttpResponse:
        with lock:
            stats.in_flight += 1
            stats.peak_in_flight = max(stats.peak_in_flight, stats.in_flight)
        try:
            return _answer(request)
        finally:
            with lock:
                stats.in_flight -= 1

    def _answer(request: Request) -> HttpResponse:
        if len(request.questions) > limits.max_questions:
            raise HTTPException(status_code=413, detail=f"{len(request.questions)} questions in one request; "
                                                        f"this server answers at most {limits.max_questions}")
        if faults.latency_ms:
            time.sleep(faults.latency_ms / 1000)
        status = injected_fault()
        if status is not None:
            return JSONResponse({"error": f"injected fault {status}"}, status_code=status)
        key = decision_key(backend.identity, request)
        cached = cache.get(key) if cache is not None else None
        with lock:
            stats.cache_hits += cached is not None
            stats.backend_calls += cached is None
        try:
            response = cached or backend.answer(request)
        except MissingTaskTextError as exc:  # the request lacks what the backend reads: 4xx, never retried
            raise HTTPException(status_code=422, detail=str(exc)) from None
        if cached is None and cache is not None:
            response = cache.put(key, backend.identity, response)
        body = response.model_dump(mode="json")
        if faults.corrupt == "malformed_json":
            return PlainTextResponse('{"model": "truncated', media_type="application/json")
        if faults.corrupt != "none":
            body = _corrupt(body, faults.corrupt)
        return HttpResponse(json.dumps(body), media_type="application/json")

    return app
