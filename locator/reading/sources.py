"""Action sources: each proposes the ReadRanges of one kind for a file's current state. The reader
asks its sources in their YAML order (`locator.reader.sources`, a dict, so each is overridable
from the command line) and offers the first `max_actions` of what they propose."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import Field

from locator.reading.actions import Provenance, ReadRange
from locator.reading.state import FileState
from locator.settings import Settings
from locator.windows import LineRange, tiles


@runtime_checkable
class ActionSource(Protocol):
    def propose(self, state: FileState) -> list[ReadRange]: ...


class HotspotExpansions(Settings):
    """Before/after expansions of `expand_lines` around up to `max_hotspots` disconnected regions of
    observations at or above `hotspot_threshold`, each described (`FileState.describe`) and shown
    with up to `context_chars` of the observed text it continues from."""

    expand_lines: int = Field(ge=1)
    max_hotspots: int = Field(ge=1)
    hotspot_threshold: float = Field(ge=0.0, le=1.0)
    context_chars: int = Field(ge=0)

    def propose(self, state: FileState) -> list[ReadRange]:
        found = []
        for h, spot in enumerate(state.hotspots(self.hotspot_threshold, self.max_hotspots)):
            edge_before = (state.signatures or {}).get(spot.start_line, "")
            for provenance, span in (
                (Provenance.BEFORE, LineRange(max(1, spot.start_line - self.expand_lines), spot.start_line - 1)),
                (Provenance.AFTER, LineRange(spot.end_line + 1, min(state.line_count, spot.end_line + self.expand_lines))),
            ):
                if span.end_line >= span.start_line and state.unread_segments(span):
                    near = next((o.content for o in state.observations if o.span.overlaps(spot)), edge_before)
                    found.append(ReadRange(f"{provenance.value}{h}", span, provenance,
                                           f"{provenance.value} hotspot {spot.label()}: {span.label()}\n"
                                           f"{state.describe(span)}\ncontinues from:\n{near[: self.context_chars]}"))
        return found


class Windows(Settings):
    """The file's unread `window_lines` windows, each described by the definitions it holds."""

    window_lines: int = Field(ge=1)

    def propose(self, state: FileState) -> list[ReadRange]:
        return [ReadRange(f"w{w}", window, Provenance.WINDOW, f"{window.label()}\n{state.describe(window)}")
                for w, window in enumerate(tiles(state.line_count, self.window_lines)) if state.unread_segments(window)]
