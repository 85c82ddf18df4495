"""Which observations become evidence, and the result files they make."""

from __future__ import annotations

from pydantic import Field

from locator.reading.state import Entry, FileState, Observation
from locator.result import Confidence, Evidence, ResultFile, Role
from locator.settings import Settings
from locator.windows import LineRange

OBSERVATION_INSTRUCTIONS = "Does this excerpt contain the code the task is about?"


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

    def is_evidence(self, observation: Observation) -> bool:
        return observation.score >= self.observation_threshold

    def evidence(self, s: FileState) -> list[Evidence]:
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
                     reason=OBSERVATION_INSTRUCTIONS, content=o.content)
            for o in sorted(merged, key=lambda o: (-o.score, o.span.start_line))[: self.max_evidence_spans]
        ]

    def role(self, evidence: list[Evidence]) -> Role:
        if not evidence:
            return Role.CONTEXT
        return Role.PRIMARY if evidence[0].confidence.score >= self.primary_threshold else Role.SUPPORTING

    def result_files(self, states: list[FileState], keep_unconfirmed: bool) -> list[ResultFile]:
        files: list[tuple[float, ResultFile]] = []
        for s in states:
            evidence = self.evidence(s)
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
