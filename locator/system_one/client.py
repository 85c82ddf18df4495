"""The one door through which locators reach System One: cache, validation, concurrency,
metering (logical vs physical), price and trace."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from typing import Any, Callable, TypeVar

from locator.system_one import events
from locator.system_one.backend import Backend, Generating
from locator.system_one.cache import DecisionCache, decision_key, generation_key
from locator.system_one.sampling import Sampler
from locator.system_one.wire import (
    Generation, GenerationRequest, GenerationUnsupportedError, Question, Request, Response, Usage, validate_response,
)
from locator.trace import EventKind, Trace

Call = tuple[dict[str, Any], dict[str, Question]]
T = TypeVar("T")


@dataclass(frozen=True)
class UsageTotals:
    """Logical = what the algorithm asked; physical = what reached the backend."""

    logical_calls: int = 0
    logical_input_tokens: int = 0
    logical_output_tokens: int = 0
    physical_calls: int = 0
    physical_input_tokens: int = 0
    physical_output_tokens: int = 0
    physical_cached_input_tokens: int = 0  # of the physical input, what the backend's prefix cache held
    cache_hits: int = 0
    cache_misses: int = 0
    retries: int = 0
    truncated_prompts: int = 0  # prompts the backend cut to fit its model's context (local_llm's max_prompt_tokens)
    model_wall_time_ms: float = 0.0
    model_critical_path_ms: float = 0.0

    def __sub__(self, other: "UsageTotals") -> "UsageTotals":
        return UsageTotals(**{f.name: getattr(self, f.name) - getattr(other, f.name) for f in fields(self)})

    def __add__(self, other: "UsageTotals") -> "UsageTotals":
        return UsageTotals(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})


@dataclass(frozen=True)
class Pricing:
    """Provider prices per million tokens; a cost is only reported when both are known."""

    input_per_million_usd: float | None = None
    output_per_million_usd: float | None = None

    def usd(self, input_tokens: int, output_tokens: int) -> float | None:
        if self.input_per_million_usd is None or self.output_per_million_usd is None:
            return None
        return (input_tokens * self.input_per_million_usd + output_tokens * self.output_per_million_usd) / 1e6


def request_label(state: dict) -> str:
    """What a request is about, from its state: the stage, then its file and epoch (or its files), so a
    trace's spans can be told apart (`file_runtime pkg/core.py epoch 3`, `reading pkg/a.py and 3 more files`)."""
    parts = [str(state.get("stage", "request"))]
    about = state.get("file")
    if isinstance(about, dict):
        parts += [str(about.get("path")), *([f"epoch {about['epoch']}"] if "epoch" in about else [])]
    elif isinstance(about, str):
        parts.append(about)
    elif isinstance(state.get("reader"), dict) and state["reader"]:
        paths = list(state["reader"])
        more = len(paths) - 1
        parts.append(paths[0] + (f" and {more} more file{'s' if more > 1 else ''}" if more else ""))
    return " ".join(parts)


