"""Which observations become evidence, and the result files they make."""

from __future__ import annotations

from pydantic import Field

from locator.base import LocatorContext
from locator.reading.narrowing import DefinitionNarrowing
from locator.reading.questions import OBSERVATION_INSTRUCTIONS
from locator.reading.reasons import ReasonKind, task_reason
from locator.reading.state import Entry, FileState, Observation
from locator.result import Confidence, Evidence, ResultFile, Role
from locator.settings import Settings
from locator.task import Task
from locator.windows import LineRange



def _entered(s: FileState) -> str:
    if s.entry is Entry.FOLLOW:
        return f"followed from {s.followed_from} (noul {s.candidate.score:.3f})"
    return f"discovery noul {s.candidate.score:.3f}"


class ThresholdEvidence(Settings):
    """Observations at or above `observation_threshold`, adjacent ones merged, best first (at most
    `max_evidence_spans` per file; null keeps every one, the seed's whole ranges). A file with
    evidence is `primary` when its best span reaches `primary_threshold`, otherwise `supporting`;
    a handed-off file without evidence is `context` (kept only with keep_unconfirmed_files)."""

    observation_threshold: float = Field(ge=0.0, le=1.0)
    max_evidence_spans: int | None = Field(ge=1)
    primary_threshold: float = Field(ge=0.0, le=1.0)
    reasons: ReasonKind = Field(description="a span's reason: the seed's template, or what it shows for this task")
    narrowing: DefinitionNarrowing | None = Field(description="locator/evidence=narrowed: tighter spans; null: as read")

    def is_evidence(self, observation: Observation) -> bool:
        return observation.score >= self.observation_threshold

    def _reason(self, task: Task, s: FileState, o: Observation) -> str:
        if self.reasons is ReasonKind.TASK:
            return task_reason(task.text, s.path, o, self.observation_threshold)
        return OBSERVATION_INSTRUCTIONS

    def evidence(self, task: Task, s: FileState) -> list[Evidence]:
        kept = sorted((o for o in s.observations if self.is_evidence(o)), key=lambda o: o.span)
        merged: list[Observation] = []
        for o in kept:
            if merged and o.span.start_line <= merged[-1].span.end_line + 1:
                last = merged[-1]
                merged[-1] = Observation(LineRange(last.span.start_line, max(last.span.end_line, o.span.end_line)),
                                         max(last.score, o.score), last.content + o.content, last.round)
            else:
                merged.append(o)
        return [
            Evidence(id=f"{s.path}#{o.span.start_line}-{o.span.end_line}", start_line=o.span.start_line,
                     end_line=o.span.end_line,
                     confidence=Confidence.of(o.score, "noul", "System One noul on the excerpt (the best observation of a merged span)"),
                     reason=self._reason(task, s, o), content=o.content)
            for o in sorted(merged, key=lambda o: (-o.score, o.span.start_line))[: self.max_evidence_spans]
        ]

    def role(self, evidence: list[Evidence]) -> Role:
        if not evidence:
            return Role.CONTEXT
        return Role.PRIMARY if evidence[0].confidence.score >= self.primary_threshold else Role.SUPPORTING

    def result_files(self, task: Task, ctx: LocatorContext, states: list[FileState],
                     keep_unconfirmed: bool) -> list[ResultFile]:
        if self.narrowing is not None:
            self.narrowing.apply(task, ctx, states, self.is_evidence)
        files: list[tuple[float, ResultFile]] = []
        for s in states:
            evidence = self.evidence(task, s)
            if not evidence and not keep_unconfirmed:
                continue
            score = evidence[0].confidence.score if evidence else s.candidate.score
            files.append((score, ResultFile(
                path=s.path, role=self.role(evidence),
                confidence=Confidence.of(score, "noul", "best evidence span" if evidence else
                                         "FollowFile noul on the reference" if s.entry is Entry.FOLLOW else
                                         "file discovery from metadata only"),
                reason=f"{_entered(s)}; rounds {s.rounds}; terminated: {s.termination}",
                evidence=evidence,
            )))
        return [f for _, f in sorted(files, key=lambda sf: (-sf[0], sf[1].path))]
