"""Which scored reads run in an epoch: geometry-only, deterministic, independent of the order the
actions were listed in."""

from __future__ import annotations

from dataclasses import dataclass

from locator.reading.actions import ReadRange
from locator.reading.state import FileState


@dataclass(frozen=True)
class ScoredRead:
    state: FileState
    action: ReadRange
    score: float


def _rank(r: ScoredRead) -> tuple:
    return -r.score, r.state.path, r.action.span.start_line, r.action.span.end_line


def best(reads: list[ScoredRead]) -> ScoredRead:
    """The highest-scoring read; ties go to the first path, then the earliest lines."""
    return min(reads, key=_rank)


def deconflict(reads: list[ScoredRead]) -> list[ScoredRead]:
    """Highest score first; a read overlapping one already kept in the same file is dropped (it is
    offered again next epoch, when the kept one has been read)."""
    kept: list[ScoredRead] = []
    for r in sorted(reads, key=_rank):
        if not any(k.state is r.state and k.action.span.overlaps(r.action.span) for k in kept):
            kept.append(r)
    return kept
