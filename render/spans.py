"""Line ranges, and the one measurement completeness rests on: which wanted spans were not sent."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from locator.reading.state import merge_ranges
from locator.windows import LineRange


class InvalidSpanError(ValueError):
    """A line range that cannot exist (start < 1 or end < start)."""


def size(r: LineRange) -> int:
    return r.end_line - r.start_line + 1


def short_label(r: LineRange) -> str:
    """`120-160`, or `120` for one line (locator's `label()` words ranges for System One)."""
    return str(r.start_line) if r.start_line == r.end_line else f"{r.start_line}-{r.end_line}"


@dataclass(frozen=True)
class WantedSpan:
    """A span a file section set out to deliver: an evidence range or an entity's definition."""

    range: LineRange
    name: str

    def __post_init__(self) -> None:
        if self.range.start_line < 1 or self.range.end_line < self.range.start_line:
            raise InvalidSpanError(f"{self.name}: invalid line range {self.range.start_line}-{self.range.end_line}")


def merge(ranges: Iterable[LineRange]) -> list[LineRange]:
    """Sorted, with overlapping and adjacent ranges joined (10-20 and 21-30 become 10-30)."""
    return merge_ranges(list(ranges))


def subtract(ranges: Iterable[LineRange], removed: Iterable[LineRange]) -> list[LineRange]:
    """The parts of `ranges` outside every range of `removed`."""
    out: list[LineRange] = []
    cuts = merge(removed)
    for r in merge(ranges):
        start = r.start_line
        for c in cuts:
            if c.end_line < start or c.start_line > r.end_line:
                continue
            if c.start_line > start:
                out.append(LineRange(start, c.start_line - 1))
            start = max(start, c.end_line + 1)
        if start <= r.end_line:
            out.append(LineRange(start, r.end_line))
    return out


def line_count(ranges: Iterable[LineRange]) -> int:
    return sum(size(r) for r in merge(ranges))


def elided_wanted_spans(wanted: Sequence[WantedSpan], sent: Sequence[LineRange],
                        back_referenced: Sequence[LineRange] = ()) -> list[WantedSpan]:
    """The wanted spans not fully covered by the ranges sent in the section plus those it refers
    back to (sent earlier in the same pack); adjacent ranges join. Any code path that elides source
    shows up here, including paths added later: completeness is measured, not flagged."""
    cover = merge([*sent, *back_referenced])
    return sorted((w for w in wanted if not any(c.start_line <= w.range.start_line and w.range.end_line <= c.end_line for c in cover)),
                  key=lambda w: (w.range, w.name))
