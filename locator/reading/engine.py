"""The reading loop: state -> actions -> one Choice per file, a request per group -> policy ->
read and observe -> budget, until no file is left. `ReaderSteps` makes the decisions; when each
request is sent is `epochs.EpochFlow`'s (as soon as its inputs exist: no barrier between batches).

With `locator/follow=references` a file's Choice also offers the files its observations refer to
(FollowFile); one chosen at or above the action threshold joins the frontier with its own state and
budget from the next epoch (within the bounds; admitted in file order), and one chosen below it
ends the file, as a read below it does under the batch schedule."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from locator.base import LocatorContext
from locator.discovery import Candidate
from locator.reading.actions import STOP_FILE, WAIT, ReadRange
from locator.reading.budget import RoundBudget
from locator.reading.decision_form import DecisionForm, most_probable
from locator.reading.effects import Observe, read_and_observe
from locator.reading.epochs import EpochFlow, Resolution
from locator.languages.references import FileIndex
from locator.reading.follow import FollowFile, FollowFiles, FollowLedger
from locator.reading.reader import ReadsEvidence, report_reading
from locator.reading.schedule import Choice, Schedule
from locator.reading.sources import ActionSource
from locator.reading.state import FileState, Termination, merge_ranges
from locator.system_one.wire import ChoiceAnswer, Question
from locator.task import Task

CHOICE_INSTRUCTIONS = "Which unread range of this file should be read next to find the code the task is about?"
NOUL_INSTRUCTIONS = "Is this the right next step in this file to find the code the task is about?"
EPOCH_INSTRUCTIONS = "Which of these files should be read now to find the code the task is about?"


class Describe(StrEnum):
    STAT = "stat"  # seed 000: the action space from file stat alone (line counts, coverage)
    OUTLINE = "outline"  # loclab's earlier reader: each window lists the definitions it holds (outline lines are charged)


class ProgressiveReader(ReadsEvidence):
    """Seed 000's progressive reader (two_phase's Phase 2)."""

    schedule: Schedule
    sources: dict[str, ActionSource] = Field(description="action sources, asked in this order")
    budget: RoundBudget
    max_actions: int = Field(ge=1, description="options per Choice question (besides the control options)")
    action_threshold: float = Field(ge=0.0, le=1.0, description="choice probability a read needs to run")
    observation: Observe
    describe: Describe
    follow: FollowFiles | None = Field(description="FollowFile bounds (locator/follow=references); null: the file set is fixed")
    decision_form: DecisionForm = Field(description="a file's next step: one Choice over its options (seed), or a Noul each")

    def actions(self, state: FileState) -> list[ReadRange]:
        return [a for source in self.sources.values() for a in source.propose(state)][: self.max_actions]

    def described(self, ctx: LocatorContext, state: FileState) -> FileState:
        """The file's state as its actions are described: with `describe=outline`, its definitions (read)."""
        if self.describe is Describe.OUTLINE:
            state.signatures = ctx.outline(state.path).signatures
        return state

    def read(self, task: Task, ctx: LocatorContext, handed_off: list[Candidate]) -> list[FileState]:
        with ctx.stage("reading") as stage:
            states = [self.described(ctx, FileState(c, None)) for c in handed_off]
            ledger = None if self.follow is None else FollowLedger(
                self.follow, FileIndex(ctx.files()), {c.info.path for c in handed_off})
            steps = ReaderSteps(self, task, ctx, ledger, states)
            flow = EpochFlow(steps, self.schedule, ctx.concurrency, barrier=ledger is not None)
            flow.run(states)
            report_reading(stage, steps.states, epochs=flow.epochs_run, requests=flow.requests + steps.file_choices,
                           epoch_file_choices=steps.file_choices, all_waiting_epochs=steps.all_waiting_epochs,
                           max_rounds_of_a_file=max((s.rounds for s in steps.states), default=0),
                           ranges_read=sum(len(merge_ranges(s.read)) for s in steps.states))
            if ledger is not None:
                stage.count(**ledger.details(), follows_offered=steps.follows_offered)
            ctx.decide(stage="reading", termination={s.path: str(s.termination) for s in steps.states},
                       rounds={s.path: s.rounds for s in steps.states})
        return steps.states


