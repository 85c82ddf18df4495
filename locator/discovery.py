"""Phase 1 of the two-phase locators: which files to hand to the reader.

- `FlatDiscovery` (the later "V1"): an independent Noul per supported file; files above an
  absolute threshold plus a relative recall guard (the top fraction of files by score).
- `PrunedDiscovery`: directories first, top-down; only the direct files of retained directories
  are exposed and scored. Replaced by flat in the research because the relevance of a deep file is
  not monotonic in its parent directory's; kept to measure exactly that.
- `RetrievalDiscovery`: the top files of a configured retriever (`locator/retriever=bm25`, any
  `Retriever`), its index work charged as `index_lines`; so the reader's line-level work can be
  judged on top of a strong file ranking. Flat and pruned judge metadata only (paths, sizes, line
  counts), never a file body — unless flat is configured to show each file's definitions
  (`describe: outline`: the names of its functions and classes, their signature lines charged as read).

Every discovery returns its whole ranking beside the hand-off: the result records both, and scoring
joins gold afterwards (the stage funnel).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePosixPath
from typing import Protocol, runtime_checkable

from pydantic import Field

from locator.base import LocatorContext
from locator.repository import FileInfo
from locator.result import Handoff
from locator.retrieval.ranking import Retriever
from locator.settings import Settings
from locator.system_one.wire import NoulAnswer, Question
from locator.task import Task

DISCOVERY_STAGE = "file_discovery"
FILE_INSTRUCTIONS = "Judge from the path and size alone: will this file need to be read or edited to resolve the task?"
OUTLINE_INSTRUCTIONS = ("Judge from the path, size and the names the file defines: will this file need to be read or "
                        "edited to resolve the task?")
DIRECTORY_INSTRUCTIONS = "Judge from the directory path and its contents' names: could files under it need to be read or edited?"


class FileDescription(StrEnum):
    PATH = "path"  # path, line count, size: metadata only
    OUTLINE = "outline"  # and the names of the definitions it holds (ctx.outline: signature lines charged)


@dataclass(frozen=True)
class Candidate:
    info: FileInfo
    score: float


@dataclass(frozen=True)
class Discovered:
    ranked: list[Candidate]  # every file the stage scored, best first
    handed_off: list[Candidate]  # what the reader gets, in that order

    def handoff(self) -> Handoff:
        return Handoff(stage=DISCOVERY_STAGE, ranked=[c.info.path for c in self.ranked],
                       handed_off=[c.info.path for c in self.handed_off])


@runtime_checkable
class Discovery(Protocol):
    def discover(self, task: Task, ctx: LocatorContext, files: list[FileInfo]) -> Discovered: ...


def _metadata(f: FileInfo) -> str:
    return f"path: {f.path}\nlines: {f.line_count}\nbytes: {f.size_bytes}"


def score_files(task: Task, ctx: LocatorContext, files: list[FileInfo], per_request: int) -> list[float]:
    """One Noul per file from its metadata, `per_request` files per request (requests concurrent)."""
    return [a.noul for _, a in _noul_per_item(task, ctx, files, per_request, "file", lambda f: Question(
        type="noul", instructions=FILE_INSTRUCTIONS, criteria=_metadata(f)))]


def score_outlined_files(task: Task, ctx: LocatorContext, files: list[FileInfo], per_request: int,
                         max_names: int) -> list[float]:
    """One Noul per file from its metadata and the names it defines (read through ctx.outline)."""
    def question(f: FileInfo) -> Question:
        names = [d.qualname for d in ctx.outline(f.path).definitions]
        shown = ", ".join(names[:max_names]) + (", …" if len(names) > max_names else "")
        return Question(type="noul", instructions=OUTLINE_INSTRUCTIONS, criteria=f"{_metadata(f)}\ndefines: {shown}")
    return [a.noul for _, a in _noul_per_item(task, ctx, files, per_request, "file", question)]


def _noul_per_item(task: Task, ctx: LocatorContext, items: list, per_request: int, prefix: str, question):
    state = {"task": task.text, "stage": "file_discovery"}
    batches = [items[i : i + per_request] for i in range(0, len(items), per_request)]
    return ctx.ask_keyed([(state, [(item, question(item)) for item in batch]) for batch in batches], prefix, NoulAnswer)


def _ranked(candidates: list[Candidate]) -> list[Candidate]:
    return sorted(candidates, key=lambda c: (-c.score, c.info.path))


class FlatDiscovery(Settings):
    file_threshold: float = Field(ge=0.0, le=1.0)
    recall_guard_fraction: float = Field(ge=0.0, le=1.0, description="top fraction of files handed off whatever their score")
    max_files: int | None = Field(ge=1, description="handoff cap; null: no cap")
    questions_per_request: int = Field(ge=1, description="file questions in one System One request")
    describe: FileDescription
    max_outline_names: int = Field(ge=1, description="describe=outline: definition names shown per file")

    def _scores(self, task: Task, ctx: LocatorContext, files: list[FileInfo]) -> list[float]:
        if self.describe is FileDescription.OUTLINE:
            return score_outlined_files(task, ctx, files, self.questions_per_request, self.max_outline_names)
        return score_files(task, ctx, files, self.questions_per_request)

    def discover(self, task: Task, ctx: LocatorContext, files: list[FileInfo]) -> Discovered:
        with ctx.stage(DISCOVERY_STAGE) as stage:
            ranked = _ranked([Candidate(f, s) for f, s in zip(files, self._scores(task, ctx, files))])
            guard = math.ceil(self.recall_guard_fraction * len(ranked)) if self.recall_guard_fraction else 0
            above = [c for c in ranked if c.score >= self.file_threshold]
            chosen = {c.info.path for c in above} | {c.info.path for c in ranked[:guard] if c.score > 0}
            kept = [c for c in ranked if c.info.path in chosen][: self.max_files]  # None: no cap
            stage.set(files_exposed=len(files), files_above_threshold=len(above), files_by_recall_guard=guard,
                      files_handed_off=len(kept))
            ctx.decide(stage=DISCOVERY_STAGE, handed_off=[(c.info.path, c.score) for c in kept])
        return Discovered(ranked, kept)


def _directory_of(path: str) -> str:
    parent = str(PurePosixPath(path).parent)
    return "" if parent == "." else parent


class PrunedDiscovery(Settings):
    directory_threshold: float = Field(ge=0.0, le=1.0)
    file_threshold: float = Field(ge=0.0, le=1.0)
    max_files: int | None = Field(ge=1, description="handoff cap; null: no cap")
    questions_per_request: int = Field(ge=1, description="directory or file questions in one System One request")
    max_names_shown: int = Field(ge=0, description="names of a directory's entries shown with it")

    def _describe(self, directory: str, children: dict[str, list[str]], files_in: dict[str, list[str]]) -> str:
        names = sorted(PurePosixPath(p).name for p in children.get(directory, []) + files_in.get(directory, []))
        shown = ", ".join(names[: self.max_names_shown]) + (", …" if len(names) > self.max_names_shown else "")
        return f"directory: {directory}/\ncontains: {shown}"

    def discover(self, task: Task, ctx: LocatorContext, files: list[FileInfo]) -> Discovered:
        files_in: dict[str, list[str]] = {}
        children: dict[str, list[str]] = {}
        for f in files:
            directory = _directory_of(f.path)
            files_in.setdefault(directory, []).append(f.path)
            while directory:
                parent = _directory_of(directory)
                if directory not in children.setdefault(parent, []):
                    children[parent].append(directory)
                directory = parent
        with ctx.stage(DISCOVERY_STAGE) as stage:
            retained, exposed_dirs, frontier = [""], 0, sorted(children.get("", []))
            while frontier:
                exposed_dirs += len(frontier)
                answers = _noul_per_item(task, ctx, frontier, self.questions_per_request, "dir", lambda d: Question(
                    type="noul", instructions=DIRECTORY_INSTRUCTIONS, criteria=self._describe(d, children, files_in)))
                kept = [d for d, answer in answers if answer.noul >= self.directory_threshold]
                retained += kept
                frontier = sorted(c for d in kept for c in children.get(d, []))
            by_path = {f.path: f for f in files}
            exposed = [by_path[p] for d in retained for p in sorted(files_in.get(d, []))]
            scored = [Candidate(f, s) for f, s in zip(exposed, score_files(task, ctx, exposed, self.questions_per_request))]
            above = _ranked([c for c in scored if c.score >= self.file_threshold])
            kept_files = above[: self.max_files]
            stage.set(directories_exposed=exposed_dirs, directories_retained=len(retained) - 1,
                      files_exposed=len(exposed), files_above_threshold=len(above), files_handed_off=len(kept_files))
            ctx.decide(stage=DISCOVERY_STAGE, retained_directories=retained[1:],
                       handed_off=[(c.info.path, c.score) for c in kept_files])
        return Discovered(_ranked(scored), kept_files)


class RetrievalDiscovery(Settings):
    """The retriever's top `max_files`; a candidate's score is its retrieval score relative to the
    best file's (the reader's prior, never a probability)."""

    retriever: Retriever
    max_files: int = Field(ge=1, description="files handed to the reader")

    def discover(self, task: Task, ctx: LocatorContext, files: list[FileInfo]) -> Discovered:
        with ctx.stage(DISCOVERY_STAGE) as stage:
            ranking = self.retriever.rank(task, ctx)
            best = ranking.files[0].score if ranking.files else 1.0
            ranked = [Candidate(ctx.stat(f.path), round(f.score / best, 6)) for f in ranking.files]
            kept = ranked[: self.max_files]
            stage.set(files_exposed=len(files), files_ranked=len(ranked), files_handed_off=len(kept))
            ctx.decide(stage=DISCOVERY_STAGE, retriever=ranking.basis, handed_off=[(c.info.path, c.score) for c in kept])
        return Discovered(ranked, kept)
