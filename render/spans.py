"""Line ranges, and the one measurement completeness rests on: which wanted spans were not sent."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


class InvalidSpanError(ValueError):
    """A line range that cannot exist (start < 1 or end < start)."""


@dataclass(frozen=True, order=True)
class LineRange:
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.start < 1 or self.end < self.start:
            raise InvalidSpanError(f"invalid line range {self.start}-{self.end}")

    @property
    def lines(self) -> int:
        return self.end - self.start + 1

    def label(self) -> str:
        return str(self.start) if self.start == self.end else f"{self.start}-{self.end}"


@dataclass(frozen=True)
class WantedSpan:
    """A span a file section set out to deliver: an evidence range or an entity's definition."""

    range: LineRange
    name: str


def merge(ranges: Iterable[LineRange]) -> list[LineRange]:
    """Sorted, with overlapping and adjacent ranges joined (10-20 and 21-30 become 10-30)."""
    merged: list[LineRange] = []
    for r in sorted(ranges):
        if merged and r.start <= merged[-1].end + 1:
            merged[-1] = LineRange(merged[-1].start, max(merged[-1].end, r.end))
        else:
            merged.append(r)
    return merged


def subtract(ranges: Iterable[LineRange], removed: Iterable[LineRange]) -> list[LineRange]:
    """The parts of `ranges` outside every range of `removed`."""
    out: list[LineRange] = []
    cuts = merge(removed)
    for r in merge(ranges):
        start = r.start
        for c in cuts:
            if c.end < start or c.start > r.end:
                continue
            if c.start > start:
                out.append(LineRange(start, c.start - 1))
            start = max(start, c.end + 1)
        if start <= r.end:
            out.append(LineRange(start, r.end))
    return out


def line_count(ranges: Iterable[LineRange]) -> int:
    return sum(r.lines for r in merge(ranges))


def elided_wanted_spans(wanted: Sequence[WantedSpan], sent: Sequence[LineRange],
                        back_referenced: Sequence[LineRange] = ()) -> list[WantedSpan]:
    """The wanted spans not fully covered by the ranges sent in the section plus those it refers
    back to (sent earlier in the same pack); adjacent ranges join. Any code path that elides source
    shows up here, including paths added later: completeness is measured, not flagged."""
    cover = merge([*sent, *back_referenced])
    return sorted((w for w in wanted if not any(c.start <= w.range.start and w.range.end <= c.end for c in cover)),
                  key=lambda w: (w.range, w.name))
