"""Tighter evidence boundaries (seed 000's fourth follow-up): an evidence span longer than
`min_lines` is cut where its own structure changes (a definition or decorator at the span's outer
indentation), and System One judges each part with the same Noul question that made the span
evidence. The parts at or above the threshold replace the span; when none reaches it the span stays
whole, so narrowing never drops what was evidence, it only tightens it. The parts are lines the
reader was handed already: nothing is read, and the decisions are the `evidence_narrowing` stage's cost."""

from __future__ import annotations

import re
from collections.abc import Callable

from pydantic import Field

from locator.base import LocatorContext
from locator.reading.questions import observation_question
from locator.reading.state import FileState, Observation
from locator.settings import Settings
from locator.system_one.wire import NoulAnswer
from locator.task import Task
from locator.windows import LineRange

NARROWING_STAGE = "evidence_narrowing"
_BOUNDARY = re.compile(r"(?:async[ \t]+)?(?:def|class)[ \t]|@")


def structural_parts(span: LineRange, lines: list[str], max_parts: int) -> list[LineRange]:
    """The span cut before each definition (or its decorators) at the span's outer indentation; the
    smallest neighbours merged while there are more than `max_parts`."""
    code = [(n, line) for n, line in enumerate(lines) if line.strip()]
    if not code:
        return [span]
    outer = min(len(line) - len(line.lstrip()) for _, line in code)
    starts, previous_decorator = [0], False
    for n, line in code:
        text = line[outer:]  # a deeper line keeps leading blanks here, so only the outer level matches
        is_boundary = _BOUNDARY.match(text)
        if is_boundary and not previous_decorator and n > 0:
            starts.append(n)
        previous_decorator = bool(is_boundary) and text.startswith("@")
    parts = [LineRange(span.start_line + a, span.start_line + b - 1) for a, b in zip(starts, starts[1:] + [len(lines)])]
    while len(parts) > max_parts:
        i = min(range(len(parts) - 1), key=lambda k: parts[k + 1].end_line - parts[k].start_line)
        parts[i : i + 2] = [LineRange(parts[i].start_line, parts[i + 1].end_line)]
    return parts


class DefinitionNarrowing(Settings):
    """`locator/evidence=narrowed`: evidence spans over `min_lines` narrowed to their parts System One
    confirms (at most `max_parts` parts per span)."""

    min_lines: int = Field(ge=1, description="a span of at most this many lines is kept as it is")
    max_parts: int = Field(ge=2, description="parts one span is cut into, at most")

    def apply(self, task: Task, ctx: LocatorContext, states: list[FileState],
              is_evidence: Callable[[Observation], bool]) -> None:
        with ctx.stage(NARROWING_STAGE) as stage:
            calls, spans = [], 0
            for s in states:
                items = []
                for o in s.observations:
                    lines = o.content.splitlines(keepends=True)
                    length = o.span.end_line - o.span.start_line + 1
                    if not is_evidence(o) or length <= self.min_lines or len(lines) != length:
                        continue
                    parts = structural_parts(o.span, lines, self.max_parts)
                    if len(parts) < 2:
                        continue
                    spans += 1
                    for part in parts:
                        text = "".join(lines[part.start_line - o.span.start_line : part.end_line - o.span.start_line + 1])
                        items.append(((s, o, part, text), observation_question(s.path, part, text)))
                if items:
                    calls.append(({"task": task.text, "stage": NARROWING_STAGE, "file": s.path}, items))
            confirmed: dict[int, list[Observation]] = {}
            for (s, o, part, text), answer in ctx.ask_keyed(calls, prefix="narrow", expect=NoulAnswer):
                part_observation = Observation(part, answer.noul, text, o.round)
                if is_evidence(part_observation):
                    confirmed.setdefault(id(o), []).append(part_observation)
            before = after = narrowed = 0
            for s in states:
                kept = []
                for o in s.observations:
                    if id(o) in confirmed:
                        whole = o.span.end_line - o.span.start_line + 1
                        parts = sum(p.span.end_line - p.span.start_line + 1 for p in confirmed[id(o)])
                        before, after, narrowed = before + whole, after + parts, narrowed + (parts < whole)
                        kept += confirmed[id(o)]
                    else:
                        kept.append(o)
                s.observations = kept
            stage.set(requests=len(calls))
            # narrowed: the confirmed parts hold fewer lines than the span (every part confirmed is the span again)
            stage.count(spans_considered=spans, spans_narrowed=narrowed, narrowed_lines_before=before,
                        narrowed_lines_after=after)
