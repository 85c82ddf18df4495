"""What a reader is (Phase 2 of a two-phase locator), and what every reader shares, built once.

A reader is any class with `read` and `result_files`, named by `_target_` in its YAML; the locator
that hosts it (`locator.two_phase.TwoPhaseLocator`) knows the Protocol, not the readers. A new reader
is its module plus `conf/locator/NAME.yaml`, composed from the shared groups (`frame`, `evidence`,
`actions`, `view`, `discovery`)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from locator.base import LocatorContext, StageDetails
from locator.discovery import Candidate
from locator.reading.evidence import ThresholdEvidence
from locator.reading.state import Entry, FileState, Termination
from locator.result import FileCost, ResultFile
from locator.settings import Settings
from locator.task import Task


@runtime_checkable
class Reader(Protocol):
    def read(self, task: Task, ctx: LocatorContext, handed_off: list[Candidate]) -> list[FileState]:
        """Reads the handed-off files through the context; one `FileState` per file, each with its termination."""
        ...

    def result_files(self, task: Task, ctx: LocatorContext, states: list[FileState],
                     keep_unconfirmed: bool) -> list[ResultFile]:
        """The files with their evidence, best first (any work on the evidence itself through `ctx`)."""
        ...


class ReadsEvidence(Settings):
    """A reader whose evidence is the threshold rule over its observations (`conf/locator/evidence/`)."""

    evidence: ThresholdEvidence

    def result_files(self, task: Task, ctx: LocatorContext, states: list[FileState],
                     keep_unconfirmed: bool) -> list[ResultFile]:
        return self.evidence.result_files(task, ctx, states, keep_unconfirmed)


def report_reading(stage: StageDetails, states: list[FileState], costs: list[FileCost] | None = None,
                   **details: int | float | str | None) -> None:
    """What every reader reports when its reading ends: its own `details`, then each file's cost (`costs`
    when the reader adds to them), the files handed off (a followed file is not one) and read, their mean coverage, and how many
    files ended for each reason (counts)."""
    costs = [s.cost() for s in states] if costs is None else costs
    stage.files.extend(costs)
    stage.set(**details, files_handed_off=sum(s.entry is Entry.HANDOFF for s in states),
              files_read=sum(1 for s in states if s.read),
              coverage_pct_mean=round(sum(c.coverage_pct for c in costs) / len(costs), 3) if costs else None)
    stage.count(**{f"terminated_{t.value}": sum(s.termination == t for s in states) for t in Termination})
