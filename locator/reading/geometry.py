"""Range-only, content-agnostic actions (seed 000, "Range-only System One Runtime v0"): every
ReadRange is derived from the file's line count and what has been read, never from its content
(no AST, symbols, imports or keywords). An expansion shows the raw text it continues from, the
observation System One already saw, so it can judge the continuation."""

from __future__ import annotations

from pydantic import Field

from locator.reading.actions import Provenance, ReadRange
from locator.reading.state import FileState, merge_ranges
from locator.settings import Settings
from locator.windows import LineRange


class GeometryActions(Settings):
    """While nothing of a file is read: its head, middle and tail `window_lines` windows. Then: the
    same-size window before and after each read region, and up to `max_jumps` jumps into the
    middle of the largest unread regions an expansion cannot reach. Only ranges with unread lines."""

    window_lines: int = Field(ge=1)
    max_jumps: int = Field(ge=0)
    context_chars: int = Field(ge=0, description="raw text an expansion shows from the region it continues")

    def propose(self, state: FileState) -> list[ReadRange]:
        n, w = state.line_count, self.window_lines
        if n == 0:
            return []
        regions = merge_ranges(state.read)
        found: list[ReadRange] = []
        if not regions:
            middle = max(1, (n - w) // 2 + 1)
            for provenance, span in ((Provenance.SEED_HEAD, LineRange(1, min(w, n))),
                                     (Provenance.SEED_MIDDLE, LineRange(middle, min(n, middle + w - 1))),
                                     (Provenance.SEED_TAIL, LineRange(max(1, n - w + 1), n))):
                found.append(ReadRange(provenance.value, span, provenance, self._describe(state, provenance, span)))
        for i, region in enumerate(regions):
            before = LineRange(max(1, region.start_line - w), region.start_line - 1)
            after = LineRange(region.end_line + 1, min(n, region.end_line + w))
            for provenance, span, edge in ((Provenance.EXPAND_BEFORE, before, region.start_line),
                                           (Provenance.EXPAND_AFTER, after, region.end_line)):
                if span.end_line >= span.start_line:
                    found.append(ReadRange(f"{provenance.value}{i}", span, provenance,
                                           self._describe(state, provenance, span, region, self._text_at(state, edge, provenance))))
        for j, span in enumerate(self._jumps(state, regions)):
            found.append(ReadRange(f"jump{j}", span, Provenance.JUMP, self._describe(state, Provenance.JUMP, span)))
        unique: dict[LineRange, ReadRange] = {}
        for action in found:
            if state.unread_segments(action.span):
                unique.setdefault(action.span, action)  # head == middle == tail in a short file: offered once
        return list(unique.values())

    def _jumps(self, state: FileState, regions: list[LineRange]) -> list[LineRange]:
        """A window centred in what each unread gap leaves beyond one expansion from each read side."""
        if not regions:
            return []
        w, reach = self.window_lines, []
        for gap in state.unread_segments(LineRange(1, state.line_count)):
            start = gap.start_line + (w if gap.start_line > 1 else 0)
            end = gap.end_line - (w if gap.end_line < state.line_count else 0)
            if end >= start:
                reach.append(LineRange(start, end))
        reach.sort(key=lambda r: (-(r.end_line - r.start_line), r.start_line))
        jumps = []
        for r in reach[: self.max_jumps]:
            start = r.start_line + max(0, (r.end_line - r.start_line + 1 - w) // 2)
            jumps.append(LineRange(start, min(r.end_line, start + w - 1)))
        return sorted(jumps)

    def _text_at(self, state: FileState, line: int, provenance: Provenance) -> str:
        """The raw text read at the edge a region is expanded from (its first or last characters)."""
        for raw in reversed(state.raw):
            if raw.span.start_line <= line <= raw.span.end_line:
                return raw.text[: self.context_chars] if provenance is Provenance.EXPAND_BEFORE \
                    else raw.text[-self.context_chars :] if self.context_chars else ""
        return ""

    @staticmethod
    def _describe(state: FileState, provenance: Provenance, span: LineRange, region: LineRange | None = None,
                  edge_text: str = "") -> str:
        where = f"{provenance.value}: {state.path} {span.label()} of {state.line_count} " \
                f"({state.coverage_pct():.0f}% of the file read)"
        if region is None:
            return where
        return f"{where}\ncontinues read {region.label()}:\n{edge_text}"
