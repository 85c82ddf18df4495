"""Seed 000's Algorithm B, adaptive semantic zoom, as a per-file reader.

Each handed-off file is stratified into `regions` coarse regions (at least `probe_lines` long), each
probed by a `probe_lines` read at its midpoint. Every round System One gives one Choice distribution
over the file's region frontier (each region shown with its probe). The exploit regions are the most
probable, up to `max_selected`, until their mass reaches `mass`; `explore_slots` more go to the
least-explored regions by geometry (probed share, then size, then a seeded draw). Selected regions
longer than `converge_lines` split into `children` parts, each probed the same way. The file
converges when every exploit region is at most `converge_lines` long and their roots (the coarse
regions they descend from) are the same as the round before; otherwise `round_budget` rounds end it.
The last exploit regions are read whole and scored once, after navigation, as evidence.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from locator.base import LocatorContext
from locator.discovery import Candidate
from locator.hashing import blake3_hex
from locator.reading.effects import read_unread, score_reads
from locator.reading.per_file import run_per_file
from locator.reading.reader import ReadsEvidence, report_reading
from locator.reading.state import FileState, Termination
from locator.system_one.wire import ChoiceAnswer, Question
from locator.task import Task
from locator.windows import LineRange

ZOOM_INSTRUCTIONS = "Which region of this file most likely holds the code the task is about? Each is shown by a probe at its middle."


@dataclass(frozen=True)
class Region:
    span: LineRange
    root: int  # the coarse region it descends from
    probe: LineRange

    @property
    def lines(self) -> int:
        return self.span.end_line - self.span.start_line + 1


@dataclass(eq=False)
class ZoomFile:
    state: FileState
    frontier: list[Region] = field(default_factory=list)
    text: dict[int, str] = field(default_factory=dict)  # line number -> line, of everything read
    selected: list[Region] = field(default_factory=list)  # the last round's exploit regions
    probes: int = 0


class SemanticZoom(ReadsEvidence):
    regions: int = Field(ge=1, description="coarse regions per file (fewer when the file is shorter than regions x probe_lines)")
    probe_lines: int = Field(ge=1, description="lines of the midpoint probe of a region")
    max_selected: int = Field(ge=1, description="exploit regions kept per round at most")
    mass: float = Field(gt=0.0, le=1.0, description="exploit regions are kept until their probability mass reaches this")
    explore_slots: int = Field(ge=0, description="regions per round chosen by geometry alone (least explored)")
    children: int = Field(ge=2, description="parts a selected region splits into")
    converge_lines: int = Field(ge=1, description="a selected region this short is not split further")
    round_budget: int = Field(ge=1, description="rounds before an unconverged file ends as budget_exhausted")
    seed: int = Field(description="seeds the exploration slot's tie break")

    def read(self, task: Task, ctx: LocatorContext, handed_off: list[Candidate]) -> list[FileState]:
        with ctx.stage("reading") as stage:
            files = [ZoomFile(FileState(c, None)) for c in handed_off]
            run_per_file(ctx, files, lambda z: z.state, lambda z: self._zoom(task, ctx, z))
            finals = [(z.state, [(r.span, self._read_whole(ctx, z, r), z.state.rounds) for r in z.selected]) for z in files]
            states = [z.state for z in files]
            requests = sum(s.rounds for s in states) + score_reads(ctx, task, states, {id(s): spans for s, spans in finals})
            costs = [z.state.cost().model_copy(update={"final_region_lines": [r.lines for r in z.selected]}) for z in files]
            final = [r.lines for z in files for r in z.selected]
            report_reading(stage, states, costs, rounds=sum(s.rounds for s in states), requests=requests,
                           final_region_lines_mean=round(sum(final) / len(final), 3) if final else None)
            stage.count(probes=sum(z.probes for z in files), final_regions=len(final),
                        converged=sum(s.termination == Termination.CONVERGED for s in states),
                        round_budget_exits=sum(s.termination == Termination.BUDGET_EXHAUSTED for s in states))
        return states

    def _zoom(self, task: Task, ctx: LocatorContext, z: ZoomFile) -> None:
        s = z.state
        if s.line_count == 0:
            s.termination = Termination.ACTION_SPACE_EXHAUSTED
            return
        count = max(1, min(self.regions, s.line_count // self.probe_lines))
        z.frontier = [self._probe(ctx, z, LineRange(part.start_line, part.end_line), root, 0)
                      for root, part in enumerate(_split(LineRange(1, s.line_count), count))]
        roots_before: set[int] | None = None
        while True:
            s.rounds += 1
            probabilities = self._ask(task, ctx, z)
            exploit = self.exploit(z.frontier, probabilities)
            explore = self.explore(z, [r for r in z.frontier if r not in exploit])
            z.selected = exploit
            roots = {r.root for r in exploit}
            if all(r.lines <= self.converge_lines for r in exploit) and roots == roots_before:
                s.termination = Termination.CONVERGED
                return
            if s.rounds == self.round_budget:
                s.termination = Termination.BUDGET_EXHAUSTED
                return
            roots_before = roots
            for region in [*exploit, *explore]:
                if region.lines > self.converge_lines:
                    children = [self._probe(ctx, z, part, region.root, s.rounds) for part in _split(region.span, self.children)]
                    at = z.frontier.index(region)
                    z.frontier[at : at + 1] = children

    def exploit(self, frontier: list[Region], probabilities: dict[int, float]) -> list[Region]:
        """The most probable regions (ties: earlier first), until their mass reaches `mass`, at most `max_selected`."""
        ranked = sorted(range(len(frontier)), key=lambda i: (-probabilities.get(i, 0.0), frontier[i].span))
        kept, mass = [], 0.0
        for i in ranked[: self.max_selected]:
            kept.append(frontier[i])
            mass += probabilities.get(i, 0.0)
            if mass >= self.mass:
                break
        return kept

    def explore(self, z: ZoomFile, others: list[Region]) -> list[Region]:
        """Geometry only: the regions whose lines were least probed, the larger first; remaining ties by a seeded draw."""
        rng = random.Random(int(blake3_hex(f"{self.seed}\0{z.state.path}\0{z.state.rounds}")[:16], 16))
        keyed = [((sum(1 for n in range(r.span.start_line, r.span.end_line + 1) if n in z.text) / r.lines, -r.lines),
                  rng.random(), r) for r in others]
        return [r for _, _, r in sorted(keyed, key=lambda k: (k[0], k[1]))[: self.explore_slots]]

    def _probe(self, ctx: LocatorContext, z: ZoomFile, span: LineRange, root: int, round_: int) -> Region:
        length = span.end_line - span.start_line + 1
        start = span.start_line + max(0, (length - self.probe_lines) // 2)
        probe = LineRange(start, min(span.end_line, start + self.probe_lines - 1))
        self._read(ctx, z, probe, round_)
        z.probes += 1
        return Region(span, root, probe)

    def _read(self, ctx: LocatorContext, z: ZoomFile, span: LineRange, round_: int) -> None:
        for raw in read_unread(ctx, z.state, span, round_):
            for offset, line in enumerate(raw.lines):
                z.text[raw.span.start_line + offset] = line

    def _read_whole(self, ctx: LocatorContext, z: ZoomFile, region: Region) -> str:
        self._read(ctx, z, region.span, z.state.rounds)
        return "".join(z.text[n] for n in range(region.span.start_line, region.span.end_line + 1))

    def _ask(self, task: Task, ctx: LocatorContext, z: ZoomFile) -> dict[int, float]:
        """One Choice over the frontier; returns each region's probability by its frontier index."""
        options = {f"z{i}": f"{r.span.label()} of {z.state.line_count}, probe {r.probe.label()}:\n"
                            + "".join(z.text.get(n, "") for n in range(r.probe.start_line, r.probe.end_line + 1))
                   for i, r in enumerate(z.frontier)}
        state: dict[str, Any] = {"task": task.text, "stage": "semantic_zoom", "file": z.state.path,
                                 "round": z.state.rounds, "lines": z.state.line_count}
        question = Question(type="choice", instructions=ZOOM_INSTRUCTIONS, criteria=options)
        [(_, answer)] = ctx.ask_keyed([(state, [(None, question)])], prefix="zoom", expect=ChoiceAnswer)
        return {int(k[1:]): p for k, p in answer.probabilities.items()}


def _split(span: LineRange, parts: int) -> list[LineRange]:
    """`parts` contiguous ranges as equal as lines allow (fewer when the span is shorter)."""
    length = span.end_line - span.start_line + 1
    parts = min(parts, length)
    bounds = [span.start_line + (length * i) // parts for i in range(parts + 1)]
    return [LineRange(bounds[i], bounds[i + 1] - 1) for i in range(parts)]
