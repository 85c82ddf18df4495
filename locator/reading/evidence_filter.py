"""Seed 000's Algorithm A post-loop filter: a minimal evidence set per file. After navigation and
evidence scoring, a file's candidates (reads at or above the observation threshold) are taken best
first; the first is kept, each next one only if System One judges that it adds material evidence
not already covered by the spans kept (the kept text travels in the request as `covered`)."""

from __future__ import annotations

from pydantic import Field

from locator.base import LocatorContext
from locator.reading.evidence import ThresholdEvidence
from locator.reading.per_file import run_per_file
from locator.reading.state import FileState
from locator.settings import Settings
from locator.system_one.wire import NoulAnswer, Question
from locator.task import Task

FILTER_INSTRUCTIONS = ("Does this excerpt add material evidence for the task that is not already covered by the "
                       "evidence kept so far (`covered`)?")


def _candidates(evidence: ThresholdEvidence, states: list[FileState]) -> tuple[int, int]:
    """Evidence candidates (reads at or above the threshold) and their lines. Counted before merging:
    dropping a read between two kept ones splits a merged span, so merged spans would not say it."""
    kept = [o for s in states for o in s.observations if evidence.is_evidence(o)]
    return len(kept), sum(o.span.end_line - o.span.start_line + 1 for o in kept)


class MinimalEvidenceFilter(Settings):
    enabled: bool = Field(description="false: no filter (the mechanism ablation)")
    keep_threshold: float = Field(ge=0.0, le=1.0, description="Noul a candidate needs to be kept beside the kept ones")
    max_covered_chars: int = Field(ge=1, description="the kept text shown as `covered`, best first, is cut here")

    def apply(self, task: Task, ctx: LocatorContext, states: list[FileState], evidence: ThresholdEvidence) -> None:
        if not self.enabled:
            return
        with ctx.stage("evidence_filter") as stage:
            candidates, lines = _candidates(evidence, states)
            run_per_file(ctx, states, lambda s: s, lambda s: self._filter(task, ctx, s, evidence))
            kept, lines_kept = _candidates(evidence, states)
            stage.count(evidence_candidates=candidates, evidence_candidates_kept=kept,
                        evidence_lines=lines, evidence_lines_kept=lines_kept)

    def _filter(self, task: Task, ctx: LocatorContext, s: FileState, evidence: ThresholdEvidence) -> None:
        candidates = sorted((o for o in s.observations if evidence.is_evidence(o)), key=lambda o: (-o.score, o.span))
        kept = candidates[:1]
        for candidate in candidates[1:]:
            state = {"task": task.text, "stage": "evidence_filter", "file": s.path,
                     "covered": "".join(k.content for k in kept)[: self.max_covered_chars]}
            question = Question(type="noul", instructions=FILTER_INSTRUCTIONS, criteria=f"{s.path} {candidate.span.label()}",
                                content=candidate.content)
            [(_, answer)] = ctx.ask_keyed([(state, [(None, question)])], prefix="keep", expect=NoulAnswer)
            if answer.noul >= self.keep_threshold:
                kept.append(candidate)
        kept_ids = {id(k) for k in kept}
        s.observations = [o for o in s.observations if not evidence.is_evidence(o) or id(o) in kept_ids]