class SystemOne:
    def __init__(self, backend: Backend, model: str, cache: DecisionCache | None = None, trace: Trace | None = None,
                 max_concurrency: int = 1, pricing: Pricing | None = None, sampler: Sampler | None = None):
        """`sampler`: each decision drawn from the answer distribution (`locator.system_one.sampling`),
        after the cache, which keeps the distribution."""
        if max_concurrency < 1:
            raise ValueError("system_one.max_concurrency must be >= 1")
        self.backend = backend
        self.model = model
        self.cache = cache
        self.trace = trace
        self.max_concurrency = max_concurrency
        self.pricing = pricing or Pricing()
        self.sampler = sampler
        self._lock = threading.Lock()
        self._totals = UsageTotals()
        self._in_flight = 0
        self._busy_since = 0.0

    def _add(self, delta: UsageTotals) -> None:
        with self._lock:
            self._totals = self._totals + delta

    def totals(self) -> UsageTotals:
        with self._lock:
            return self._totals

    def _call_started(self) -> None:
        with self._lock:
            if self._in_flight == 0:
                self._busy_since = time.perf_counter()
            self._in_flight += 1

    def _call_ended(self) -> None:
        """The critical path is the wall time during which at least one backend call was in flight:
        true whether calls overlap inside one `ask_many` or come from concurrent callers (file runtimes)."""
        with self._lock:
            self._in_flight -= 1
            if self._in_flight == 0:
                busy_ms = (time.perf_counter() - self._busy_since) * 1000
                self._totals = self._totals + UsageTotals(model_critical_path_ms=busy_ms)

    def _emit(self, kind: EventKind, **data: Any) -> None:
        if self.trace is not None:
            self.trace.emit(kind, **data)

    def _on_backend_event(self, kind: str, **data: Any) -> None:
        if kind == "retry":
            self._add(UsageTotals(retries=1))
        elif kind == "truncated_prompt":
            self._add(UsageTotals(truncated_prompts=1))
        self._emit(EventKind.DECISION, system_one_event=kind, **data)

    def _backend_call(self, call: Callable[[], T]) -> tuple[T, float]:
        """One call that reaches the backend, with its wall time (ms), on the critical path and with
        the backend's events (retries) in the trace."""
        started = time.perf_counter()
        self._call_started()
        try:
            with events.sink(self._on_backend_event):
                value = call()
        finally:
            self._call_ended()
        return value, (time.perf_counter() - started) * 1000

    def _add_physical(self, usage: Usage, wall_ms: float) -> None:
        """A call that reached the backend: logical and physical both."""
        self._add(UsageTotals(1, usage.input_tokens, usage.output_tokens, 1, usage.input_tokens, usage.output_tokens,
                              physical_cached_input_tokens=usage.cached_input_tokens,
                              cache_misses=1 if self.cache is not None else 0, model_wall_time_ms=wall_ms))

    def _ask(self, state: dict[str, Any], questions: dict[str, Question]) -> Response:
        """One request, through the cache."""
        request = Request(state=state, model=self.model, questions=questions)
        # keyed even without a cache: the trace's keys are what a run's decision snapshot is built from
        key = decision_key(self.backend.identity, request)
        cached = self.cache.get(key) if self.cache is not None else None
        self._emit(EventKind.REQUEST, key=key, about=request_label(request.state),
                   questions={k: q.model_dump(mode="json") for k, q in questions.items()})
        if cached is not None:
            response = validate_response(request, cached)
            self._add(UsageTotals(1, response.usage.input_tokens, response.usage.output_tokens, cache_hits=1))
        else:
            response, wall_ms = self._backend_call(lambda: validate_response(request, self.backend.answer(request)))
            if self.cache is not None:
                response = self.cache.put(key, self.backend.identity, response)
            self._add_physical(response.usage, wall_ms)
        sampled = {}
        if self.sampler is not None:
            sampled = {"drawn_from": {k: a.model_dump(mode="json") for k, a in response.answers.items()}}
            response = self.sampler.draw(key, response)
        self._emit(
            EventKind.ANSWER, key=key, cached=cached is not None, model=response.model,
            answers={k: a.model_dump(mode="json") for k, a in response.answers.items()},
            usage=response.usage.model_dump(mode="json"), **sampled,
        )
        return response

    def generate(self, messages: list[dict[str, str]], max_tokens: int) -> Generation:
        """Free text, metered and traced like a decision (one model call, its tokens); through the
        decision cache under a key of the backend identity and the whole request."""
        inner = getattr(self.backend, "backend", self.backend)  # a BoundBackend wraps the real one
        if not isinstance(inner, Generating):
            raise GenerationUnsupportedError(
                f"System One backend {self.backend.identity.split(':')[0]} cannot generate text: use "
                "system_one=local_llm or system_one=openai_logprobs")
        request = GenerationRequest(model=self.model, messages=messages, max_tokens=max_tokens)
        key = generation_key(self.backend.identity, request)
        self._emit(EventKind.REQUEST, key=key, generate={"messages": messages, "max_tokens": max_tokens})
        cached = self.cache.get_generation(key) if self.cache is not None else None
        if cached is not None:
            generation = cached
            self._add(UsageTotals(1, generation.usage.input_tokens, generation.usage.output_tokens, cache_hits=1))
        else:
            generation, wall_ms = self._backend_call(lambda: inner.generate(request))
            if self.cache is not None:
                generation = self.cache.put_generation(key, self.backend.identity, generation)
            self._add_physical(generation.usage, wall_ms)
        self._emit(EventKind.ANSWER, key=key, cached=cached is not None, model=generation.model, text=generation.text,
                   usage=generation.usage.model_dump(mode="json"), truncated_prompt=generation.truncated_prompt)
        return generation

    def ask(self, state: dict[str, Any], questions: dict[str, Question]) -> Response:
        return self.ask_many([(state, questions)])[0]

    def ask_many(self, calls: list[Call]) -> list[Response]:
        """Independent requests, up to max_concurrency at once; answers in the order asked."""
        if self.max_concurrency == 1 or len(calls) <= 1:
            return [self._ask(state, questions) for state, questions in calls]
        with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(calls))) as pool:
            return list(pool.map(lambda call: self._ask(*call), calls))
