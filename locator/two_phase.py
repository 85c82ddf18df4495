"""The two-phase System One locator family.

Phase 1 (`discovery`: flat or pruned, `locator/discovery.py`) picks files from metadata alone;
Phase 2 (`reader`, built on the reading engine in `locator/reading/`) reads them, System One
choosing where, and keeps the reads it rates at or above the observation threshold as evidence.
Phase 2 is seed 000's progressive reader (`locator=two_phase`), its range-only runtime
(`locator=range_runtime`) or its per-file runtimes (`locator=file_runtime`); the rest is
configuration: `locator/discovery=pruned`, `locator/schedule=global`, sources, thresholds, budgets.
"""

from __future__ import annotations

from locator.base import LocatorContext, LocatorOutput
from locator.discovery import Discovery
from locator.reading.engine import ProgressiveReader
from locator.reading.file_runtime import FileRuntimes
from locator.reading.range_runtime import RangeRuntime
from locator.reading.zoom import SemanticZoom
from locator.settings import Settings
from locator.task import Task

_NOUL = "noul: probability that the statement is true"


class TwoPhaseLocator(Settings):
    """Phase 1 then Phase 2 (`reader`); `name` (from its YAML) says which composition it is."""

    name: str
    discovery: Discovery
    reader: ProgressiveReader | RangeRuntime | FileRuntimes | SemanticZoom
    file_suffixes: list[str]
    keep_unconfirmed_files: bool

    def localize(self, task: Task, ctx: LocatorContext) -> LocatorOutput:
        handed_off = self.discovery.discover(task, ctx, ctx.candidate_files(self.file_suffixes))
        states = self.reader.read(task, ctx, handed_off)
        return LocatorOutput(files=self.reader.result_files(states, self.keep_unconfirmed_files), confidence_semantics=_NOUL)
