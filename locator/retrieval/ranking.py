"""What every retriever returns, and reciprocal rank fusion of two of them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

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
    `keep_spans` positive-scoring documents as spans (0: none, for whole-file documents). Only
    positive documents can rank a file or be a span, and only those are looked at, in arrays (a span
    object per chunk was a definition-level job's cost: tens of thousands of chunks a task)."""
    scores = np.asarray(scores, dtype=float)
    positive = np.flatnonzero(scores > 0)
    file_of: dict[str, int] = {}
    owner = np.fromiter((file_of.setdefault(docs[i].path, len(file_of)) for i in positive), dtype=np.int64,
                        count=len(positive))
    start = np.fromiter((docs[i].chunk.start_line for i in positive), dtype=np.int64, count=len(positive))
    order = positive[np.lexsort((start, -scores[positive], owner))]  # by file, best first, then earliest
    ordered_owner = np.sort(owner)  # the owners in `order`'s order
    first = np.flatnonzero(np.r_[True, ordered_owner[1:] != ordered_owner[:-1]]) if len(order) else order
    scored = {}
    for group, begin in enumerate(first):
        end = first[group + 1] if group + 1 < len(first) else len(order)
        best = order[begin:min(end, begin + keep_spans)]
        head = docs[order[begin]]
        scored[head.path] = (float(scores[order[begin]]),
                             tuple(ScoredSpan(docs[i].chunk.start_line, docs[i].chunk.end_line, float(scores[i]),
                                              docs[i].chunk.label) for i in best))
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
