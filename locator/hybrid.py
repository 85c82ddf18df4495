"""Reciprocal rank fusion of any two retrievers (`locator=hybrid`).

Both retrievers build their own index (both charged as `index_lines`); the fused ranking keeps, per
file, the chunks of the first ranking that has any, and those chunks are its evidence; a file
without chunks gets the first retriever's own evidence (bm25: its best windows).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from locator.base import LocatorContext
from locator.result import Evidence
from locator.retrieval.locator import RetrievalLocator, check_stages, span_evidence
from locator.retrieval.ranking import Ranking, RankedFile, Retriever, reciprocal_rank_fusion
from locator.task import Task


class HybridLocator(RetrievalLocator):
    name: ClassVar[str] = "hybrid"
    confidence_type: ClassVar[str] = "rrf_relative"
    first: Retriever
    second: Retriever
    rrf_k: int = Field(ge=1)

    def rank(self, task: Task, ctx: LocatorContext) -> Ranking:
        return reciprocal_rank_fusion([self.first.rank(task, ctx), self.second.rank(task, ctx)], self.rrf_k)

    def evidence(self, task: Task, ctx: LocatorContext, file: RankedFile) -> list[Evidence]:
        if file.spans:  # possibly the second retriever's: labelled as what they are, not as the first's
            return span_evidence(ctx, file, "chunk_relative", "the best chunks of the first fused ranking that had "
                                                              "any, relative to this file's best")
        return self.first.evidence(task, ctx, file)

    def check_inputs(self) -> None:
        check_stages(self.first, self.second)
