"""The two-phase System One locator family.

Phase 1 (`discovery`: flat or pruned from metadata alone, or a retriever; `locator/discovery.py`)
picks files;
Phase 2 (`reader`, built on the reading engine in `locator/reading/`) reads them, System One
choosing where, and keeps the reads it rates at or above the observation threshold as evidence.
Phase 2 is any `locator.reading.reader.Reader`: seed 000's progressive reader (`locator=two_phase`),
its range-only runtime (`locator=range_runtime`), its per-file runtimes (`locator=file_runtime`) or
semantic zoom (`locator=semantic_zoom`); the rest is configuration: `locator/discovery=pruned`,
`locator/schedule=global`, sources, thresholds, budgets.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from locator.base import LocatorContext, LocatorOutput
from locator.discovery import Discovery
from locator.reading.reader import Reader
from locator.reading.state import Entry
from locator.result import ResultFile
from locator.retrieval.ranking import Ranking, RankedFile, reciprocal_rank_fusion
from locator.settings import Settings
from locator.task import Task

_NOUL = "noul: probability that the statement is true"


class RankBy(StrEnum):
    """How the files with evidence are ordered in the result."""

    EVIDENCE = "evidence"  # by their best evidence's Noul (the seed)
    DISCOVERY = "discovery"  # in Phase 1's order: the reader confirms, the ranking stays Phase 1's
    FUSED = "fused"  # reciprocal rank fusion of both orders


def _as_ranking(paths) -> Ranking:
    """An order as a ranking for fusion: only the ranks count."""
    return Ranking(tuple(RankedFile(path, 1.0) for path in paths), "order")


def _reorder(files: list[ResultFile], discovered: list[str], rank_by: RankBy, rrf_k: int) -> list[ResultFile]:
    if rank_by is RankBy.EVIDENCE:
        return files
    discovery_rank = {path: n for n, path in enumerate(discovered, 1)}
    if rank_by is RankBy.DISCOVERY:
        return sorted(files, key=lambda f: (discovery_rank[f.path], f.path))
    fused = reciprocal_rank_fusion([_as_ranking(f.path for f in files), _as_ranking(discovered)], rrf_k)
    by_path = {f.path: f for f in files}
    return [by_path[f.path] for f in fused.files if f.path in by_path]


class TwoPhaseLocator(Settings):
    """Phase 1 then Phase 2 (`reader`); `name` (from its YAML) says which composition it is."""

    name: str
    discovery: Discovery
    reader: Reader  # any reader, named by `_target_` in its YAML
    keep_unconfirmed_files: bool
    rank_by: RankBy
    rrf_k: int = Field(ge=1, description="rank_by=fused: the reciprocal rank fusion constant")

    def localize(self, task: Task, ctx: LocatorContext) -> LocatorOutput:
        discovered = self.discovery.discover(task, ctx, ctx.source_files())
        states = self.reader.read(task, ctx, discovered.handed_off)
        followed = [s.path for s in states if s.entry is Entry.FOLLOW]
        # A followed file ranks after the handed-off files in Phase 1's order, in the order it entered.
        files = _reorder(self.reader.result_files(task, ctx, states, self.keep_unconfirmed_files),
                         [c.info.path for c in discovered.handed_off] + followed, self.rank_by, self.rrf_k)
        return LocatorOutput(files=files, confidence_semantics=_NOUL,
                             handoff=discovered.handoff().model_copy(update={"followed": followed}))
