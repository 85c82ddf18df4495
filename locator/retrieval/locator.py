"""A retriever used as a locator: its top files, each with the evidence the retriever makes for
it, and the whole ranking recorded as the result's hand-off (the stage funnel)."""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

from pydantic import Field

from locator.base import LocatorContext, LocatorOutput
from locator.result import Confidence, Evidence, Handoff, ResultFile
from locator.retrieval.ranking import Ranking, RankedFile
from locator.settings import Settings
from locator.task import Task

RETRIEVAL_STAGE = "retrieval"


def span_evidence(ctx: LocatorContext, file: RankedFile, confidence_type: str, basis: str) -> list[Evidence]:
    """A file's best chunks as its evidence, each read through `ctx` (the lines shown are charged)."""
    top = file.spans[0].score if file.spans else 1.0
    evidence = []
    for rank, span in enumerate(file.spans):
        read = ctx.read(file.path, span.start_line, span.end_line)
        evidence.append(Evidence(
            id=f"{file.path}#{rank}", start_line=read.start_line, end_line=max(read.end_line, read.start_line),
            confidence=Confidence.of(round(span.score / top, 6), confidence_type, basis),
            reason=f"chunk score {span.score:.3f} ({span.label})", content=read.text))
    return evidence


def check_stages(*stages: object) -> None:
    """A composed locator's inputs are its stages' inputs: each stage that checks its own
    (`check_inputs`) is asked, so a missing extra fails the job before any subject is fetched."""
    for stage in stages:
        check = getattr(stage, "check_inputs", None)
        if check is not None:
            check()


class RetrievalLocator(Settings):
    """A `Retriever` (`rank`, `evidence`) that is also a locator; pydantic's metaclass is an ABCMeta,
    so a subclass missing either method cannot be built."""

    uses_system_one: ClassVar[bool] = False
    confidence_type: ClassVar[str]
    top_files: int = Field(ge=1, description="files returned, best first")

    @abstractmethod
    def rank(self, task: Task, ctx: LocatorContext) -> Ranking: ...

    @abstractmethod
    def evidence(self, task: Task, ctx: LocatorContext, file: RankedFile) -> list[Evidence]: ...

    def localize(self, task: Task, ctx: LocatorContext) -> LocatorOutput:
        with ctx.stage(RETRIEVAL_STAGE) as stage:
            ranking = self.rank(task, ctx)
            top = ranking.top(self.top_files)
            stage.set(files_ranked=len(ranking.files), files_returned=len(top), **dict(ranking.details))
        best = top[0].score if top else 1.0
        with ctx.stage("evidence"):
            files = [ResultFile(path=f.path,
                                confidence=Confidence.of(round(f.score / best, 6), self.confidence_type, ranking.basis),
                                reason=f"{self.confidence_type.removesuffix('_relative')} score {f.score:.6g}",
                                evidence=self.evidence(task, ctx, f))
                     for f in top]
        return LocatorOutput(files=files, confidence_semantics=f"{self.confidence_type}: file score / best file score",
                             handoff=Handoff(stage=RETRIEVAL_STAGE, ranked=[f.path for f in ranking.files],
                                             handed_off=[f.path for f in top]))