class ReaderSteps:
    """The progressive reader's decisions for one task, as the epoch flow (locator/reading/epochs.py)
    asks for them."""

    def __init__(self, reader: ProgressiveReader, task: Task, ctx: LocatorContext, ledger: FollowLedger | None,
                 states: list[FileState]):
        self.reader, self.task, self.ctx, self.ledger = reader, task, ctx, ledger
        self.states = list(states)  # the handed-off files, then each admitted follow
        self.actions: dict[int, list[ReadRange]] = {}
        self.follows: dict[int, list[FollowFile]] = {}
        self.selected: dict[FileState, ReadRange] = {}
        self.file_choices = self.follows_offered = self.all_waiting_epochs = 0

    def enter(self, state: FileState) -> bool:
        actions = self.reader.actions(state)
        follows = self.ledger.propose(state, once=False) if self.ledger is not None else []
        if not actions and not follows:
            state.termination = Termination.ACTION_SPACE_EXHAUSTED
            return False
        self.actions[id(state)], self.follows[id(state)] = actions, follows
        self.follows_offered += len(follows)
        return True

    def choose(self, group: list[FileState]) -> list[Choice]:
        """One decision per file of the group over its options, in one request: a Choice question, or
        (decision_form=noul) a Noul question per option, the most probable taken."""
        items, options_of = [], {}
        for s in group:
            options = {STOP_FILE.key: STOP_FILE.description} | {a.key: a.description for a in self.actions[id(s)]} \
                | {f.key: f.description for f in self.follows[id(s)]}
            if self.reader.schedule.offers_wait:
                options[WAIT.key] = WAIT.description
            options_of[id(s)] = options
            header = f"file: {s.path} ({s.line_count} lines)"
            if self.reader.decision_form is DecisionForm.CHOICE:
                items.append(((s, None), Question(type="choice", instructions=CHOICE_INSTRUCTIONS, criteria=options,
                                                  content=header)))
            else:
                items += [((s, key), Question(type="noul", instructions=NOUL_INSTRUCTIONS, criteria=f"{header}\n{text}"))
                          for key, text in options.items()]
        decided: dict[int, tuple[FileState, str, dict[str, float]]] = {}  # the chosen option, each option's probability
        nouls: dict[int, dict[str, float]] = {}
        for (s, key), answer in self.ctx.ask_keyed([(self.request_state(group), items)], prefix="file", expect=None):
            if key is None:  # System One's choice (drawn, when sampling), not necessarily the most probable
                decided[id(s)] = (s, answer.choice, {k: answer.probabilities.get(k, 0.0) for k in options_of[id(s)]})
            else:
                nouls.setdefault(id(s), {})[key] = answer.noul
                if len(nouls[id(s)]) == len(options_of[id(s)]):
                    decided[id(s)] = (s, most_probable(nouls[id(s)])[0], nouls[id(s)])
        return [self._choice(s, key, probabilities) for s, key, probabilities in decided.values()]

    def _choice(self, s: FileState, key: str, probabilities: dict[str, float]) -> Choice:
        """The file's choice; a wait carries what the file would do instead: its most probable other
        option (the first listed on ties), at its probability given it does not wait (a Choice's
        distribution renormalized without the wait; a Noul is about its own option alone)."""
        instead = None
        if key == WAIT.key:
            others = {k: p for k, p in probabilities.items() if k != WAIT.key}
            rest = sum(others.values()) if self.reader.decision_form is DecisionForm.CHOICE else 1.0
            if others and rest > 0:
                other, p = most_probable(others)
                instead = self._choice(s, other, {other: p / rest})
        follow = {f.key: f for f in self.follows[id(s)]}.get(key)
        return Choice(s, {a.key: a for a in self.actions[id(s)]}.get(key), probabilities.get(key, 0.0),
                      stop=key == STOP_FILE.key, wait=key == WAIT.key, follow=follow, instead=instead)

    def resolve(self, choices: list[Choice]) -> Resolution:
        for c in choices:
            if c.stop:
                c.state.termination = Termination.MODEL_STOP
        admitted = self._admit([c for c in choices if c.follow is not None])
        self.states += admitted
        reads = [c for c in choices if c.action is not None]
        chosen = self.reader.schedule.select(reads, self.reader.action_threshold, self._ask_files)
        self.selected.update((c.state, c.action) for c in chosen)
        return Resolution(chosen, admitted)

    def _admit(self, chosen: list[Choice]) -> list[FileState]:
        """The files these follow choices bring in, in file order; a follow below the action threshold
        ends its file."""
        admitted = []
        for c in chosen:
            if c.probability < self.reader.action_threshold:
                c.state.termination = Termination.NO_ACTION_ABOVE_THRESHOLD
            elif (state := self.ledger.admit(c.follow, c.probability)) is not None:
                admitted.append(self.reader.described(self.ctx, state))
        return admitted

    def request_state(self, group: list[FileState]) -> dict[str, Any]:
        return {"task": self.task.text, "stage": "reading", "reader": {s.path: s.summary() for s in group}}

    def _ask_files(self, candidates: list[Choice]) -> tuple[dict[str, float], str]:
        """One Choice over files that each chose a read: which should be read now."""
        self.file_choices += 1
        options = {f"f{i}": f"file: {c.state.path} ({c.state.line_count} lines)\nnext read: {c.action.span.label()}"
                   for i, c in enumerate(candidates)}
        question = Question(type="choice", instructions=EPOCH_INSTRUCTIONS, criteria=options)
        state = self.request_state([c.state for c in candidates])
        [(_, answer)] = self.ctx.ask_keyed([(state, [(None, question)])], prefix="epoch", expect=ChoiceAnswer)
        shares = {c.state.path: answer.probabilities.get(f"f{i}", 0.0) for i, c in enumerate(candidates)}
        return shares, candidates[int(answer.choice[1:])].state.path

    def observe(self, group: list[FileState]) -> int:
        return read_and_observe(self.ctx, self.request_state, [group],
                                self.selected, self.reader.observation)

    def account(self, state: FileState) -> None:
        self.reader.budget.account(state, self.reader.evidence.is_evidence)

    def settle(self, undecided: list[Choice], moved: bool) -> Resolution:
        resolution, instead = Resolution([], []), []
        if not moved and (instead := self.reader.schedule.unblock([c for c in undecided if c.wait])):
            self.all_waiting_epochs += 1
            resolution = self.resolve(instead)
            moved = bool(resolution.selected or resolution.admitted)
        if not moved:  # no file read and none was admitted: nothing can change for the rest
            asked_instead = {id(c.state) for c in instead}
            for c in undecided:
                if c.state.termination is None:
                    c.state.termination = Termination.ALL_FILES_WAITING if c.wait and id(c.state) not in asked_instead \
                        else Termination.NO_ACTION_ABOVE_THRESHOLD
        return resolution
