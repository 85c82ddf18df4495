"""Entity retrieval: the files that define, or are, the code a task names.

An issue names code outright more often than BM25 credits: a class, a function, a module path, a
traceback frame. This retriever (the offline half of LocAgent's entity search) indexes every
definition of the candidate files (tree-sitter; the whole index charged as `index_lines`) and
scores a file by the names the task mentions that it defines, each weighted by its rarity among
the candidates (IDF over defining files: `Table` defined in 40 files says less than
`_get_format_class` defined in one). A module or path the task names (`astropy.io.ascii.rst`,
`sklearn/utils/validation.py`, a frame's file) scores its file as a name defined there alone would.
A file's evidence is the definitions of the mentioned names it holds, read through `ctx`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar

from pydantic import Field

from locator.base import LocatorContext
from locator.definitions import IndexedDefinition, build_index
from locator.languages import REGISTERED
from locator.result import Evidence
from locator.retrieval.locator import RetrievalLocator, span_evidence
from locator.retrieval.query import MentionKind, mentions
from locator.retrieval.ranking import RankedFile, Ranking, ScoredSpan, ranked
from locator.task import Task
from locator.text import code_names


def module_paths(text: str) -> list[str]:
    """The file paths a task names, as path suffixes: `a.b.c` -> each registered language's module
    files of `a/b/c` (`a/b/c.py`, `a/b/c/__init__.py`, `a/b/c.rs`, …); a path or a frame's file as
    written (its leading directories may be the user's own)."""
    paths = []
    for mention in mentions(text):
        if mention.kind in (MentionKind.PATH, MentionKind.FRAME):
            paths.append(mention.text.replace("\\", "/"))
        elif mention.kind is MentionKind.DOTTED:
            parts = mention.text.split(".")
            for end in range(len(parts), 1, -1):  # `pkg.mod.Class.method`: the longest module prefix
                stem = "/".join(parts[:end])
                paths += [template.format(stem) for language in REGISTERED for template in language.module_files]
    return paths


def _names_file(path: str, mentioned: str) -> bool:
    """A mention names a file when one ends the other at a directory boundary: `rst.py` or
    `ascii/rst.py` names `astropy/io/ascii/rst.py`, and so does a frame's
    `/site-packages/astropy/io/ascii/rst.py`."""
    mentioned = mentioned.lstrip("./")
    return path == mentioned or path.endswith("/" + mentioned) or mentioned.endswith("/" + path)


class EntityLocator(RetrievalLocator):
    name: ClassVar[str] = "entities"
    confidence_type: ClassVar[str] = "entity_relative"
    min_name_length: int = Field(ge=1, description="shorter words are not taken for names")
    max_definers: int = Field(ge=1, description="a name defined in more files than this says nothing")
    spans_per_file: int = Field(ge=1, description="evidence: the file's definitions of mentioned names")
    max_span_lines: int = Field(ge=1, description="a longer definition's evidence is its first lines")

    def rank(self, task: Task, ctx: LocatorContext) -> Ranking:
        found = {f.path: ctx.index_outline(f.path) for f in ctx.source_files()}
        files = {path: "".join(x.read.lines) for path, x in found.items()}
        index = build_index(files, lambda path, _: found[path].definitions)
        n_files = max(len(files), 1)
        names = code_names(task.text, self.min_name_length)
        scores: dict[str, float] = {}
        spans: dict[str, list[ScoredSpan]] = {}
        for name, count in names.items():
            defined = [d for d in index.named(name) if d.path in files]
            definers = {d.path for d in defined}
            weight = self._idf(n_files, definers) * (1 + math.log(count))
            if weight:
                for path in definers:
                    scores[path] = scores.get(path, 0.0) + weight
                for d in defined:
                    spans.setdefault(d.path, []).append(self._span(d, weight))
        for mentioned in set(module_paths(task.text)):
            named = {p for p in files if _names_file(p, mentioned)}  # `__init__.py` alone names too many
            weight = self._idf(n_files, named)
            for path in named if weight else ():
                scores[path] = scores.get(path, 0.0) + weight
        scored = {p: (s, tuple(sorted(spans.get(p, []), key=lambda x: (-x.score, x.start_line))[: self.spans_per_file]))
                  for p, s in scores.items()}
        result = ranked(scored, "entity match: IDF-weighted names the task mentions that a file defines, "
                                "and modules or paths it names")
        return dataclasses.replace(result, details=(("names_mentioned", len(names)),
                                                    ("names_defined", sum(1 for n in names if index.named(n)))))

    def _idf(self, n_files: int, matched: set[str]) -> float:
        """log(1 + N / files matched); 0 for none, or for more than `max_definers` (says nothing)."""
        return math.log(1 + n_files / len(matched)) if 0 < len(matched) <= self.max_definers else 0.0

    def _span(self, d: IndexedDefinition, weight: float) -> ScoredSpan:
        return ScoredSpan(d.start_line, min(d.end_line, d.start_line + self.max_span_lines - 1), weight, d.qualname)

    def evidence(self, task: Task, ctx: LocatorContext, file: RankedFile) -> list[Evidence]:
        return span_evidence(ctx, file, self.confidence_type, "definitions of names the task mentions, "
                                                              "by the IDF weight of the name")
