"""Actions as data. A read is a `ReadRange` with its provenance (which source proposed it and
why); control actions steer the loop. Each becomes one option or one question of a request."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from locator.windows import LineRange


class Provenance(StrEnum):
    WINDOW = "window"  # a fixed window of the file (two_phase)
    BEFORE = "before"  # the lines before a hotspot (two_phase)
    AFTER = "after"  # the lines after a hotspot (two_phase)
    # Geometry-only labels of the seed's runtimes: line counts and coverage, nothing else.
    SEED_HEAD = "seed_head"
    SEED_MIDDLE = "seed_middle"
    SEED_TAIL = "seed_tail"
    EXPAND_BEFORE = "expand_before"
    EXPAND_AFTER = "expand_after"
    JUMP = "jump"  # into an unread region no expansion reaches


@dataclass(frozen=True)
class ReadRange:
    key: str
    span: LineRange
    provenance: Provenance
    description: str


@dataclass(frozen=True)
class Control:
    """A control option: its key on the wire and the statement System One judges."""

    key: str
    description: str


STOP_FILE = Control("stop", "stop: nothing more in this file is needed")
WAIT = Control("wait", "wait: read other files first")
# The seed's file runtime: sufficiency of a representative result, not coverage.
STOP_FILE_SUFFICIENT = Control(
    "stop_file", "stop_file: what was read of this file is a representative, sufficient result for the task "
    "(not full coverage); read so far:")
CONTINUE_FILE = Control("continue_file", "continue_file: reading more of this file would add material evidence:")
# Reconciliation of a control choice that contradicts the read utilities.
FINALIZE_FILE = Control("finalize_file", "finalize_file: finish this file with what was read:")
READ_BEST = Control("read_best", "read_best: execute this read first:")
# The range runtime's task-level stop, scored with Noul like every read.
STOP_TASK = Control("stop_task", "The observations read so far already contain the code the task is about; "
                    "reading can stop.")
