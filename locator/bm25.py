"""The SWE-bench-style sparse retrieval baseline: BM25 over whole files, query = task text.

It reads every candidate file, and its cost says so: that is the honest price of whole-file BM25.
"""

from __future__ import annotations

import logging

from typing import ClassVar

import bm25s
import numpy as np
from pydantic import Field

from locator.base import LocatorContext, LocatorOutput
from locator.result import Confidence, Evidence, ResultFile
from locator.settings import Settings
from locator.task import Task
from locator.text import tokenize
from locator.windows import LineRange, sliding

# bm25s sets its own logger to DEBUG on import, which floods every run's log.
logging.getLogger("bm25s").setLevel(logging.WARNING)

_BASIS = "bm25s (lucene) over whole files, relative to the best file of the task"


def _scores(documents: list[list[str]], query: list[str], k1: float, b: float) -> np.ndarray:
    vocabulary = {token for doc in documents for token in doc}
    known = [token for token in query if token in vocabulary]
    if not documents or not known:
        return np.zeros(len(documents))
    retriever = bm25s.BM25(k1=k1, b=b)
    retriever.index(documents, show_progress=False)
    return np.asarray(retriever.get_scores(known), dtype=float)


def _best_windows(scores: np.ndarray, windows: list[LineRange], limit: int) -> list[int]:
    """Highest-scoring windows that do not overlap each other, best first."""
    chosen: list[int] = []
    for index in sorted(range(len(scores)), key=lambda i: (-scores[i], windows[i].start_line)):
        if len(chosen) == limit or scores[index] <= 0:
            break
        if not any(windows[index].overlaps(windows[other]) for other in chosen):
            chosen.append(index)
    return chosen


class BM25Locator(Settings):
    name: ClassVar[str] = "bm25"
    uses_system_one: ClassVar[bool] = False
    top_files: int = Field(ge=1)
    window_lines: int = Field(ge=1)
    window_stride: int = Field(ge=1)
    windows_per_file: int = Field(ge=1)
    file_suffixes: list[str]
    k1: float = Field(gt=0.0)
    b: float = Field(ge=0.0, le=1.0)

    def localize(self, task: Task, ctx: LocatorContext) -> LocatorOutput:
        query = tokenize(task.text)
        with ctx.stage("retrieval") as stage:
            candidates = ctx.candidate_files(self.file_suffixes)
            bodies = {f.path: ctx.read(f.path).lines for f in candidates}
            scores = _scores([tokenize(f"{f.path}\n{''.join(bodies[f.path])}") for f in candidates], query, self.k1, self.b)
            ranked = sorted(range(len(candidates)), key=lambda i: (-scores[i], candidates[i].path))
            top = [i for i in ranked[: self.top_files] if scores[i] > 0]
            stage.set(files_exposed=len(candidates), files_returned=len(top))
        best = float(scores[top[0]]) if top else 1.0
        files: list[ResultFile] = []
        with ctx.stage("evidence"):
            for i in top:
                path = candidates[i].path
                files.append(
                    ResultFile(
                        path=path,
                        confidence=Confidence.of(round(float(scores[i]) / best, 6), "bm25_relative", _BASIS),
                        reason=f"BM25 score {float(scores[i]):.3f}",
                        evidence=self._evidence(path, bodies[path], query),
                    )
                )
        return LocatorOutput(files=files, confidence_semantics="bm25_relative: file score / best file score")

    def _evidence(self, path: str, lines: tuple[str, ...], query: list[str]) -> list[Evidence]:
        windows = sliding(len(lines), self.window_lines, self.window_stride)
        texts = ["".join(lines[w.start_line - 1 : w.end_line]) for w in windows]
        scores = _scores([tokenize(t) for t in texts], query, self.k1, self.b)
        chosen = _best_windows(scores, windows, self.windows_per_file)
        top = float(scores[chosen[0]]) if chosen else 1.0
        return [
            Evidence(
                id=f"{path}#{rank}",
                start_line=windows[index].start_line,
                end_line=windows[index].end_line,
                confidence=Confidence.of(round(float(scores[index]) / top, 6), "bm25_relative", "bm25s over windows of this file"),
                reason=f"BM25 window score {float(scores[index]):.3f}",
                content=texts[index],
            )
            for rank, index in enumerate(chosen)
        ]
