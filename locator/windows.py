"""Line windows over a file (1-based, inclusive)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class LineRange:
    start_line: int
    end_line: int

    def overlaps(self, other: "LineRange") -> bool:
        return self.start_line <= other.end_line and other.start_line <= self.end_line

    def label(self) -> str:
        return f"lines {self.start_line}-{self.end_line}"


def tiles(n_lines: int, size: int) -> list[LineRange]:
    """Disjoint windows covering the file; the last one may be shorter."""
    return [LineRange(s, min(s + size - 1, n_lines)) for s in range(1, n_lines + 1, size)]


def sliding(n_lines: int, size: int, stride: int) -> list[LineRange]:
    """Overlapping windows of `size` lines every `stride` lines; the last one ends at the file end."""
    if n_lines <= 0:
        return []
    last_start = max(n_lines - size + 1, 1)
    starts = list(range(1, last_start + 1, stride))
    if starts[-1] != last_start:
        starts.append(last_start)
    return [LineRange(s, min(s + size - 1, n_lines)) for s in starts]
