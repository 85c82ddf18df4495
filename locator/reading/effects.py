"""Effects: a chosen read hands out its unread lines through the metered context; observations
are what System One is asked about them — per read (seed 000) or per fixed-size chunk."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import Field

from locator.base import LocatorContext
from locator.reading.actions import ReadRange
from locator.reading.questions import observation_question
from locator.reading.state import FileState, Observation, RawRead
from locator.settings import Settings
from locator.system_one.wire import NoulAnswer
from locator.task import Task
from locator.windows import LineRange, tiles


def read_unread(ctx: LocatorContext, state: FileState, span: LineRange, epoch: int) -> list[RawRead]:
    """One read effect: the span's lines not read before, each unread segment one metered read."""
    state.reads += 1
    found = []
    for segment in state.unread_segments(span):
        raw = RawRead(segment, tuple(ctx.read(state.path, segment.start_line, segment.end_line).lines), epoch)
        state.read.append(segment)
        state.raw.append(raw)
        found.append(raw)
    return found


class PerRead(Settings):
    """Seed 000: each new read is one observation, scored once with Noul."""

    def excerpts(self, raw: RawRead) -> list[tuple[LineRange, str]]:
        return [(raw.span, raw.text)]


class Chunked(Settings):
    """loclab's earlier reader: every `chunk_lines` lines of a read scored separately."""

    chunk_lines: int = Field(ge=1)

    def excerpts(self, raw: RawRead) -> list[tuple[LineRange, str]]:
        offset = raw.span.start_line - 1
        return [(LineRange(c.start_line + offset, c.end_line + offset), "".join(raw.lines[c.start_line - 1 : c.end_line]))
                for c in tiles(len(raw.lines), self.chunk_lines)]


@runtime_checkable
class Observe(Protocol):
    """What of a read System One is asked about (`locator.reader.observation`, by `_target_`)."""

    def excerpts(self, raw: RawRead) -> list[tuple[LineRange, str]]: ...


def read_and_observe(ctx: LocatorContext, request_state, groups: list[list[FileState]],
                     selected: dict[FileState, ReadRange], observe: Observe) -> int:
    """Reads every selected range and records its observations; returns the requests sent."""
    calls = []
    for group in groups:
        items = []
        for s in group:
            s.rounds += 1
            for raw in read_unread(ctx, s, selected[s].span, s.rounds):
                for span, text in observe.excerpts(raw):
                    items.append(((s, span, text), observation_question(s.path, span, text)))
        calls.append((request_state(group), items))
    answered = ctx.ask_keyed(calls, prefix="obs", expect=NoulAnswer)
    for (s, span, text), answer in answered:
        s.observations.append(Observation(span, answer.noul, text, s.rounds))
    return sum(1 for _, items in calls if items)


def score_reads(ctx: LocatorContext, task: Task, states: list[FileState],
                excerpts: dict[int, list[tuple[LineRange, str, int]]] | None = None) -> int:
    """The runtimes' final evidence scoring, after navigation ended (so it cannot steer it): one Noul
    per read (or per given (span, text, epoch) excerpt of a state, keyed by id), one request per
    file, the requests concurrent. Returns the requests sent."""
    calls: list[tuple[dict[str, Any], list]] = []
    for s in states:
        found = excerpts[id(s)] if excerpts is not None else [(raw.span, raw.text, raw.epoch) for raw in s.raw]
        items = [((s, span, text, epoch), observation_question(s.path, span, text)) for span, text, epoch in found]
        if items:
            calls.append(({"task": task.text, "stage": "evidence", "file": s.path}, items))
    for (s, span, text, epoch), answer in ctx.ask_keyed(calls, prefix="ev", expect=NoulAnswer):
        s.observations.append(Observation(span, answer.noul, text, epoch))
    return len(calls)
