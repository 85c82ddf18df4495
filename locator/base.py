"""The Locator protocol and the context every locator runs in.

The context owns the mechanics that must be identical for every algorithm: metered reads,
System One access, per-stage cost snapshots and the trace. An algorithm only decides.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from locator.languages.sources import Selection, select
from locator.languages.tags import Definition
from locator.repository import (FileInfo, IndexedFile, Outline, ReadResult, RepositoryView, SearchKind,
                                SearchResult)
from locator.result import FileCost, Handoff, Producer, ResultFile, StageCost, Tokens
from locator.system_one.client import SystemOne, UsageTotals
from locator.system_one.wire import ANSWER_TYPES, Question, Response, expect_answer
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
class StageDetails:
    values: dict[str, int | float | str | None] = field(default_factory=dict)
    files: list[FileCost] = field(default_factory=list)
    counted: list[str] = field(default_factory=list)

    def set(self, **values: int | float | str | None) -> None:
        self.values.update(values)

    def count(self, **counts: int) -> None:
        """Details that are counts: a job's telemetry sums them over its tasks (`StageCost.counted`)."""
        self.values.update(counts)
        self.counted.extend(name for name in counts if name not in self.counted)


class LocatorContext:
    """The only door from a locator to the code and to System One. The repository view is not an
    attribute: the context's reading methods are closures over it, so a locator holds no handle to
    the view, its line cache or its listing — `read`, `outline`, `search`, `index_read` and
    `index_outline` meter and trace every line they hand out, `stat`, `source_files` and `files` give
    metadata only.

    `languages` are the task's declared languages (empty: every registered language the subject
    holds); `source_files` are its candidates in them, generated and vendored files apart, and a
    subject with none fails the task (`NoSourceFilesError`)."""

    def __init__(self, repo: RepositoryView, trace: Trace, system_one: SystemOne | None = None,
                 languages: tuple[str, ...] = ()):
        self.trace = trace
        self._system_one = system_one
        self._selection: Selection | None = None
        self.stages: list[StageCost] = []
        # the requests the endpoint takes at once: also how many independent per-file loops run at once
        self.concurrency = system_one.max_concurrency if system_one is not None else 1

        def read(path: str, start_line: int = 1, end_line: int | None = None) -> ReadResult:
            result = repo.read(path, start_line, end_line)
            trace.emit(EventKind.READ, what=ReadKind.RANGE, path=result.path, start_line=result.start_line,
                       end_line=result.end_line, lines=len(result.lines))
            return result

        def index_read(path: str) -> ReadResult:
            """A whole file for an index: its lines are charged as `index_lines`, apart from lines read."""
            result = repo.index_read(path)
            trace.emit(EventKind.READ, what=ReadKind.INDEX, path=result.path, lines=0, index_lines=len(result.lines))
            return result

        def index_outline(path: str) -> IndexedFile:
            """A whole file and its definitions for an index: charged as `index_read` is."""
            found = repo.index_outline(path)
            trace.emit(EventKind.READ, what=ReadKind.INDEX, path=found.read.path, lines=0,
                       index_lines=len(found.read.lines))
            return IndexedFile(found.read, partial(load_definitions, found))

        def load_definitions(found: IndexedFile) -> tuple[Definition, ...]:
            """An indexed file's definitions, loaded when an index first asks: the outline cache is read
            here, inside the door (the asking frame is the locator's)."""
            return found.load()

        def outline(path: str) -> Outline:
            """Definitions of a file with their signature lines; the signature lines count as read."""
            found = repo.outline(path)
            trace.emit(EventKind.READ, what=ReadKind.OUTLINE, path=found.path,
                       line_numbers=sorted(found.signatures), lines=len(found.signatures))
            return found

        def search(query: str, kind: SearchKind, max_hits: int, max_response_tokens: int) -> SearchResult:
            """One bounded indexed search (definitions, or lines holding a word); each hit's line counts as
            read, the lines the index or scan behind it went over as `index_lines`."""
            index0 = repo.counters().index_lines
            result = repo.search(query, kind, max_hits, max_response_tokens)
            trace.emit(EventKind.READ, what=ReadKind.SEARCH, query=query, search=kind.value,
                       hits=[[h.path, h.line] for h in result.hits], lines=len(result.hits),
                       index_lines=repo.counters().index_lines - index0,
                       response_tokens=result.response_tokens, truncated=result.truncated)
            return result

        def stat(path: str) -> FileInfo:
            """Metadata only (size, line count): nothing is read."""
            return repo.stat(path)

        def source_files() -> list[FileInfo]:
            """The task's candidate files: metadata only, chosen once per task."""
            if self._selection is None:
                self._selection = select([f.path for f in repo.files()], repo.marks, languages)
            return [repo.stat(path) for path in self._selection.paths]

        def files() -> list[FileInfo]:
            """Every readable file of the subject, any language (what a written reference may name)."""
            return repo.files()

        def lines_read() -> int:
            return repo.counters().lines

        def index_lines() -> int:
            return repo.counters().index_lines

        self.read, self.index_read, self.index_outline, self.outline = read, index_read, index_outline, outline
        self.search = search
        self.stat, self.source_files, self.files = stat, source_files, files
        self.lines_read, self.index_lines = lines_read, index_lines

    @property
    def selection(self) -> Selection | None:
        """The candidate files chosen for the task (None until a locator asked for them)."""
        return self._selection

    @property
    def system_one(self) -> SystemOne:
        if self._system_one is None:
            raise SystemOneRequiredError("this locator needs a System One backend (system_one=...)")
        return self._system_one

    def usage(self) -> UsageTotals:
        return self._system_one.totals() if self._system_one is not None else UsageTotals()

    def run_concurrently(self, run: Callable[[T], None], items: list[T]) -> None:
        """Independent work (a reader's per-file loops, each with one request in flight), `concurrency`
        at once, in the order given; an error in one is raised here."""
        if self.concurrency == 1 or len(items) <= 1:
            for item in items:
                run(item)
            return
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(items))) as pool:
            list(pool.map(run, items))

    def ask_many(self, calls: list[tuple[dict, dict[str, Question]]]) -> list[Response]:
        """Independent requests, concurrent up to system_one.max_concurrency; answers in order."""
        return self.system_one.ask_many(calls)

    def ask_keyed(self, calls: list[tuple[dict[str, Any], list[tuple[T, Question]]]], prefix: str,
                  expect: type[A] | None) -> list[tuple[T, A]]:
        """Questions about items, one request per (state, items) group, the requests concurrent;
        every answer type-checked (against `expect`, or, for a mixed request, None: against each
        question's type) and mapped back to its item, in the order asked. Keys are `prefix` + a
        number running within each request, so a request is the same whatever else is asked beside it
        (a file's request reads the same in one call over every batch as alone in its own chain).
        The one place requests are built."""
        keyed: list[list[tuple[str, T, type]]] = []  # per request sent: its keys, their items and answer types
        requests = []
        for state, items in calls:
            if not items:
                continue
            questions, mapped = {}, []
            for item, question in items:
                key = f"{prefix}{len(mapped)}"
                questions[key] = question
                mapped.append((key, item, expect or ANSWER_TYPES[question.type]))
            requests.append((state, questions))
            keyed.append(mapped)
        return [(item, expect_answer(response.answers[key], expected, key))
                for response, mapped in zip(self.ask_many(requests), keyed, strict=True) for key, item, expected in mapped]

    def decide(self, **data: object) -> None:
        self.trace.emit(EventKind.DECISION, **data)

    @contextmanager
    def stage(self, name: str) -> Iterator[StageDetails]:
        details = StageDetails()
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
                    counted=details.counted,
                    files=details.files,
                )
            )
            self.trace.emit(EventKind.STAGE, name=name, event="end", **details.values)
