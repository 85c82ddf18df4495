"""BM25 retrieval (Lucene scoring, bm25s's numbers) over whole files or definition-level chunks.

Named for what it is: with `tokenizer: identifier` (loclab's default) it is stronger than the
SWE-bench BM25 baseline, whose tokens `tokenizer: plain` reproduces. The query is the task text,
with explicit code mentions weighted (`mention_weight`, `locator/retrieval/query.py`). At
`granularity: definition` a file scores as its best chunk, and its best chunks are its evidence;
at `file`, evidence is the file's best non-overlapping windows.

Cost: building the index reads every candidate file (`index_lines`); the lines turned into
evidence are read again (`source_lines_read`).
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from pydantic import Field

from locator.base import LocatorContext
from locator.result import Confidence, Evidence
from locator.retrieval.documents import Granularity, document_terms, index_documents, window_documents
from locator.retrieval.terms import DocumentTerms, known_term_ids
from locator.retrieval.locator import RetrievalLocator, span_evidence
from locator.retrieval.query import build_query
from locator.retrieval.ranking import Ranking, RankedFile, by_best_document
from locator.task import Task
from locator.text import Tokenizer
from locator.windows import LineRange, sliding

def bm25_scores(documents: DocumentTerms, query: list[str], k1: float, b: float) -> np.ndarray:
    """Every document's Lucene BM25 score for the query, equal bit for bit to bm25s's (0.3.16,
    `method="lucene"`), which loclab used until it cost half a bm25 job's CPU.

    bm25s builds a score matrix over the corpus's whole vocabulary, once per query here (a task's
    corpus is its own revision), while a score reads only the query's terms. So each query term's
    column is computed alone, with bm25s's formulas in its dtypes: idf = ln(1 + (N - df + 0.5) /
    (df + 0.5)) in float64, stored as float32; tf / (k1 (1 - b + b dl / avgdl) + tf) in float64 from
    float32 counts, dl counting every token and avgdl their mean over all documents; their product
    stored as float32; the columns added in float32 in the query's order, repeats included.
    tests/locator/test_bm25.py checks the equality against bm25s itself (the test extra) on real
    code and random corpora."""
    scores = np.zeros(len(documents), dtype=np.float32)
    if not len(documents) or not query:
        return scores.astype(float)
    lengths = documents.lengths
    mean_length = lengths.mean()
    ids = known_term_ids(dict.fromkeys(query))  # a term no text ever held is in no document: bm25s skips it
    held = documents.frequencies(list(ids.values()))
    columns: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for term, term_id in ids.items():
        holders, counts = held[term_id]
        if not len(holders):  # not in the corpus's vocabulary: bm25s is not asked about it
            continue
        df = len(holders)
        idf = np.float32(math.log(1 + (len(documents) - df + 0.5) / (df + 0.5)))
        tf = counts.astype(np.float32)
        tfc = tf / (k1 * ((1 - b) + b * lengths[holders] / mean_length) + tf)
        columns[term] = (holders, (idf * tfc).astype(np.float32))
    for term in query:
        if term in columns:
            rows, values = columns[term]
            scores[rows] += values
    return scores.astype(float)


def _best_windows(scores: np.ndarray, windows: list[LineRange], limit: int) -> list[int]:
    """Highest-scoring windows that do not overlap each other, best first."""
    chosen: list[int] = []
    for index in sorted(range(len(scores)), key=lambda i: (-scores[i], windows[i].start_line)):
        if len(chosen) == limit or scores[index] <= 0:
            break
        if not any(windows[index].overlaps(windows[other]) for other in chosen):
            chosen.append(index)
    return chosen


class BM25Locator(RetrievalLocator):
    name: ClassVar[str] = "bm25"
    confidence_type: ClassVar[str] = "bm25_relative"
    tokenizer: Tokenizer
    granularity: Granularity
    mention_weight: int = Field(ge=0, description="extra repeats of explicitly mentioned code in the query; 0: none")
    max_chunk_lines: int = Field(ge=1, description="definition granularity: longer chunks are split")
    window_lines: int = Field(ge=1)
    window_stride: int = Field(ge=1)
    windows_per_file: int = Field(ge=1, description="evidence spans per returned file")
    k1: float = Field(gt=0.0)
    b: float = Field(ge=0.0, le=1.0)

    def _query(self, task: Task) -> list[str]:
        return build_query(task.text, self.tokenizer, self.mention_weight)

    def rank(self, task: Task, ctx: LocatorContext) -> Ranking:
        docs = [d for f in ctx.source_files()
                for d in index_documents(ctx, f.path, self.granularity, self.max_chunk_lines)]
        scores = bm25_scores(document_terms(docs, self.tokenizer), self._query(task), self.k1, self.b)
        keep = self.windows_per_file if self.granularity is Granularity.DEFINITION else 0  # file level: windows later
        return by_best_document(docs, scores, keep,
                                f"BM25 (lucene, {self.tokenizer} tokens) over {self.granularity}-level documents")

    def evidence(self, task: Task, ctx: LocatorContext, file: RankedFile) -> list[Evidence]:
        if file.spans:
            return span_evidence(ctx, file, self.confidence_type, "BM25 over this file's chunks")
        lines = ctx.read(file.path).lines
        windows = sliding(len(lines), self.window_lines, self.window_stride)
        texts = ["".join(lines[w.start_line - 1 : w.end_line]) for w in windows]
        scores = bm25_scores(document_terms(window_documents(file.path, lines, windows), self.tokenizer),
                             self._query(task), self.k1, self.b)
        chosen = _best_windows(scores, windows, self.windows_per_file)
        top = float(scores[chosen[0]]) if chosen else 1.0
        return [
            Evidence(
                id=f"{file.path}#{rank}",
                start_line=windows[index].start_line,
                end_line=windows[index].end_line,
                confidence=Confidence.of(round(float(scores[index]) / top, 6), self.confidence_type,
                                         "BM25 over windows of this file"),
                reason=f"BM25 window score {float(scores[index]):.3f}",
                content=texts[index],
            )
            for rank, index in enumerate(chosen)
        ]
