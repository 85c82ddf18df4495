"""A first retriever's top files re-ranked by a dense encoder (`locator=reranked`): the first stage
reads the repository (bm25 by default), the second encodes only the chunks of its `candidates`
best files, so a slower, stronger encoder (e5_small) costs per task what ten files hold, not what
the repository holds.

`fusion=dense` orders the candidates by their best chunk's cosine; `fusion=rrf` fuses the two
orders (reciprocal rank). Files past the candidates keep the first stage's order behind them; the
hand-off lists them, and no file past the candidates is ever returned (`top_files <= candidates`)."""

from __future__ import annotations

import dataclasses
from enum import StrEnum
from typing import ClassVar

from pydantic import Field, model_validator

from locator.base import LocatorContext
from locator.embedding_retrieval import EmbeddingRetrievalLocator
from locator.result import Evidence
from locator.retrieval.locator import RetrievalLocator, check_stages, span_evidence
from locator.retrieval.ranking import Ranking, RankedFile, Retriever, reciprocal_rank_fusion
from locator.task import Task


class Fusion(StrEnum):
    DENSE = "dense"  # the candidates in the dense order
    RRF = "rrf"  # reciprocal rank fusion of the first and the dense order of the candidates


class RerankedLocator(RetrievalLocator):
    name: ClassVar[str] = "reranked"
    confidence_type: ClassVar[str] = "rerank_relative"
    first: Retriever
    dense: EmbeddingRetrievalLocator
    candidates: int = Field(ge=1, description="the first stage's best files the dense stage re-ranks")
    fusion: Fusion
    rrf_k: int = Field(ge=1)

    @model_validator(mode="after")
    def _returns_only_reranked_files(self) -> RerankedLocator:
        if self.top_files > self.candidates:
            raise ValueError(f"top_files ({self.top_files}) > candidates ({self.candidates}): "
                             "files past the candidates were never re-ranked")
        return self

    def check_inputs(self) -> None:
        check_stages(self.first, self.dense)

    def rank(self, task: Task, ctx: LocatorContext) -> Ranking:
        first = self.first.rank(task, ctx)
        head, tail = first.files[: self.candidates], first.files[self.candidates :]
        dense = self.dense.rank_among(task, ctx, frozenset(f.path for f in head))
        if self.fusion is Fusion.DENSE:
            reranked, basis = list(dense.files), dense.basis
        else:
            fused = reciprocal_rank_fusion([dense, dataclasses.replace(first, files=head)], self.rrf_k)
            reranked, basis = list(fused.files), fused.basis
        # then the candidates the encoder gave no positive chunk, and the files past the candidates,
        # each in the first stage's order, scored below every re-ranked file only to keep that order
        placed = {f.path for f in reranked}
        rest = [f for f in head if f.path not in placed] + list(tail)
        floor = min((f.score for f in reranked), default=1.0)
        reranked += [dataclasses.replace(f, score=floor * (len(rest) - i) / (len(rest) + 1), spans=())
                     for i, f in enumerate(rest)]
        return Ranking(tuple(reranked), f"{self.fusion.value} re-ranking of the first {self.candidates} "
                       f"of ({first.basis}) by ({basis})", (*first.details, *dense.details))

    def evidence(self, task: Task, ctx: LocatorContext, file: RankedFile) -> list[Evidence]:
        if file.spans:
            return span_evidence(ctx, file, "chunk_relative", "the dense stage's best chunks, relative to this file's best")
        return self.first.evidence(task, ctx, file)
