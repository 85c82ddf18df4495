"""Schedules: how files are grouped into requests and which chosen reads run now. Each holds only
its own knobs, so a knob of one never enters the results' address of the other."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar, Protocol, runtime_checkable

from pydantic import Field

from locator.reading.actions import ReadRange
from locator.reading.follow import FollowFile
from locator.reading.state import FileState, Termination
from locator.settings import Settings


@dataclass(eq=False)
class Choice:
    """What System One chose for one file this epoch."""

    state: FileState
    action: ReadRange | None  # None: a control option (stop or wait) or a follow
    probability: float
    stop: bool
    wait: bool
    follow: FollowFile | None = None  # locator/follow: the file chose to follow a reference
    instead: "Choice | None" = None  # a waiting file: its most probable other option, at its probability given it does not wait


# Asks System One which of these files should be read now: (share of each file's path, the chosen path).
AskFiles = Callable[[list[Choice]], tuple[dict[str, float], str]]


@runtime_checkable
class Schedule(Protocol):
    """How the progressive reader groups files into requests and which chosen reads run now; any
    class with these, named by `_target_` under `locator.reader.schedule`."""

    offers_wait: ClassVar[bool]  # whether files may choose to wait for a later epoch

    def groups(self, states: list[FileState]) -> list[list[FileState]]: ...

    def full(self, group: list[FileState]) -> bool:
        """Whether `group` can take no further file: the reader sends a group as soon as it is full or no
        further file can join it, so a request never waits for files it will not hold."""
        ...

    def select(self, reads: list[Choice], action_threshold: float, ask_files: AskFiles) -> list[Choice]: ...

    def unblock(self, waiting: list[Choice]) -> list[Choice]:
        """An epoch in which no file read and none was admitted: what its waiting files choose instead
        (resolved like any choices), or nothing, and they end as all files waiting."""
        ...


class WhenAllWait(StrEnum):
    """What the global schedule does when every file that did not stop chose to wait, so nothing is read."""

    END = "end"  # they end (all_files_waiting): loclab's rule before next_best
    NEXT_BEST = "next_best"  # each takes its most probable other option (a read, a follow, stop) at its
    #                          probability given it does not wait: a wait defers to files that read, and none did


class BatchSchedule(Settings):
    """Files in batches of `batch_size`, a request per batch; every confident choice is read now and a
    file whose choice falls below the action threshold ends."""

    offers_wait: ClassVar[bool] = False
    batch_size: int = Field(ge=1)

    def groups(self, states: list[FileState]) -> list[list[FileState]]:
        return [states[i : i + self.batch_size] for i in range(0, len(states), self.batch_size)]

    def full(self, group: list[FileState]) -> bool:
        return len(group) >= self.batch_size

    def select(self, reads: list[Choice], action_threshold: float, ask_files: AskFiles) -> list[Choice]:
        selected = []
        for c in reads:
            if c.probability >= action_threshold:
                selected.append(c)
            else:
                c.state.termination = Termination.NO_ACTION_ABOVE_THRESHOLD
        return selected

    def unblock(self, waiting: list[Choice]) -> list[Choice]:
        return []  # no file is offered wait


class GlobalSchedule(Settings):
    """Every eligible file in one request per epoch, each choosing its next read (or wait, or stop);
    then one Choice over the files whose read cleared the action threshold lets System One decide
    which are read now: its choice first, then the others by probability, until their probability
    mass reaches `epoch_mass`, at most `epoch_width` files. The rest stay eligible. An epoch in which
    every file waited is resolved as `when_all_wait` says."""

    offers_wait: ClassVar[bool] = True
    epoch_width: int = Field(ge=1)
    epoch_mass: float = Field(gt=0.0, le=1.0)
    when_all_wait: WhenAllWait

    def groups(self, states: list[FileState]) -> list[list[FileState]]:
        return [states]

    def full(self, group: list[FileState]) -> bool:
        return False  # every eligible file is in the epoch's one request: it waits for all of them

    def select(self, reads: list[Choice], action_threshold: float, ask_files: AskFiles) -> list[Choice]:
        confident = [c for c in reads if c.probability >= action_threshold]
        if len(confident) <= 1:
            return confident
        shares, chosen = ask_files(confident)
        ranked = sorted(confident, key=lambda c: (c.state.path != chosen, -shares[c.state.path], c.state.path))
        selected, mass = [], 0.0
        for c in ranked[: self.epoch_width]:
            selected.append(c)
            mass += shares[c.state.path]
            if mass >= self.epoch_mass:
                break
        return selected

    def unblock(self, waiting: list[Choice]) -> list[Choice]:
        if self.when_all_wait is WhenAllWait.END:
            return []
        return [c.instead for c in waiting if c.instead is not None]
