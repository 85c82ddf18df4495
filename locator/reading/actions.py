"""Actions as data. A read is a `ReadRange` with its provenance (which source proposed it and
why); control actions steer the loop. Each becomes one option of a Choice question."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from locator.windows import LineRange


class Provenance(StrEnum):
    WINDOW = "window"  # a fixed window of the file
    BEFORE = "before"  # the lines before a hotspot
    AFTER = "after"  # the lines after a hotspot


@dataclass(frozen=True)
class ReadRange:
    key: str
    span: LineRange
    provenance: Provenance
    description: str


@dataclass(frozen=True)
class StopFile:
    key: str = "stop"
    description: str = "stop: nothing more in this file is needed"


@dataclass(frozen=True)
class Wait:
    key: str = "wait"
    description: str = "wait: read other files first"


STOP_FILE, WAIT = StopFile(), Wait()
