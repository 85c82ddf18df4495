"""Dense retrieval (`locator=embedding_retrieval`): a text encoder (`locator/encoder=minilm`, the
all-MiniLM-L6-v2 model shipped for the embedding System One, or `e5_small`) over definition-level
chunks (or whole files); a file scores as its best chunk's cosine similarity to the task text, and
its best chunks are its evidence. As a second stage (`locator=reranked`) it ranks only the files a
first retriever handed it (`rank_among`).

Cost: the index reads every candidate file (`index_lines`, as for bm25). Encoding is the one-time
part: embeddings are kept on disk by content hash (`cache_path`), so most chunks of a repository's
next commit, or of another task on it, are never encoded again; each task's `retrieval` stage
reports the chunks it indexed (`chunks`), those it had to encode (`chunks_encoded`) and the time
that took (`encode_ms`), apart from the per-task work. Needs the `embed` extra.
"""

from __future__ import annotations

import time
from typing import ClassVar

import numpy as np
from pydantic import Field

from locator.base import LocatorContext
from locator.result import Evidence
from locator.retrieval.documents import Granularity, index_documents
from locator.retrieval.locator import RetrievalLocator, span_evidence
from locator.retrieval.encoders import Encoder
from locator.retrieval.ranking import Ranking, RankedFile, by_best_document
from locator.retrieval.vectors import VectorStore
from locator.task import Task


class EmbeddingRetrievalLocator(RetrievalLocator):
    name: ClassVar[str] = "embedding_retrieval"
    confidence_type: ClassVar[str] = "cosine_relative"
    granularity: Granularity
    max_chunk_lines: int = Field(ge=1)
    max_chunk_chars: int = Field(ge=16, description="text of a chunk given to the model (it truncates at 256 pieces anyway)")
    windows_per_file: int = Field(ge=1, description="evidence chunks per returned file")
    encoder: Encoder
    cache_path: str = Field(description="the on-disk embedding store (content-addressed)")

    def check_inputs(self) -> None:
        """Without the encoder's package the job fails before any subject is fetched, not task by task."""
        self.encoder.check_installed()

    def rank(self, task: Task, ctx: LocatorContext) -> Ranking:
        return self.rank_among(task, ctx, None)

    def rank_among(self, task: Task, ctx: LocatorContext, paths: frozenset[str] | None) -> Ranking:
        """The candidate files (only those in `paths`, when given) ranked by their best chunk."""
        files = [f.path for f in ctx.source_files() if paths is None or f.path in paths]
        docs = [d for path in files
                for d in index_documents(ctx, path, self.granularity, self.max_chunk_lines)]
        model = self.encoder.model_key()
        store = VectorStore(self.cache_path, model)
        started = time.perf_counter()
        vectors, encoded = store.get_or_encode([d.text[: self.max_chunk_chars] for d in docs], self.encoder.passages)
        encode_ms = round((time.perf_counter() - started) * 1000, 3)
        query = self.encoder.queries([task.text])[0]
        similarity = vectors @ query if len(docs) else np.zeros(0)
        cost = (("chunks", len(docs)), ("chunks_encoded", encoded), ("encode_ms", encode_ms))
        ctx.decide(stage="retrieval", **dict(cost))
        return by_best_document(docs, similarity, self.windows_per_file,
                                f"{model} cosine over {self.granularity}-level chunks", cost)

    def evidence(self, task: Task, ctx: LocatorContext, file: RankedFile) -> list[Evidence]:
        return span_evidence(ctx, file, self.confidence_type, "cosine over this file's chunks")
