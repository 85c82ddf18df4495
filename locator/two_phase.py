"""The two-phase System One locator family.

Phase 1 (`discovery`: flat or pruned, `locator/discovery.py`) picks files from metadata alone;
Phase 2 (`reader`, the reading engine in `locator/reading/`) reads them progressively, System One choosing where, and
keeps the observations it rates above the observation threshold as evidence. Variants are
configuration: `locator/discovery=pruned`, `locator/schedule=global`, sources, thresholds, budgets.
"""

from __future__ import annotations

from typing import ClassVar

from locator.base import LocatorContext, LocatorOutput
from locator.discovery import Discovery
from locator.reading.engine import ProgressiveReader
from locator.settings import Settings
from locator.task import Task

_NOUL = "noul: probability that the statement is true"


class TwoPhaseLocator(Settings):
    name: ClassVar[str] = "two_phase"
    discovery: Discovery
    reader: ProgressiveReader
    file_suffixes: list[str]
    keep_unconfirmed_files: bool

    def localize(self, task: Task, ctx: LocatorContext) -> LocatorOutput:
        handed_off = self.discovery.discover(task, ctx, ctx.candidate_files(self.file_suffixes))
        states = self.reader.read(task, ctx, handed_off)
        return LocatorOutput(files=self.reader.result_files(states, self.keep_unconfirmed_files), confidence_semantics=_NOUL)
