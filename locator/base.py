"""The Locator protocol and the context every locator runs in.

The context owns the mechanics that must be identical for every algorithm: metered reads,
System One access, per-stage cost snapshots and the trace. An algorithm only decides.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from locator.repository import FileInfo, Outline, ReadResult, RepositoryView, SearchKind, SearchResult
from locator.result import FileCost, Handoff, Producer, ResultFile, StageCost, Tokens
from locator.system_one.client import SystemOne, UsageTotals
from locator.system_one.wire import ANSWER_TYPES, Answer, Question, Response, expect_answer
from locator.task import Task
from locator.trace import EventKind, ReadKind, Trace


T = TypeVar("T")
A = TypeVar("A")


@dataclass(frozen=True)
class LocatorOutput:
    files: list[ResultFile]
    confidence_semantics: str
    producer: Producer | None = None  # None: loclab produced it
    cost_known: bool = True  # False for imported results: their cost is null, never invented
    ranked_modules: list[str] | None = None  # a producer's own module ranking (LocAgent found_modules)
    ranked_entities: list[str] | None = None  # a producer's own entity ranking (LocAgent found_entities)
    handoff: Handoff | None = None  # what the first stage ranked and passed on (the stage funnel)


@runtime_checkable
class Locator(Protocol):
    """`name` labels its runs. Optional attributes the runner honours: `uses_system_one = False`
    (its results do not depend on the System One backend), `input_identity` (a content hash of
    any input outside the config, part of the results' content address) and `check_inputs()`
    (validates such inputs once, before any task runs).

    A locator sees the code only through `ctx`: every line it is handed is metered and traced."""

    name: str

    def localize(self, task: Task, ctx: "LocatorContext") -> LocatorOutput: ...


class SystemOneRequiredError(RuntimeError):
    pass


@dataclass
class _StageDetails:
    values: dict[str, int | float | str | None] = field(default_factory=dict)
    files: list[FileCost] = field(default_factory=list)

    def set(self, **values: int | float | str | None) -> None:
        self.values.update(values)


class LocatorContext:
    """The only door from a locator to the code and to System One. The repository view is private:
    `read` and `outline` meter and trace every line they hand out."""

    def __init__(self, repo: RepositoryView, trace: Trace, system_one: SystemOne | None = None):
        self._repo = repo
        self.trace = trace
        self._system_one = system_one
        self.stages: list[StageCost] = []

    @property
    def system_one(self) -> SystemOne:
        if self._system_one is None:
            raise SystemOneRequiredError("this locator needs a System One backend (system_one=...)")
        return self._system_one

    def usage(self) -> UsageTotals:
        return self._system_one.totals() if self._system_one is not None else UsageTotals()

    def ask_many(self, calls: list[tuple[dict, dict[str, Question]]]) -> list[Response]:
        """Independent requests, concurrent up to system_one.max_concurrency; answers in order."""
        return self.system_one.ask_many(calls)

    def ask_keyed(self, calls: list[tuple[dict[str, Any], list[tuple[T, Question]]]], prefix: str,
                  expect: type[A] | None) -> list[tuple[T, A]]:
        """Questions about items, one request per (state, items) group, the requests concurrent;
        every answer type-checked (against `expect`, or, for a mixed request, None: against each
        question's type) and mapped back to its item, in the order asked. Keys are `prefix` + a
        number running across the groups. The one place requests are built."""
        keyed: list[tuple[str, T]] = []
        expected: dict[str, type] = {}
        requests = []
        for state, items in calls:
            questions = {}
            for item, question in items:
                key = f"{prefix}{len(keyed)}"
                questions[key] = question
                keyed.append((key, item))
                expected[key] = expect or ANSWER_TYPES[question.type]
            if questions:
                requests.append((state, questions))
        answers: dict[str, Answer] = {}
        for response in self.ask_many(requests):
            answers.update(response.answers)
        return [(item, expect_answer(answers[key], expected[key], key)) for key, item in keyed]

    def read(self, path: str, start_line: int = 1, end_line: int | None = None) -> ReadResult:
        result = self._repo.read(path, start_line, end_line)
        self.trace.emit(EventKind.READ, what=ReadKind.RANGE, path=result.path, start_line=result.start_line,
                        end_line=result.end_line, lines=len(result.lines))
        return result

    def index_read(self, path: str) -> ReadResult:
        """A whole file for an index: its lines are charged as `index_lines`, apart from lines read."""
        result = self._repo.index_read(path)
        self.trace.emit(EventKind.READ, what=ReadKind.INDEX, path=result.path, lines=0, index_lines=len(result.lines))
        return result

    def outline(self, path: str) -> Outline:
        """Definitions of a file with their signature lines; the signature lines count as read."""
        outline = self._repo.outline(path)
        self.trace.emit(EventKind.READ, what=ReadKind.OUTLINE, path=outline.path,
                        line_numbers=sorted(outline.signatures), lines=len(outline.signatures))
        return outline

    def search(self, query: str, kind: SearchKind, max_hits: int, max_response_tokens: int) -> SearchResult:
        """One bounded indexed search (definitions, or lines holding a word); each hit's line counts as read,
        the lines the index or scan behind it went over as `index_lines`."""
        index0 = self.index_lines()
        result = self._repo.search(query, kind, max_hits, max_response_tokens)
        self.trace.emit(EventKind.READ, what=ReadKind.SEARCH, query=query, search=kind.value,
                        hits=[[h.path, h.line] for h in result.hits], lines=len(result.hits),
                        index_lines=self.index_lines() - index0,
                        response_tokens=result.response_tokens, truncated=result.truncated)
        return result

    def stat(self, path: str) -> FileInfo:
        """Metadata only (size, line count): nothing is read."""
        return self._repo.stat(path)

    def lines_read(self) -> int:
        return self._repo.counters().lines

    def index_lines(self) -> int:
        return self._repo.counters().index_lines

    def decide(self, **data: object) -> None:
        self.trace.emit(EventKind.DECISION, **data)

    def candidate_files(self, suffixes: list[str] | tuple[str, ...] | None) -> list[FileInfo]:
        files = self._repo.files()
        if not suffixes:
            return files
        wanted = tuple(suffixes)
        return [f for f in files if f.path.endswith(wanted)]

    @contextmanager
    def stage(self, name: str) -> Iterator[_StageDetails]:
        details = _StageDetails()
        usage0, lines0, index0, t0 = self.usage(), self.lines_read(), self.index_lines(), time.perf_counter()
        self.trace.emit(EventKind.STAGE, name=name, event="start")
        try:
            yield details
        finally:
            used = self.usage() - usage0
            self.stages.append(
                StageCost(
                    name=name,
                    elapsed_ms=round((time.perf_counter() - t0) * 1000, 3),
                    model_calls=used.logical_calls,
                    tokens=Tokens(input=used.logical_input_tokens, output=used.logical_output_tokens),
                    source_lines_read=self.lines_read() - lines0,
                    index_lines=self.index_lines() - index0,
                    details=details.values,
                    files=details.files,
                )
            )
            self.trace.emit(EventKind.STAGE, name=name, event="end", **details.values)
