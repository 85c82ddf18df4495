"""SWE-Explore's metric family, as its evaluator computes it (`eval.py::ExploreEvaluator`, not its README).

Written from `../shared/design/swe-explore-metrics.md`, the specification taken from the evaluator's
source; every rule below is the evaluator's, trap included:
- a region is `(path, start, end)`, 1-based, inclusive; `end == -1` is the file's end and a negative
  start an offset from it, both resolved with the file's line count (`str.splitlines()` of the file at
  the task's base commit), clamped to [1, L]; without a count such a region resolves to nothing and is
  ignored by every line metric. Otherwise the start is raised to 1 and the end is NOT clamped to the
  file (lines past the end count), an end below 1 resolves to nothing, and an inverted region is an
  empty line set that still overlaps by interval;
- line counts are known only for ground-truth paths (a whole-file prediction elsewhere adds no line);
- line sets are de-duplicated, but the line budgets of recall@K and nDCG@K, nDCG's gains and the noise
  region rate count a repeated region again;
- nDCG's ideal order re-sorts the predicted regions themselves by gain per line, and is clamped at 1;
- every per-instance empty case is 0 (the table in the specification, §2);
- the mean over instances is macro; an instance whose prediction failed is skipped, not 0 (loclab
  reports how many beside the mean), an empty prediction is scored and counted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

LINE_BUDGETS = (100, 300, 500)  # SWE-Explore's K for recall@K and nDCG@K, in lines
MAIN_FILE_LINE_WEIGHT, CORE_LINE_WEIGHT = 1.5, 1.0  # nDCG's gain per core line
MAIN_REGION_WEIGHT, CORE_REGION_WEIGHT = 3.0, 2.0  # weighted core coverage's weight per core region

Line = tuple[str, int]
EXPLORE_OPTIONAL = ("optional_coverage",)  # computed only where the gold has an optional tier


@dataclass(frozen=True)
class Region:
    """A line range of one file: 1-based, inclusive; `end == -1` the file's end, `start < 0` from the end."""

    path: str
    start: int
    end: int


@dataclass(frozen=True)
class ExploreTruth:
    """One instance's ground truth in SWE-Explore's tiers: core regions and files (what the agents that
    solved it read), optional regions (concatenated over the agents, repeats kept) and files, and the
    main files (read and modified). `has_optional`: the gold has an optional tier at all; without one,
    optional coverage is absent rather than 0."""

    core_regions: tuple[Region, ...]
    core_files: frozenset[str]
    optional_regions: tuple[Region, ...] = ()
    optional_files: frozenset[str] = frozenset()
    main_files: frozenset[str] = frozenset()
    has_optional: bool = True

    def paths(self) -> set[str]:
        """The paths the evaluator counts lines of: the ground truth's (`eval_runner::_iter_gt_paths`)."""
        return ({r.path for r in self.core_regions} | set(self.core_files) | {r.path for r in self.optional_regions}
                | set(self.optional_files))


def resolve(region: Region, line_counts: Mapping[str, int]) -> tuple[int, int] | None:
    """The region's first and last line, or None when it cannot be resolved (`_resolve_interval`)."""
    length = line_counts.get(region.path)
    if region.end == -1 or region.start < 0:
        if length is None or length < 1:
            return None
        start = length + region.start + 1 if region.start < 0 else region.start
        end = length if region.end == -1 else region.end
        return max(1, min(start, length)), max(1, min(end, length))
    if region.end < 1:
        return None
    return max(1, region.start), region.end  # the end is not clamped to the file


def region_lines(region: Region, line_counts: Mapping[str, int]) -> range:
    bounds = resolve(region, line_counts)
    return range(bounds[0], bounds[1] + 1) if bounds else range(0)


def line_set(regions: Iterable[Region], line_counts: Mapping[str, int]) -> set[Line]:
    return {(r.path, n) for r in regions for n in region_lines(r, line_counts)}


def overlap(a: Region, b: Region, line_counts: Mapping[str, int]) -> bool:
    """Same path and intersecting intervals (an inverted, empty region still overlaps by interval)."""
    if a.path != b.path:
        return False
    ra, rb = resolve(a, line_counts), resolve(b, line_counts)
    return ra is not None and rb is not None and ra[0] <= rb[1] and rb[0] <= ra[1]


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


def _recall_at_budget(preds: Sequence[Region], core: set[Line], line_counts: Mapping[str, int], budget: int) -> float:
    """Core lines seen walking the predictions in order, every line counted (repeats too) up to the
    budget's line, over all core lines."""
    seen: set[Line] = set()
    spent = 0
    for region in preds:
        for n in region_lines(region, line_counts):
            spent += 1
            if (region.path, n) in core:
                seen.add((region.path, n))
            if spent >= budget:
                return _ratio(len(seen), len(core))
    return _ratio(len(seen), len(core))


def _dcg(gains: Sequence[float], sizes: Sequence[int], budget: int) -> float:
    total, spent = 0.0, 0
    for i, (gain, size) in enumerate(zip(gains, sizes)):
        spent += size
        if spent > budget and i > 0:  # the first region always counts
            break
        total += gain / math.log2(i + 2)
    return total


