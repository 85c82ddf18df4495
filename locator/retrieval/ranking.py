"""What every retriever returns, and reciprocal rank fusion of two of them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from locator.base import LocatorContext
from locator.result import Evidence
from locator.retrieval.documents import Document
from locator.task import Task


@dataclass(frozen=True)
class ScoredSpan:
    start_line: int
    end_line: int
    score: float
    label: str


@dataclass(frozen=True)
class RankedFile:
    path: str
    score: float
    spans: tuple[ScoredSpan, ...] = ()  # its best chunks, best first (definition granularity)


@dataclass(frozen=True)
class Ranking:
    """Files with a positive score, best first (ties by path); a file scoring 0 is not ranked."""

    files: tuple[RankedFile, ...]
    basis: str  # what the scores are, for the result's confidence
    details: tuple[tuple[str, int | float], ...] = ()  # what building it cost beyond index_lines, for the stage

    def top(self, n: int) -> tuple[RankedFile, ...]:
        return self.files[:n]


def ranked(scored: dict[str, tuple[float, tuple[ScoredSpan, ...]]], basis: str) -> Ranking:
    order = sorted((p for p, (score, _) in scored.items() if score > 0), key=lambda p: (-scored[p][0], p))
    return Ranking(tuple(RankedFile(p, scored[p][0], scored[p][1]) for p in order), basis)


def by_best_document(docs: list[Document], scores, keep_spans: int, basis: str,
                     details: tuple[tuple[str, int | float], ...] = ()) -> Ranking:
    """Files ranked by their best-scoring document (max aggregation), each keeping its best
    `keep_spans` positive-scoring documents as spans (0: none, for whole-file documents)."""
    by_file: dict[str, list[ScoredSpan]] = {}
    for doc, score in zip(docs, scores):
        by_file.setdefault(doc.path, []).append(ScoredSpan(doc.chunk.start_line, doc.chunk.end_line, float(score),
                                                           doc.chunk.label))
    scored = {}
    for path, spans in by_file.items():
        spans.sort(key=lambda s: (-s.score, s.start_line))
        scored[path] = (spans[0].score, tuple(s for s in spans[:keep_spans] if s.score > 0))
    return dataclasses.replace(ranked(scored, basis), details=details)


@runtime_checkable
class Retriever(Protocol):
    """Ranks a task's candidate files (`rank`) and makes evidence for one of them (`evidence`),
    reading through `ctx` only: index work as index reads, shown lines as reads."""

    def rank(self, task: Task, ctx: LocatorContext) -> Ranking: ...

    def evidence(self, task: Task, ctx: LocatorContext, file: RankedFile) -> list[Evidence]: ...


def reciprocal_rank_fusion(rankings: list[Ranking], k: int) -> Ranking:
    """Cormack et al. (2009): score(f) = sum over rankings of 1 / (k + rank of f); a file absent
    from a ranking adds nothing. Each file keeps the spans of the first ranking that has any."""
    scores: dict[str, float] = {}
    spans: dict[str, tuple[ScoredSpan, ...]] = {}
    for ranking in rankings:
        for rank, file in enumerate(ranking.files, 1):
            scores[file.path] = scores.get(file.path, 0.0) + 1.0 / (k + rank)
            if file.spans and not spans.get(file.path):
                spans[file.path] = file.spans
    return ranked({p: (s, spans.get(p, ())) for p, s in scores.items()},
                  f"reciprocal rank fusion (k={k}) of: " + "; ".join(r.basis for r in rankings))
