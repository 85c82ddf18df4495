"""The effect of a chosen read: its unread lines come through the metered context, then each
`evidence_lines` chunk of them is observed with one Noul question (one request per group)."""

from __future__ import annotations

from locator.base import LocatorContext
from locator.reading.actions import ReadRange
from locator.reading.evidence import OBSERVATION_INSTRUCTIONS
from locator.reading.state import FileState, Observation
from locator.system_one.wire import NoulAnswer, Question
from locator.windows import LineRange, tiles


def read_and_observe(ctx: LocatorContext, request_state, groups: list[list[FileState]],
                     selected: dict[FileState, ReadRange], evidence_lines: int) -> int:
    """Reads every selected range and records its observations; returns the requests sent."""
    calls = []
    for group in groups:
        items = []
        for s in group:
            s.rounds += 1
            for segment in s.unread_segments(selected[s].span):
                lines = ctx.read(s.path, segment.start_line, segment.end_line).lines
                s.read.append(segment)
                for chunk in tiles(len(lines), evidence_lines):
                    span = LineRange(chunk.start_line + segment.start_line - 1, chunk.end_line + segment.start_line - 1)
                    text = "".join(lines[chunk.start_line - 1 : chunk.end_line])
                    items.append(((s, span, text), Question(type="noul", instructions=OBSERVATION_INSTRUCTIONS,
                                                            criteria=f"{s.path} {span.label()}", content=text)))
        calls.append((request_state(group), items))
    answered = ctx.ask_keyed(calls, prefix="obs", expect=NoulAnswer)
    for (s, span, text), answer in answered:
        s.observations.append(Observation(span, answer.noul, text, s.rounds))
    return sum(1 for _, items in calls if items)
