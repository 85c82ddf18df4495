"""Per-run execution trace: a JSONL of events, kept apart from the result it explains."""

from __future__ import annotations

import json
import threading
import time
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import Field

from locator.files import write_atomically
from locator.task import Record


class EventKind(StrEnum):
    STAGE = "stage"
    REQUEST = "request"
    ANSWER = "answer"
    READ = "read"
    DECISION = "decision"


class ReadKind(StrEnum):
    RANGE = "range"  # consecutive lines of a file
    OUTLINE = "outline"  # the signature lines of a file's definitions
    SEARCH = "search"  # the hit lines of one bounded indexed search
    INDEX = "index"  # a whole file read to build a retrieval index (`index_lines`, not `lines`)


class TraceEvent(Record):
    schema_version: int = 1
    seq: int
    t_ms: float
    kind: EventKind
    data: dict[str, Any] = Field(default_factory=dict)


class Trace:
    """Collects events in memory (thread-safe); written once the task has finished."""

    def __init__(self) -> None:
        self._events: list[TraceEvent] = []
        self._lock = threading.Lock()
        self._t0 = time.perf_counter()

    def emit(self, kind: EventKind, **data: Any) -> None:
        with self._lock:
            self._events.append(
                TraceEvent(
                    seq=len(self._events),
                    t_ms=round((time.perf_counter() - self._t0) * 1000, 3),
                    kind=kind,
                    data=data,
                )
            )

    @property
    def events(self) -> list[TraceEvent]:
        with self._lock:
            return list(self._events)

    def text(self) -> str:
        """The trace as its file holds it: one JSON event a line."""
        return "".join(json.dumps(e.model_dump(mode="json"), sort_keys=True) + "\n" for e in self.events)

    def write(self, path: Path) -> None:
        write_atomically(path, self.text())


def read_trace(path: Path) -> list[TraceEvent]:
    return [
        TraceEvent.model_validate_json(line)
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
