"""Phase 2 of the two-phase locators: the progressive reader.

One loop for every variant: state -> grounded action space -> one System One decision request per
group of files -> read effect -> observation scoring -> state transition. Variants differ only in
how files are grouped into requests and which of the chosen actions run now (the schedule):

- `BatchSchedule`: files in batches of `batch_size`; one Choice question per active file, all
  questions of a batch in one request (the batches' requests run concurrently); every choice at or
  above the action threshold is read, a file whose choice is below it ends.
- `GlobalSchedule`: every handed-off file in one shared reader state; each epoch one request holds a
  Choice per eligible file (with a "wait" option) and the `epoch_width` most confident choices are
  read now; the others stay eligible.

Action space per file (bounded by `max_actions`): before/after expansions around up to
`max_hotspots` disconnected hotspots (regions of observations at or above `hotspot_threshold`),
then the unread windows of `window_lines`, each described by the definitions it holds (the file's
outline, whose signature lines are charged as read). Budgets are per file: after `soft_rounds` a
file earns a further round only if its last round produced a new observation at or above
`observation_threshold`; no file reads more than `hard_rounds` rounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from locator.base import LocatorContext
from locator.discovery import Candidate
from locator.result import Confidence, Evidence, FileCost, ResultFile, Role
from locator.settings import Settings
from locator.system_one.wire import Question, expect_choice, expect_noul
from locator.task import Task
from locator.windows import LineRange, tiles

CHOICE_INSTRUCTIONS = "Which unread range of this file should be read next to find the code the task is about?"
OBSERVATION_INSTRUCTIONS = "Does this excerpt contain the code the task is about?"
STOP, WAIT = "stop", "wait"
STOP_TEXT = "stop: nothing more in this file is needed"
WAIT_TEXT = "wait: read other files first"


class Termination(StrEnum):
    """Why a file stopped being read; each names what happened."""

    BUDGET_EXHAUSTED = "budget_exhausted"  # hard_rounds reached
    NO_NEW_EVIDENCE = "no_new_evidence"  # past soft_rounds, the last round found nothing new
    ACTION_SPACE_EXHAUSTED = "action_space_exhausted"  # nothing unread left to offer
    MODEL_STOP = "model_stop"  # System One chose the stop option
    NO_ACTION_ABOVE_THRESHOLD = "no_action_above_threshold"  # the chosen read's probability < action_threshold
    ALL_FILES_WAITING = "all_files_waiting"  # global: every remaining file chose to wait, nothing left to wait for


@dataclass(frozen=True)
class ReadAction:
    key: str
    kind: Literal["window", "before", "after"]
    span: LineRange
    description: str


@dataclass(frozen=True)
class Observation:
    span: LineRange
    score: float
    content: str
    round: int


def _merge(spans: list[LineRange]) -> list[LineRange]:
    merged: list[LineRange] = []
    for span in sorted(spans):
        if merged and span.start_line <= merged[-1].end_line + 1:
            merged[-1] = LineRange(merged[-1].start_line, max(merged[-1].end_line, span.end_line))
        else:
            merged.append(span)
    return merged


@dataclass(eq=False)
class FileState:
    candidate: Candidate
    windows: list[LineRange]
    signatures: dict[int, str]
    read: list[LineRange] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    rounds: int = 0
    termination: Termination | None = None

    @property
    def path(self) -> str:
        return self.candidate.info.path

    @property
    def line_count(self) -> int:
        return self.candidate.info.line_count

    def unread_segments(self, span: LineRange) -> list[LineRange]:
        segments, start = [], span.start_line
        for done in _merge(self.read):
            if done.end_line < start or done.start_line > span.end_line:
                continue
            if done.start_line > start:
                segments.append(LineRange(start, done.start_line - 1))
            start = max(start, done.end_line + 1)
        if start <= span.end_line:
            segments.append(LineRange(start, span.end_line))
        return segments

    def hotspots(self, level: float, limit: int) -> list[LineRange]:
        """Disconnected regions of observations at or above `level`, the best `limit` of them."""
        regions = _merge([o.span for o in self.observations if o.score >= level])
        best = {r: max(o.score for o in self.observations if o.score >= level and r.overlaps(o.span)) for r in regions}
        return sorted(regions, key=lambda r: (-best[r], r.start_line))[:limit]

    def _outline(self, span: LineRange) -> str:
        lines = [self.signatures[n].strip() for n in sorted(self.signatures) if span.start_line <= n <= span.end_line]
        return "\n".join(lines) if lines else "(no definitions start here)"

    def summary(self) -> dict[str, Any]:
        return {"lines": self.line_count, "read": [[r.start_line, r.end_line] for r in _merge(self.read)],
                "rounds": self.rounds}

    def lines_read(self) -> int:
        return sum(r.end_line - r.start_line + 1 for r in _merge(self.read))

    def cost(self) -> FileCost:
        lines = self.lines_read()
        coverage = 100.0 * lines / self.line_count if self.line_count else 0.0
        return FileCost(path=self.path, line_count=self.line_count, lines_read=lines, coverage_pct=round(coverage, 3),
                        rounds=self.rounds, termination=None if self.termination is None else self.termination.value)


@dataclass(eq=False)
class _Choice:
    state: FileState
    action: ReadAction | None  # None: a control option (stop or wait)
    probability: float
    stop: bool
    wait: bool


class BatchSchedule(Settings):
    """Files in batches of `batch_size`, a request per batch; every confident choice is read now and a
    file whose choice falls below the action threshold ends."""

    offers_wait: ClassVar[bool] = False
    batch_size: int = Field(ge=1)

    def groups(self, states: list[FileState]) -> list[list[FileState]]:
        return [states[i : i + self.batch_size] for i in range(0, len(states), self.batch_size)]

    def select(self, reads: list[_Choice], action_threshold: float) -> list[_Choice]:
        selected = []
        for c in reads:
            if c.probability >= action_threshold:
                selected.append(c)
            else:
                c.state.termination = Termination.NO_ACTION_ABOVE_THRESHOLD
        return selected


class GlobalSchedule(Settings):
    """Every file in one request per epoch; the `epoch_width` most confident reads run now, the rest
    (and files that chose to wait) stay eligible for the next epoch."""

    offers_wait: ClassVar[bool] = True
    epoch_width: int = Field(ge=1)

    def groups(self, states: list[FileState]) -> list[list[FileState]]:
        return [states]

    def select(self, reads: list[_Choice], action_threshold: float) -> list[_Choice]:
        confident = [c for c in reads if c.probability >= action_threshold]
        return sorted(confident, key=lambda c: (-c.probability, c.state.path))[: self.epoch_width]


class ProgressiveReader(Settings):
    schedule: BatchSchedule | GlobalSchedule
    window_lines: int = Field(ge=1, description="ReadRange window size")
    evidence_lines: int = Field(ge=1, description="observation granularity (chunks scored with Noul)")
    max_actions: int = Field(ge=1, description="options per Choice question (expansions first)")
    expand_lines: int = Field(ge=1, description="size of a before/after expansion around a hotspot")
    max_hotspots: int = Field(ge=1)
    action_threshold: float = Field(ge=0.0, le=1.0)
    observation_threshold: float = Field(ge=0.0, le=1.0)
    hotspot_threshold: float = Field(ge=0.0, le=1.0)
    soft_rounds: int = Field(ge=1)
    hard_rounds: int = Field(ge=1)
    max_evidence_spans: int = Field(ge=1)

    @model_validator(mode="after")
    def _budget_ordered(self) -> "ProgressiveReader":
        if self.hard_rounds < self.soft_rounds:
            raise ValueError(f"hard_rounds ({self.hard_rounds}) must be >= soft_rounds ({self.soft_rounds})")
        return self

    # --- action space -------------------------------------------------------------------------

    def actions(self, state: FileState) -> list[ReadAction]:
        found: list[ReadAction] = []
        for h, spot in enumerate(state.hotspots(self.hotspot_threshold, self.max_hotspots)):
            edge_before = state.signatures.get(spot.start_line, "")
            for kind, span in (
                ("before", LineRange(max(1, spot.start_line - self.expand_lines), spot.start_line - 1)),
                ("after", LineRange(spot.end_line + 1, min(state.line_count, spot.end_line + self.expand_lines))),
            ):
                if span.end_line >= span.start_line and state.unread_segments(span):
                    near = next((o.content for o in state.observations if o.span.overlaps(spot)), edge_before)
                    found.append(ReadAction(f"{kind}{h}", kind, span,
                                            f"{kind} hotspot {spot.label()}: {span.label()}\n{state._outline(span)}\n"
                                            f"continues from:\n{near[:400]}"))
        for w, window in enumerate(state.windows):
            if state.unread_segments(window):
                found.append(ReadAction(f"w{w}", "window", window, f"{window.label()}\n{state._outline(window)}"))
        return found[: self.max_actions]

    # --- the loop -----------------------------------------------------------------------------

    def read(self, task: Task, ctx: LocatorContext, handed_off: list[Candidate]) -> list[FileState]:
        with ctx.stage("reading") as stage:
            states = [self._open(ctx, c) for c in handed_off]
            epochs = requests = 0
            while True:
                actions = {id(s): self.actions(s) for s in states if s.termination is None}
                for s in states:
                    if s.termination is None and not actions[id(s)]:
                        s.termination = Termination.ACTION_SPACE_EXHAUSTED
                eligible = [s for s in states if s.termination is None]
                if not eligible:
                    break
                epochs += 1
                groups = self.schedule.groups(eligible)
                choices = self._choose(task, ctx, groups, actions)
                requests += len(groups)
                for c in choices:
                    if c.stop:
                        c.state.termination = Termination.MODEL_STOP
                reads = [c for c in choices if c.action is not None]
                selected = {c.state: c.action for c in self.schedule.select(reads, self.action_threshold)}
                if not selected:
                    waiting = {id(c.state) for c in choices if c.wait}
                    for s in eligible:
                        if s.termination is None:
                            s.termination = (Termination.ALL_FILES_WAITING if id(s) in waiting
                                             else Termination.NO_ACTION_ABOVE_THRESHOLD)
                    break
                requests += self._observe(task, ctx, self.schedule.groups(list(selected)), selected)
                for s in selected:
                    self._account_round(s)
            costs = [s.cost() for s in states]
            stage.files.extend(costs)
            stage.set(epochs=epochs, requests=requests, files_handed_off=len(states),
                      files_read=sum(1 for s in states if s.read),
                      coverage_pct_mean=round(sum(c.coverage_pct for c in costs) / len(costs), 3) if costs else None,
                      max_rounds_of_a_file=max((s.rounds for s in states), default=0),
                      ranges_read=sum(len(_merge(s.read)) for s in states),
                      **{f"terminated_{t.value}": sum(s.termination == t for s in states) for t in Termination})
            ctx.decide(stage="reading", termination={s.path: str(s.termination) for s in states},
                       rounds={s.path: s.rounds for s in states})
        return states

    def _open(self, ctx: LocatorContext, candidate: Candidate) -> FileState:
        info = candidate.info
        outline = ctx.outline(info.path)
        return FileState(candidate, tiles(info.line_count, self.window_lines), outline.signatures)

    def _request_state(self, task: Task, group: list[FileState]) -> dict[str, Any]:
        return {"task": task.text, "stage": "reading", "reader": {s.path: s.summary() for s in group}}

    def _choose(self, task: Task, ctx: LocatorContext, groups: list[list[FileState]],
                actions: dict[int, list[ReadAction]]) -> list[_Choice]:
        """One Choice question per file, one request per group."""
        calls, keyed = [], []
        for group in groups:
            questions = {}
            for s in group:
                options = {STOP: STOP_TEXT} | {a.key: a.description for a in actions[id(s)]}
                if self.schedule.offers_wait:
                    options[WAIT] = WAIT_TEXT
                key = f"file{len(keyed)}"
                questions[key] = Question(type="choice", instructions=CHOICE_INSTRUCTIONS, criteria=options,
                                          content=f"file: {s.path} ({s.line_count} lines)")
                keyed.append((key, s))
            calls.append((self._request_state(task, group), questions))
        answers: dict[str, Any] = {}
        for response in ctx.ask_many(calls):
            answers.update(response.answers)
        choices = []
        for key, s in keyed:
            answer = expect_choice(answers[key], key)
            by_key = {a.key: a for a in actions[id(s)]}
            choices.append(_Choice(s, by_key.get(answer.choice), answer.probabilities.get(answer.choice, 0.0),
                                   stop=answer.choice == STOP, wait=answer.choice == WAIT))
        return choices

    def _observe(self, task: Task, ctx: LocatorContext, groups: list[list[FileState]],
                 selected: dict[FileState, ReadAction]) -> int:
        """Read each selected action's unread lines, then score them in chunks (a request per group)."""
        calls, keyed = [], []
        for group in groups:
            questions = {}
            for s in group:
                s.rounds += 1
                for segment in s.unread_segments(selected[s].span):
                    lines = ctx.read(s.path, segment.start_line, segment.end_line).lines
                    s.read.append(segment)
                    for chunk in tiles(len(lines), self.evidence_lines):
                        span = LineRange(chunk.start_line + segment.start_line - 1, chunk.end_line + segment.start_line - 1)
                        text = "".join(lines[chunk.start_line - 1 : chunk.end_line])
                        key = f"obs{len(keyed)}"
                        questions[key] = Question(type="noul", instructions=OBSERVATION_INSTRUCTIONS,
                                                  criteria=f"{s.path} {span.label()}", content=text)
                        keyed.append((key, s, span, text))
            if questions:
                calls.append((self._request_state(task, group), questions))
        answers: dict[str, Any] = {}
        for response in ctx.ask_many(calls):
            answers.update(response.answers)
        for key, s, span, text in keyed:
            s.observations.append(Observation(span, expect_noul(answers[key], key).noul, text, s.rounds))
        return len(calls)

    def _account_round(self, s: FileState) -> None:
        new_evidence = any(o.round == s.rounds and o.score >= self.observation_threshold for o in s.observations)
        if s.rounds >= self.hard_rounds:
            s.termination = Termination.BUDGET_EXHAUSTED
        elif s.rounds >= self.soft_rounds and not new_evidence:
            s.termination = Termination.NO_NEW_EVIDENCE

    # --- output -------------------------------------------------------------------------------

    def evidence(self, s: FileState) -> list[Evidence]:
        """Observations above the observation threshold, adjacent ones merged, the best few first."""
        kept = sorted((o for o in s.observations if o.score >= self.observation_threshold), key=lambda o: o.span)
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
                     confidence=Confidence.of(o.score, "noul", "System One noul on the excerpt (best chunk of a merged span)"),
                     reason=OBSERVATION_INSTRUCTIONS, content=o.content)
            for o in sorted(merged, key=lambda o: (-o.score, o.span.start_line))[: self.max_evidence_spans]
        ]

    def result_files(self, states: list[FileState], keep_unconfirmed: bool) -> list[ResultFile]:
        files: list[tuple[float, ResultFile]] = []
        for s in states:
            evidence = self.evidence(s)
            if not evidence and not keep_unconfirmed:
                continue
            score = evidence[0].confidence.score if evidence else s.candidate.score
            files.append((score, ResultFile(
                path=s.path, role=Role.RELEVANT if evidence else Role.CONTEXT,
                confidence=Confidence.of(score, "noul", "best evidence span" if evidence else "file discovery from metadata only"),
                reason=f"discovery noul {s.candidate.score:.3f}; rounds {s.rounds}; terminated: {s.termination}",
                evidence=evidence,
            )))
        return [f for _, f in sorted(files, key=lambda sf: (-sf[0], sf[1].path))]
