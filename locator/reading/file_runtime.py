"""Seed 000's per-file range runtime, with the StopFile control choice and its reconciliation.

Every handed-off file gets its own FileRuntime; runtimes share only the immutable task text and
run concurrently (one request in flight per runtime, at most `system_one.max_concurrency`
runtimes at once). Each epoch one mixed request per file asks

    a Choice StopFile vs ContinueFile (control: is what was read a representative, sufficient
    result for this file, not full coverage) + a Noul per concrete ReadRange (information value)

Policy: StopFile with no read at or above `read_threshold` ends the file (`model_stop`);
ContinueFile runs every non-overlapping read at or above it (a concurrency knob only). The two
contradictory states are reconciled by System One in a follow-up Choice between finalizing the
file and running the displayed best read: StopFile while a read clears the threshold, and
ContinueFile while none does. A below-threshold read runs only after that authorization; there
is no unconditional fallback. No read left: `action_space_exhausted`, without asking. After
`safety_epochs` epochs: `budget_exhausted`. Evidence is scored after navigation.

With `locator/follow=references` (FollowFile), each epoch's request also carries a Noul per file the
file's observations refer to (each offered once; what is left when the file ends is asked in one
last request); a follow at or above `read_threshold` is wanted. When every runtime of a wave has
ended, the wanted files are admitted in hand-off order within the bounds, each with a runtime of its
own, and they form the next wave: so admission never depends on which runtime finished first.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import Field

from locator.base import LocatorContext
from locator.discovery import Candidate
from locator.reading.actions import CONTINUE_FILE as CONTINUE
from locator.reading.actions import FINALIZE_FILE, READ_BEST, ReadRange
from locator.reading.actions import STOP_FILE_SUFFICIENT as STOP_FILE
from locator.reading.effects import read_unread, score_reads
from locator.reading.decision_form import EVEN_ODDS, DecisionForm
from locator.reading.evidence_filter import MinimalEvidenceFilter
from locator.languages.references import FileIndex
from locator.reading.follow import FOLLOW_INSTRUCTIONS, FollowFile, FollowFiles, FollowLedger
from locator.reading.geometry import GeometryActions
from locator.reading.per_file import run_per_file
from locator.reading.framing import WORDINGS, Framing
from locator.reading.reader import ReadsEvidence, report_reading
from locator.reading.selection import ScoredRead, best, deconflict
from locator.reading.state import FileState, Termination
from locator.reading.view import DecisionView, Seen
from locator.system_one.wire import ChoiceAnswer, NoulAnswer, Question
from locator.task import Task

def _follow_question(follow: FollowFile) -> Question:
    return Question(type="noul", instructions=FOLLOW_INSTRUCTIONS, criteria=follow.description)


RECONCILE_INSTRUCTIONS = "The control choice and the read utilities disagree. Finish this file, or run the read shown?"


class Selection(StrEnum):
    """How an epoch's reads were selected (yield telemetry)."""

    THRESHOLD = "threshold"  # ContinueFile; every non-overlapping read at or above the threshold
    STOP = "stop"  # StopFile, no read at or above the threshold
    RECONCILED_STOP = "reconciled_stop"  # a reconciliation chose to finalize the file
    RECONCILED_READ = "reconciled_read"  # a reconciliation authorized the best read


class Reconciliation(StrEnum):
    STOP_WITH_READ_ABOVE = "stop_with_read_above"  # StopFile while a read is at or above the threshold
    CONTINUE_WITHOUT_READ_ABOVE = "continue_without_read_above"  # ContinueFile while every read is below it


@dataclass(frozen=True)
class EpochYield:
    epoch: int
    control: str
    max_read_utility: float
    selection: Selection


@dataclass(eq=False)
class FileRuntime:
    """One file's durable state: its reads and raw observations, its epochs' yield, its reconciliations."""

    state: FileState
    seen: list[Seen] = field(default_factory=list)
    yields: list[EpochYield] = field(default_factory=list)
    reconciliations: Counter = field(default_factory=Counter)
    wanted: list[tuple[FollowFile, float]] = field(default_factory=list)  # follows at or above the threshold
    follows_offered: int = 0
    follow_requests: int = 0  # the last request of a file that ended with follows not yet asked

    def low_utility_streak(self, threshold: float) -> int:
        streak = 0
        for y in reversed(self.yields):
            if y.max_read_utility >= threshold:
                break
            streak += 1
        return streak


