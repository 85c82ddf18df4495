"""Schedules: how files are grouped into requests and which chosen reads run now. Each holds only
its own knobs, so a knob of one never enters the results' address of the other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pydantic import Field

from locator.reading.actions import ReadRange
from locator.reading.state import FileState, Termination
from locator.settings import Settings


@dataclass(eq=False)
class Choice:
    """What System One chose for one file this epoch."""

    state: FileState
    action: ReadRange | None  # None: a control option (stop or wait)
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

    def select(self, reads: list[Choice], action_threshold: float) -> list[Choice]:
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

    def select(self, reads: list[Choice], action_threshold: float) -> list[Choice]:
        confident = [c for c in reads if c.probability >= action_threshold]
        return sorted(confident, key=lambda c: (-c.probability, c.state.path))[: self.epoch_width]
