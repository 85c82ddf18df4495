"""loclab's own System One server: any in-process backend behind the wire contract over HTTP.

One server lets the jobs of a sweep in several processes share one model and one decision cache,
and gives the `http` client a real endpoint to be tested against. Latency and faults can be
injected for benchmarks and reliability tests.
"""

from __future__ import annotations

import asyncio
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
from uvicorn.protocols.http.h11_impl import H11Protocol

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
    hold_until_in_flight: int = 0  # each answer waits until this many are in flight (or hold_timeout_s passed)
    hold_timeout_s: float = 30.0


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
    # Bodies held at once, all requests together: 256 bodies of 15 MB were admitted at once (3.8 GB).
    # Past it the answer is 503 with Retry-After, which clients retry.
    max_buffered_bytes: int = 64 * 1024 * 1024
    # A body not received in full this long after its first byte is refused with 408 (slowloris).
    body_timeout_s: float = 60.0


class BodySizeLimit:
    """ASGI middleware: the body is read here, up to `max_bytes`, before the app sees it; a body past
    that is refused with 413 whatever its Content-Length says (or whether it says anything); one that
    would take the bodies held at once past `max_buffered_bytes` is 503; one that trickles in slower
    than `timeout_s` is 408."""

    def __init__(self, app: Any, max_bytes: int, max_buffered_bytes: int, timeout_s: float):
        self.app = app
        self.max_bytes, self.max_buffered_bytes, self.timeout_s = max_bytes, max_buffered_bytes, timeout_s
        self.buffered = 0  # one event loop: no lock

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _refuse(send, 413, f"request body larger than {self.max_bytes} bytes")
            return
        held = 0
        try:
            chunks, more = [], True
            deadline = asyncio.get_running_loop().time() + self.timeout_s
            while more:
                try:
                    message = await asyncio.wait_for(receive(), deadline - asyncio.get_running_loop().time())
                except TimeoutError:
                    await _refuse(send, 408, f"request body not received within {self.timeout_s:g} s")
                    return
                if message["type"] != "http.request":
                    break
                chunks.append(message.get("body", b""))
                held += len(chunks[-1])
                self.buffered += len(chunks[-1])
                if held > self.max_bytes:
                    await _refuse(send, 413, f"request body larger than {self.max_bytes} bytes")
                    return
                if self.buffered > self.max_buffered_bytes:
                    await _refuse(send, 503, f"server busy: more than {self.max_buffered_bytes} bytes of request "
                                             "bodies held at once; retry", retry_after_s=1)
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
        finally:
            self.buffered -= held


async def _refuse(send: Any, status: int, detail: str, retry_after_s: int | None = None) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if retry_after_s is not None:
        headers.append((b"retry-after", str(retry_after_s).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class HeaderDeadline(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline for a request's headers, from the moment the
    connection opens or the previous response ends: uvicorn closes an idle keep-alive socket, but waits
    forever on a connection that sends nothing, or headers a byte at a time (slowloris)."""

    header_timeout_s = 10.0
    _headers_due: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        if self.cycle is not before:  # a request's headers arrived
            self._disarm()

    def on_response_complete(self) -> None:
        self._arm()  # before uvicorn handles a pipelined request, whose headers then disarm it
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._headers_due = self.loop.call_later(self.header_timeout_s, self._headers_late)

    def _disarm(self) -> None:
        if self._headers_due is not None:
            self._headers_due.cancel()
            self._headers_due = None

    def _headers_late(self) -> None:
        if (self.cycle is None or self.cycle.response_complete) and not self.transport.is_closing():
            self.transport.close()


def header_deadline(seconds: float) -> type[HeaderDeadline]:
    """The protocol class uvicorn is given (`uvicorn.Config(http=...)`), with its deadline."""
    return type("HeaderDeadline", (HeaderDeadline,), {"header_timeout_s": seconds})


def create_app(backend: Backend, model: str, cache: DecisionCache | None, faults: FaultPlan, limits: Limits,
               api_key: str | None = None) -> FastAPI:
    @asynccontextmanager
    async def lifespan(_: FastAPI):
        to_thread.current_default_thread_limiter().total_tokens = limits.max_concurrent_requests
        yield

    app = FastAPI(title="loclab System One", docs_url=None, redoc_url=None, lifespan=lifespan)
    app.add_middleware(BodySizeLimit, max_bytes=limits.max_request_bytes, max_buffered_bytes=limits.max_buffered_bytes,
                       timeout_s=limits.body_timeout_s)
    stats = ServerStats()
    lock = threading.Lock()
    all_in = threading.Condition(lock)  # hold_until_in_flight: notified as each answer starts
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
            all_in.notify_all()
            if faults.hold_until_in_flight:
                all_in.wait_for(lambda: stats.in_flight >= faults.hold_until_in_flight, timeout=faults.hold_timeout_s)
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