class FileRuntimes(ReadsEvidence):
    framing: Framing
    actions: GeometryActions
    view: DecisionView
    read_threshold: float = Field(ge=0.0, le=1.0, description="Noul a read needs to run without reconciliation")
    safety_epochs: int = Field(ge=1, description="epochs a file may take before it ends as budget_exhausted")
    telemetry_epochs: int = Field(ge=0, description="recent epochs whose yield the DecisionView shows")
    evidence_filter: MinimalEvidenceFilter | None
    follow: FollowFiles | None = Field(description="FollowFile bounds (locator/follow=references); null: the file set is fixed")
    decision_form: DecisionForm = Field(description="the control: a Choice stop_file/continue_file (seed), or a Noul of "
                                                    "stop_file taken at even odds")

    def read(self, task: Task, ctx: LocatorContext, handed_off: list[Candidate]) -> list[FileState]:
        with ctx.stage("reading") as stage:
            runtimes = [FileRuntime(FileState(c, None)) for c in handed_off]
            ledger = None if self.follow is None else FollowLedger(
                self.follow, FileIndex(ctx.files()), {c.info.path for c in handed_off})
            wave = runtimes
            while wave:
                run_per_file(ctx, wave, lambda rt: rt.state, lambda rt: self._run(task, ctx, rt, ledger))
                wave = [] if ledger is None else [
                    FileRuntime(state) for rt in wave for action, score in rt.wanted
                    if (state := ledger.admit(action, score)) is not None]
                runtimes += wave
            states = [rt.state for rt in runtimes]
            requests = sum(len(rt.yields) + sum(rt.reconciliations.values()) + rt.follow_requests for rt in runtimes)
            requests += score_reads(ctx, task, states)
            kinds = Counter(k for rt in runtimes for k in rt.reconciliations.elements())
            modes = Counter(y.selection for rt in runtimes for y in rt.yields)
            stops = sum(s.termination == Termination.MODEL_STOP for s in states)
            report_reading(stage, states, epochs=sum(len(rt.yields) for rt in runtimes), requests=requests,
                           reads=sum(s.reads for s in states),
                           model_stop_rate=round(stops / len(states), 6) if states else None)
            stage.count(**{f"reconciliations_{k.value}": kinds[k] for k in Reconciliation},
                        **{f"selection_{m.value}": modes[m] for m in Selection})
            if ledger is not None:
                stage.count(**ledger.details(), follows_offered=sum(rt.follows_offered for rt in runtimes),
                            follows_wanted=sum(len(rt.wanted) for rt in runtimes))
            ctx.decide(stage="reading", termination={s.path: str(s.termination) for s in states},
                       epochs={s.path: s.rounds for s in states})
        if self.evidence_filter is not None:
            self.evidence_filter.apply(task, ctx, states, self.evidence)
        return states

    def _run(self, task: Task, ctx: LocatorContext, rt: FileRuntime, ledger: FollowLedger | None) -> None:
        self._navigate(task, ctx, rt, ledger)
        if ledger is not None and (left := ledger.propose(rt.state, once=True)):
            rt.follow_requests += 1
            self._ask_follows(task, ctx, rt, left)

    def _navigate(self, task: Task, ctx: LocatorContext, rt: FileRuntime, ledger: FollowLedger | None) -> None:
        s = rt.state
        while True:
            actions = self.actions.propose(s)
            if not actions:
                s.termination = Termination.ACTION_SPACE_EXHAUSTED
                return
            if s.rounds == self.safety_epochs:
                s.termination = Termination.BUDGET_EXHAUSTED
                return
            s.rounds += 1
            follows = [] if ledger is None else ledger.propose(s, once=True)
            control, reads = self._ask_epoch(task, ctx, rt, actions, follows)
            above = deconflict([r for r in reads if r.score >= self.read_threshold])
            top = best(reads)
            if control == STOP_FILE.key and not above:
                selection, run = Selection.STOP, []
            elif control == CONTINUE.key and above:
                selection, run = Selection.THRESHOLD, above
            else:
                kind = Reconciliation.STOP_WITH_READ_ABOVE if above else Reconciliation.CONTINUE_WITHOUT_READ_ABOVE
                rt.reconciliations[kind] += 1
                if self._reconcile(task, ctx, rt, top, kind) == READ_BEST.key:
                    selection, run = Selection.RECONCILED_READ, [top]
                else:
                    selection, run = Selection.RECONCILED_STOP, []
            rt.yields.append(EpochYield(s.rounds, control, top.score, selection))
            if not run:
                s.termination = Termination.MODEL_STOP
                return
            for r in run:
                rt.seen.extend(Seen(s.path, raw) for raw in read_unread(ctx, s, r.action.span, s.rounds))

    def _request_state(self, task: Task, rt: FileRuntime) -> dict[str, Any]:
        s = rt.state
        covered = {"covered": "".join(seen.raw.text for seen in self.view.project(rt.seen)[0])} \
            if WORDINGS[self.framing].shows_covered else {}
        return covered | {
            "task": task.text, "stage": "file_runtime",
            "file": {"path": s.path, "lines": s.line_count, "coverage_pct": round(s.coverage_pct(), 1), "epoch": s.rounds},
            "yield": {  # bounded exploration-yield telemetry: diminishing returns without reading the source
                "recent": [{"epoch": y.epoch, "control": y.control, "max_read_utility": round(y.max_read_utility, 3),
                            "selection": y.selection.value} for y in rt.yields[len(rt.yields) - self.telemetry_epochs:]]
                if self.telemetry_epochs else [],
                "low_utility_streak": rt.low_utility_streak(self.read_threshold),
            },
        }

    def _ask_epoch(self, task: Task, ctx: LocatorContext, rt: FileRuntime, actions: list[ReadRange],
                   follows: list[FollowFile]) -> tuple[str, list[ScoredRead]]:
        """The epoch's one mixed request: the control Choice (shown the DecisionView), a Noul per read
        and a Noul per follow (its wanted follows recorded on the runtime)."""
        view, wording = self.view.render(rt.seen), WORDINGS[self.framing]
        stop = f"{wording.stop.description}\n{view}"
        control_question = Question(
            type="choice", instructions=wording.control,
            criteria={wording.stop.key: stop, wording.proceed.key: f"{wording.proceed.description} {rt.state.path}"},
        ) if self.decision_form is DecisionForm.CHOICE else Question(type="noul", instructions=wording.control, criteria=stop)
        items: list[tuple[Any, Question]] = [("control", control_question)]
        items += [(a, Question(type="noul", instructions=wording.read, criteria=a.description)) for a in actions]
        items += [(f, _follow_question(f)) for f in follows]
        [(_, control), *scored] = ctx.ask_keyed([(self._request_state(task, rt), items)], prefix="q", expect=None)
        self._record_follows(rt, [(f, a.noul) for f, a in scored[len(actions):]])
        if self.decision_form is DecisionForm.NOUL:
            control_key = wording.stop.key if control.noul >= EVEN_ODDS else wording.proceed.key
        else:
            control_key = control.choice
        return control_key, [ScoredRead(rt.state, a, answer.noul) for a, answer in scored[: len(actions)]]

    def _ask_follows(self, task: Task, ctx: LocatorContext, rt: FileRuntime, follows: list[FollowFile]) -> None:
        """The follows a file's last observations gave, asked once its navigation ended."""
        state = self._request_state(task, rt) | {"stage": "follow"}
        answered = ctx.ask_keyed([(state, [(f, _follow_question(f)) for f in follows])], prefix="follow", expect=NoulAnswer)
        self._record_follows(rt, [(f, a.noul) for f, a in answered])

    def _record_follows(self, rt: FileRuntime, scored: list[tuple[FollowFile, float]]) -> None:
        rt.follows_offered += len(scored)
        rt.wanted += [(f, score) for f, score in scored if score >= self.read_threshold]

    def _reconcile(self, task: Task, ctx: LocatorContext, rt: FileRuntime, top: ScoredRead, kind: Reconciliation) -> str:
        view = self.view.render(rt.seen)
        question = Question(type="choice", instructions=RECONCILE_INSTRUCTIONS, content=f"conflict: {kind.value}",
                            criteria={FINALIZE_FILE.key: f"{FINALIZE_FILE.description}\n{view}",
                                      READ_BEST.key: f"{READ_BEST.description} (utility {top.score:.2f})\n{top.action.description}"})
        state = self._request_state(task, rt) | {"reconciliation": kind.value}
        [(_, answer)] = ctx.ask_keyed([(state, [(None, question)])], prefix="reconcile", expect=ChoiceAnswer)
        return answer.choice
