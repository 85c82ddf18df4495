"""Backend events (retries, faults) reach the asking task's trace without threading a trace
through every backend: SystemOne.ask installs a sink for the duration of the backend call."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

Sink = Callable[..., None]
_sink: ContextVar[Sink | None] = ContextVar("system_one_event_sink", default=None)


def notify(kind: str, **data: Any) -> None:
    sink = _sink.get()
    if sink is not None:
        sink(kind, **data)


@contextmanager
def sink(callback: Sink) -> Iterator[None]:
    token = _sink.set(callback)
    try:
        yield
    finally:
        _sink.reset(token)
