"""Seed 000's "Range-only System One Runtime v0": one shared state over the handed-off files.

    state -> geometry-only actions (`geometry`) -> one request: a Noul per read and one for
    StopTask -> policy -> ReadRange effects -> raw observations -> new state

Policy: stop only when StopTask reaches `parallel_threshold` AND scores above every read;
otherwise run every read at or above it (deconflicted), or the best read when none does.
System One sees the raw observations through a bounded DecisionView; evidence is scored after
navigation ends, so it cannot steer it.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from locator.base import LocatorContext
from locator.discovery import Candidate
from locator.reading.actions import STOP_TASK
from locator.reading.effects import read_unread, score_reads
from locator.reading.geometry import GeometryActions
from locator.reading.reader import ReadsEvidence, report_reading
from locator.reading.selection import ScoredRead, best, deconflict
from locator.reading.state import FileState, Termination
from locator.reading.view import DecisionView, Seen
from locator.system_one.wire import NoulAnswer, Question
from locator.task import Task

READ_INSTRUCTIONS = "Would reading this range of the file add evidence about the code the task is about?"


class RangeRuntime(ReadsEvidence):
    actions: GeometryActions
    view: DecisionView
    parallel_threshold: float = Field(ge=0.0, le=1.0, description="Noul a read needs to run in parallel; also StopTask's bar")
    safety_epochs: int = Field(ge=1, description="epochs before the run ends as safety_budget")

    def read(self, task: Task, ctx: LocatorContext, handed_off: list[Candidate]) -> list[FileState]:
        with ctx.stage("reading") as stage:
            states = [FileState(c, None) for c in handed_off]
            seen: list[Seen] = []
            epochs = reads_run = 0
            best_stop = 0.0
            while True:
                offered = [(s, a) for s in states for a in self.actions.propose(s)]
                if not offered:
                    termination = Termination.ACTION_SPACE_EXHAUSTED
                    break
                if epochs == self.safety_epochs:
                    termination = Termination.SAFETY_BUDGET
                    break
                epochs += 1
                stop, reads = self._ask(task, ctx, states, seen, offered, epochs)
                best_stop = max(best_stop, stop)
                if stop >= self.parallel_threshold and all(stop > r.score for r in reads):
                    termination = Termination.MODEL_STOP
                    break
                above = [r for r in reads if r.score >= self.parallel_threshold]
                selected = deconflict(above) if above else [best(reads)]
                for file_read in {id(r.state): r.state for r in selected}.values():
                    file_read.rounds += 1  # epochs in which the file was read
                for r in selected:
                    seen.extend(Seen(r.state.path, raw) for raw in read_unread(ctx, r.state, r.action.span, epochs))
                    reads_run += 1
            for s in states:
                s.termination = Termination.ACTION_SPACE_EXHAUSTED if not self.actions.propose(s) else termination
            requests = epochs + score_reads(ctx, task, states)
            report_reading(stage, states, termination=termination.value, epochs=epochs, requests=requests,
                           reads=reads_run, max_stop_task_noul=round(best_stop, 6))
            ctx.decide(stage="reading", termination=termination.value, epochs=epochs)
        return states

    def _ask(self, task: Task, ctx: LocatorContext, states: list[FileState], seen: list[Seen],
             offered: list, epoch: int) -> tuple[float, list[ScoredRead]]:
        """One request per epoch: a Noul per offered read, one for StopTask (judged on the view)."""
        state: dict[str, Any] = {
            "task": task.text, "stage": "range_runtime", "epoch": epoch,
            "files": {s.path: {"lines": s.line_count, "coverage_pct": round(s.coverage_pct(), 1)} for s in states},
        }
        items: list[tuple[Any, Question]] = [
            ((s, a), Question(type="noul", instructions=READ_INSTRUCTIONS, criteria=a.description)) for s, a in offered]
        items.append((STOP_TASK, Question(type="noul", instructions=STOP_TASK.description, criteria=STOP_TASK.key,
                                          content=self.view.render(seen))))
        answered = ctx.ask_keyed([(state, items)], prefix="a", expect=NoulAnswer)
        stop = next(a.noul for item, a in answered if item is STOP_TASK)
        return stop, [ScoredRead(*item, answer.noul) for item, answer in answered if item is not STOP_TASK]
