"""What the reader knows about one file: what it has read, what it observed, how it ended."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from locator.discovery import Candidate
from locator.result import FileCost
from locator.windows import LineRange


class Termination(StrEnum):
    """Why a file stopped being read; each names what happened."""

    BUDGET_EXHAUSTED = "budget_exhausted"  # the file's round budget (hard_rounds, or safety_epochs of a file runtime) ran out
    NO_NEW_EVIDENCE = "no_new_evidence"  # past soft_rounds, the last round found nothing new
    ACTION_SPACE_EXHAUSTED = "action_space_exhausted"  # nothing unread left to offer
    MODEL_STOP = "model_stop"  # System One chose the stop option
    NO_ACTION_ABOVE_THRESHOLD = "no_action_above_threshold"  # the chosen read's probability < action_threshold
    ALL_FILES_WAITING = "all_files_waiting"  # global: every remaining file chose to wait, nothing left to wait for
    SAFETY_BUDGET = "safety_budget"  # range runtime: the task's safety epochs ran out before System One stopped
    CONVERGED = "converged"  # semantic zoom: the selected regions are small and their roots stable


class Entry(StrEnum):
    """How a file entered the reader."""

    HANDOFF = "handoff"  # Phase 1 handed it off
    FOLLOW = "follow"  # a FollowFile action on another file's observations (locator/follow)


@dataclass(frozen=True)
class RawRead:
    """Lines a read effect handed out, as read: the runtimes' observation before any scoring."""

    span: LineRange
    lines: tuple[str, ...]
    epoch: int

    @property
    def text(self) -> str:
        return "".join(self.lines)


@dataclass(frozen=True)
class Observation:
    span: LineRange
    score: float
    content: str
    round: int


def merge_ranges(spans: list[LineRange]) -> list[LineRange]:
    """Overlapping or adjacent ranges joined, in order."""
    merged: list[LineRange] = []
    for span in sorted(spans):
        if merged and span.start_line <= merged[-1].end_line + 1:
            merged[-1] = LineRange(merged[-1].start_line, max(merged[-1].end_line, span.end_line))
        else:
            merged.append(span)
    return merged


@dataclass(eq=False)
class FileState:
    candidate: Candidate
    signatures: dict[int, str] | None  # None: actions are described by geometry (stat) alone
    read: list[LineRange] = field(default_factory=list)
    raw: list[RawRead] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    rounds: int = 0
    reads: int = 0  # read effects executed (a round or epoch may execute several)
    termination: Termination | None = None
    entry: Entry = Entry.HANDOFF
    followed_from: str | None = None  # the file whose observation it was followed from
    depth: int = 0  # follows from a handed-off file to this one

    @property
    def path(self) -> str:
        return self.candidate.info.path

    @property
    def line_count(self) -> int:
        return self.candidate.info.line_count

    def unread_segments(self, span: LineRange) -> list[LineRange]:
        segments, start = [], span.start_line
        for done in merge_ranges(self.read):
            if done.end_line < start or done.start_line > span.end_line:
                continue
            if done.start_line > start:
                segments.append(LineRange(start, done.start_line - 1))
            start = max(start, done.end_line + 1)
        if start <= span.end_line:
            segments.append(LineRange(start, span.end_line))
        return segments

    def hotspots(self, level: float, limit: int) -> list[LineRange]:
        """Disconnected regions of observations at or above `level`, the best `limit` of them."""
        regions = merge_ranges([o.span for o in self.observations if o.score >= level])
        best = {r: max(o.score for o in self.observations if o.score >= level and r.overlaps(o.span)) for r in regions}
        return sorted(regions, key=lambda r: (-best[r], r.start_line))[:limit]

    def describe(self, span: LineRange) -> str:
        """The definitions a span holds (outline) or, from stat alone, where it lies and how much is read."""
        if self.signatures is None:
            return f"{span.label()} of {self.line_count}; {self.coverage_pct():.0f}% of the file read"
        lines = [self.signatures[n].strip() for n in sorted(self.signatures) if span.start_line <= n <= span.end_line]
        return "\n".join(lines) if lines else "(no definitions start here)"

    def coverage_pct(self) -> float:
        return 100.0 * self.lines_read() / self.line_count if self.line_count else 0.0

    def summary(self) -> dict[str, Any]:
        return {"lines": self.line_count, "read": [[r.start_line, r.end_line] for r in merge_ranges(self.read)],
                "rounds": self.rounds}

    def lines_read(self) -> int:
        return sum(r.end_line - r.start_line + 1 for r in merge_ranges(self.read))

    def cost(self) -> FileCost:
        return FileCost(path=self.path, line_count=self.line_count, lines_read=self.lines_read(),
                        coverage_pct=round(self.coverage_pct(), 3), rounds=self.rounds, reads=self.reads,
                        termination=None if self.termination is None else self.termination.value,
                        entered_by=self.entry.value, followed_from=self.followed_from)
