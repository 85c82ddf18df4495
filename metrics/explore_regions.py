"""A loclab result and gold as SWE-Explore's objects, so every job is scored by its metric family.

- Predicted regions: the result's ranked evidence as a region list. Files in the result's rank order;
  within a file its evidence spans in the order the locator gave them; a ranked file with no evidence
  is one whole-file region (1, -1), as SWE-Explore's CoSIL parser falls back to; then the first `k`
  regions (`scoring.swe_explore_k`; 5 is SWE-Explore's setting for CoSIL's top 5).
- Ground truth: loclab's gold spans are the core regions, its gold files the core files and the main
  files (the files the fix modifies, which are read and modified); a gold with no optional tier has
  none, so optional coverage is absent. A gold with tiers (SWE-Explore's own rows, a reference
  result) brings its optional regions.
- Line counts: of the ground truth's paths only, as the evaluator counts them (`str.splitlines()` of
  the file at the task's revision); a whole-file prediction of any other file resolves to nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from dataset.manifest import Gold
from locator.result import LocalizationResult
from metrics.swe_explore import ExploreTruth, Region, explore_metrics

SourceOf = Callable[[str], str | None]
WHOLE_FILE = (1, -1)


def predicted_regions(result: LocalizationResult, k: int) -> list[Region]:
    regions: list[Region] = []
    for file in result.files:
        spans = [(e.start_line, e.end_line) for e in file.evidence] or [WHOLE_FILE]
        regions += [Region(file.path, start, end) for start, end in spans]
    return regions[:k]


def gold_truth(gold: Gold) -> ExploreTruth:
    return ExploreTruth(
        core_regions=tuple(Region(s.path, s.start_line, s.end_line) for s in gold.spans),
        core_files=frozenset(gold.files),
        optional_regions=tuple(Region(r.path, r.start, r.end) for r in gold.optional_regions or ()),
        optional_files=frozenset(gold.optional_files or ()),
        main_files=frozenset(gold.main_files if gold.main_files is not None else gold.files),
        has_optional=gold.optional_regions is not None,
    )


def line_counts(truth: ExploreTruth, source_of: SourceOf) -> dict[str, int]:
    counts = {}
    for path in sorted(truth.paths()):
        text = source_of(path)
        if text is not None:
            counts[path] = len(text.splitlines())
    return counts


def explore_scores(result: LocalizationResult, gold: Gold, source_of: SourceOf, k: int) -> dict[str, float]:
    """SWE-Explore's metrics of one task, named as SWE-Explore names them."""
    truth = gold_truth(gold)
    return explore_metrics(predicted_regions(result, k), truth, line_counts(truth, source_of))
