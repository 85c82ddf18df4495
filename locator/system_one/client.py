"""The one door through which locators reach System One: cache, validation, metering, trace."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, fields
from typing import Any

from locator.system_one.backend import Backend
from locator.system_one.cache import DecisionCache, decision_key
from locator.system_one.wire import Question, Request, Response, validate_response
from locator.trace import EventKind, Trace


@dataclass(frozen=True)
class UsageTotals:
    """Logical = what the algorithm asked; physical = what reached the backend."""

    logical_calls: int = 0
    logical_input_tokens: int = 0
    logical_output_tokens: int = 0
    physical_calls: int = 0
    physical_input_tokens: int = 0
    physical_output_tokens: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    model_wall_time_ms: float = 0.0

    def __sub__(self, other: "UsageTotals") -> "UsageTotals":
        return UsageTotals(**{f.name: getattr(self, f.name) - getattr(other, f.name) for f in fields(self)})

    def __add__(self, other: "UsageTotals") -> "UsageTotals":
        return UsageTotals(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})


class SystemOne:
    def __init__(self, backend: Backend, model: str, cache: DecisionCache | None = None, trace: Trace | None = None):
        self.backend = backend
        self.model = model
        self.cache = cache
        self.trace = trace
        self._lock = threading.Lock()
        self._totals = UsageTotals()

    def _add(self, delta: UsageTotals) -> None:
        with self._lock:
            self._totals = self._totals + delta

    def totals(self) -> UsageTotals:
        with self._lock:
            return self._totals

    def ask(self, state: dict[str, Any], questions: dict[str, Question]) -> Response:
        request = Request(state=state, model=self.model, questions=questions)
        key = decision_key(self.backend.identity, request) if self.cache is not None else None
        cached = self.cache.get(key) if key is not None else None
        if self.trace is not None:
            self.trace.emit(EventKind.REQUEST, key=key, questions={k: q.model_dump(mode="json") for k, q in questions.items()})
        if cached is not None:
            response = validate_response(request, cached)
            self._add(UsageTotals(1, response.usage.input_tokens, response.usage.output_tokens, cache_hits=1))
        else:
            started = time.perf_counter()
            response = validate_response(request, self.backend.answer(request))
            wall_ms = (time.perf_counter() - started) * 1000
            if key is not None and self.cache is not None:
                response = self.cache.put(key, self.backend.identity, response)
            usage = response.usage
            self._add(
                UsageTotals(
                    1, usage.input_tokens, usage.output_tokens,
                    1, usage.input_tokens, usage.output_tokens,
                    cache_hits=0, cache_misses=1 if key is not None else 0, model_wall_time_ms=wall_ms,
                )
            )
        if self.trace is not None:
            self.trace.emit(
                EventKind.ANSWER,
                key=key,
                cached=cached is not None,
                answers={k: a.model_dump(mode="json") for k, a in response.answers.items()},
                usage=response.usage.model_dump(mode="json"),
            )
        return response
