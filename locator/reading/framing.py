"""How a per-file runtime words its questions. The mechanics are the same under every framing; what
System One is asked to judge differs (seed 000's Algorithm A changed only this and the evidence filter)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from locator.reading.actions import CONTINUE_FILE, STOP_FILE_SUFFICIENT, Control


class Framing(StrEnum):
    RELEVANCE = "relevance"  # the seed's file runtime: is this range useful, is the file sufficiently read
    NEW_EVIDENCE = "new_evidence"  # Algorithm A: does this range add material evidence not yet read


@dataclass(frozen=True)
class Wording:
    read: str  # the Noul question of every ReadRange
    control: str  # the Choice between stop and continue
    stop: Control
    proceed: Control
    shows_covered: bool  # the request state carries what was read as `covered`, so "new" can be judged


WORDINGS = {
    Framing.RELEVANCE: Wording(
        read="Would reading this range of the file add evidence about the code the task is about?",
        control="Is what was read of this file a representative, sufficient result for the task "
                "(enough to characterize the file's relevant code, not full coverage)?",
        stop=STOP_FILE_SUFFICIENT, proceed=CONTINUE_FILE, shows_covered=False),
    Framing.NEW_EVIDENCE: Wording(
        read="Would reading this range add NEW MATERIAL EVIDENCE for the task: facts not already in the "
             "observations read so far (`covered`)? Redundant material, thin wrappers, logging or debug "
             "plumbing and facts already read do not count.",
        control="Are the concrete evidence gaps this file can close for the task closed by what was read?",
        stop=Control(STOP_FILE_SUFFICIENT.key, "stop_file: the concrete evidence gaps this file can close are "
                     "closed by what was read; read so far:"),
        proceed=Control(CONTINUE_FILE.key, "continue_file: a concrete evidence gap remains that reading more "
                        "of this file can close:"),
        shows_covered=True),
}