def _size(region: Region, line_counts: Mapping[str, int]) -> int:
    """A region's lines in nDCG's budget: end - start + 1 as resolved (negative for an inverted region,
    as the evaluator computes it), 0 when unresolvable."""
    bounds = resolve(region, line_counts)
    return bounds[1] - bounds[0] + 1 if bounds else 0


def _ndcg_at_budget(preds: Sequence[Region], truth: ExploreTruth, core: set[Line], line_counts: Mapping[str, int],
                    budget: int) -> float:
    if not truth.core_regions or not preds:
        return 0.0
    weight = {line: MAIN_FILE_LINE_WEIGHT if line[0] in truth.main_files else CORE_LINE_WEIGHT for line in core}
    gains = [sum(weight.get((r.path, n), 0.0) for n in region_lines(r, line_counts)) for r in preds]
    sizes = [_size(r, line_counts) for r in preds]
    ideal = sorted(zip(gains, sizes), key=lambda gs: gs[0] / max(gs[1], 1), reverse=True)  # the predicted set, re-sorted
    best = _dcg([g for g, _ in ideal], [s for _, s in ideal], budget)
    return min(_dcg(gains, sizes, budget) / best, 1.0) if best > 0 else 0.0


def _weighted_core_coverage(predicted: set[Line], truth: ExploreTruth, line_counts: Mapping[str, int]) -> float:
    weighted = total = 0.0
    for region in truth.core_regions:
        lines = {(region.path, n) for n in region_lines(region, line_counts)}
        if not lines:  # unresolvable or inverted: no weight
            continue
        weight = MAIN_REGION_WEIGHT if region.path in truth.main_files else CORE_REGION_WEIGHT
        weighted += weight * len(predicted & lines) / len(lines)
        total += weight
    return _ratio(weighted, total)


def _first_useful_hit(preds: Sequence[Region], core: set[Line], line_counts: Mapping[str, int]) -> float:
    if not preds or not core:
        return 0.0
    for i, region in enumerate(preds):  # an unresolvable region keeps its place
        if any((region.path, n) in core for n in region_lines(region, line_counts)):
            return 1.0 - i / len(preds)
    return 0.0


def explore_metrics(preds: Sequence[Region], truth: ExploreTruth, line_counts: Mapping[str, int],
                    budgets: Sequence[int] = LINE_BUDGETS) -> dict[str, float]:
    """Every SWE-Explore metric of one instance, named as SWE-Explore names them. `preds`: the ranked
    regions after the top-k cut; `line_counts`: lines of the ground truth's files at the base commit."""
    predicted = line_set(preds, line_counts)
    core = line_set(truth.core_regions, line_counts)
    optional = line_set(truth.optional_regions, line_counts)
    visited = {r.path for r in preds}
    precision = _ratio(len(predicted & core), len(predicted))
    recall = _ratio(len(predicted & core), len(core))
    out = {
        "precision": precision,
        "recall": recall,
        "f1_score": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "hit_file_rate": _ratio(len(visited & truth.core_files), len(truth.core_files)),
        "noise_file_rate": _ratio(len(visited - truth.core_files - truth.optional_files), len(visited)),
        "hit_region_rate": _ratio(sum(any(overlap(c, p, line_counts) for p in preds) for c in truth.core_regions),
                                  len(truth.core_regions)),
        "noise_region_rate": _ratio(sum(not any(overlap(p, g, line_counts) for g in (*truth.core_regions, *truth.optional_regions))
                                        for p in preds), len(preds)),
        "weighted_core_coverage": _weighted_core_coverage(predicted, truth, line_counts),
        "context_efficiency": _ratio(len(predicted & (core | optional)), len(predicted)),
    }
    if truth.has_optional:
        out["optional_coverage"] = _ratio(len(predicted & optional), len(optional))
    for budget in budgets:
        out[f"ndcg_at_{budget}"] = _ndcg_at_budget(preds, truth, core, line_counts, budget)
    for budget in budgets:
        out[f"recall_at_{budget}"] = _recall_at_budget(preds, core, line_counts, budget)
    out["first_useful_hit"] = _first_useful_hit(preds, core, line_counts)
    return out


@dataclass
class ExploreMean:
    """The macro mean over the instances scored, with how many were scored and skipped (a failed
    prediction is skipped, as the evaluator does, and counted here apart)."""

    means: dict[str, float] = field(default_factory=dict)
    scored: int = 0
    skipped: int = 0


def macro_mean(per_instance: Sequence[dict[str, float] | None]) -> ExploreMean:
    """Arithmetic mean of each metric over the instances that have it; None is a skipped instance."""
    scored = [m for m in per_instance if m is not None]
    names = dict.fromkeys(name for m in scored for name in m)
    means = {name: sum(m[name] for m in scored if name in m) / sum(name in m for m in scored) for name in names}
    return ExploreMean(means, len(scored), len(per_instance) - len(scored))
