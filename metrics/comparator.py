"""Canonical comparator: two localization results side by side, neither taken as ground truth.

Symmetric by construction: compare(a, b) is compare(b, a) with left and right swapped. Fails
closed when a subject identity is missing or the two results are about different code.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from locator.result import LocalizationResult
from locator.task import Record


class ComparatorError(ValueError):
    pass


CLOCK_FIELDS = frozenset({"elapsed_ms", "model_wall_time_ms", "model_critical_path_ms"})


def what_was_found(doc: Any, keep_code: bool = True, keep_address: bool = True) -> Any:
    """A saved result (as JSON) without what says when and where it ran rather than what it found:
    wall-clock fields at any depth, the physical cost (it depends on how warm the decision cache
    was), and the git revision and dirtiness the code was checked out at (the code itself is its
    source hash). `keep_code=False` also drops that hash, `keep_address=False` the results address
    derived from code and config: two builds or two configs are then compared on their output."""
    dropped = {("cost", "physical"), ("provenance", "code", "git_revision"), ("provenance", "code", "dirty")}
    if not keep_code:
        dropped.add(("provenance", "code"))
    if not keep_address:
        dropped.add(("provenance", "run_key"))

    def walk(value: Any, path: tuple[str, ...]) -> Any:
        if isinstance(value, dict):
            return {k: walk(v, (*path, k)) for k, v in value.items()
                    if k not in CLOCK_FIELDS and (*path, k) not in dropped}
        if isinstance(value, list):
            return [walk(v, path) for v in value]
        return value

    return walk(doc, ())


class SideCost(Record):
    model_calls: int | None
    input_tokens: int | None
    output_tokens: int | None
    source_lines_read: int | None
    elapsed_ms: float | None


class FileDifference(Record):
    path: str
    left_role: str | None
    right_role: str | None
    left_confidence: float | None
    right_confidence: float | None
    left_lines: int
    right_lines: int
    shared_lines: int


class Comparison(Record):
    schema_version: int = 1
    task: str
    repository: str
    revision: str
    left_producer: str
    right_producer: str
    left_cost: SideCost
    right_cost: SideCost
    shared_files: list[str]
    left_only_files: list[str]
    right_only_files: list[str]
    file_jaccard: float
    role_differences: list[FileDifference] = Field(default_factory=list)
    files: list[FileDifference]
    left_lines_covered_by_right: float | None
    right_lines_covered_by_left: float | None
    evidence_line_jaccard: float | None
    left_regions_missed_by_right: list[str]
    right_regions_missed_by_left: list[str]


def _cost(result: LocalizationResult) -> SideCost:
    c = result.cost
    return SideCost(model_calls=c.model_calls, input_tokens=c.tokens.input, output_tokens=c.tokens.output,
                    source_lines_read=c.source_lines_read, elapsed_ms=c.elapsed_ms)


def _lines(result: LocalizationResult) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for f in result.files:
        for e in f.evidence:
            out.setdefault(f.path, set()).update(range(e.start_line, e.end_line + 1))
    return out


def _missed(result: LocalizationResult, other_lines: dict[str, set[int]]) -> list[str]:
    return [f"{f.path}:{e.start_line}-{e.end_line}" for f in result.files for e in f.evidence
            if not other_lines.get(f.path, set()) & set(range(e.start_line, e.end_line + 1))]


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def compare_results(left: LocalizationResult, right: LocalizationResult) -> Comparison:
    for side, result in (("left", left), ("right", right)):
        if result.subject is None:
            raise ComparatorError(f"{side} result for {result.task} has no subject identity; refusing to compare")
    if left.subject != right.subject:
        raise ComparatorError(
            f"results are about different code: {left.subject.repository}@{left.subject.revision} vs "
            f"{right.subject.repository}@{right.subject.revision}"
        )
    if left.task != right.task:
        raise ComparatorError(f"results are for different tasks: {left.task} vs {right.task}")
    lf = {f.path: f for f in left.files}
    rf = {f.path: f for f in right.files}
    ll, rl = _lines(left), _lines(right)
    files = []
    for path in sorted(set(lf) | set(rf)):
        a, b = lf.get(path), rf.get(path)
        files.append(FileDifference(
            path=path, left_role=a.role.value if a else None, right_role=b.role.value if b else None,
            left_confidence=a.confidence.score if a and a.confidence else None,
            right_confidence=b.confidence.score if b and b.confidence else None,
            left_lines=len(ll.get(path, ())), right_lines=len(rl.get(path, ())),
            shared_lines=len(ll.get(path, set()) & rl.get(path, set())),
        ))
    shared = sorted(set(lf) & set(rf))
    union = set(lf) | set(rf)
    total_left, total_right = sum(map(len, ll.values())), sum(map(len, rl.values()))
    shared_lines = sum(f.shared_lines for f in files)
    return Comparison(
        task=left.task, repository=left.subject.repository, revision=left.subject.revision,
        left_producer=left.producer.system, right_producer=right.producer.system,
        left_cost=_cost(left), right_cost=_cost(right),
        shared_files=shared, left_only_files=sorted(set(lf) - set(rf)), right_only_files=sorted(set(rf) - set(lf)),
        file_jaccard=len(shared) / len(union) if union else 1.0,
        role_differences=[f for f in files if f.left_role and f.right_role and f.left_role != f.right_role],
        files=files,
        left_lines_covered_by_right=_ratio(shared_lines, total_left),
        right_lines_covered_by_left=_ratio(shared_lines, total_right),
        evidence_line_jaccard=_ratio(shared_lines, total_left + total_right - shared_lines),
        left_regions_missed_by_right=_missed(left, rl), right_regions_missed_by_left=_missed(right, ll),
    )


def mirrored(comparison: Comparison) -> Comparison:
    """The same comparison seen from the other side."""
    data = comparison.model_dump()
    swap = {"left_producer": "right_producer", "left_cost": "right_cost", "left_only_files": "right_only_files",
            "left_lines_covered_by_right": "right_lines_covered_by_left",
            "left_regions_missed_by_right": "right_regions_missed_by_left"}
    for a, b in swap.items():
        data[a], data[b] = data[b], data[a]
    for key in ("files", "role_differences"):
        data[key] = [f | {"left_role": f["right_role"], "right_role": f["left_role"],
                          "left_confidence": f["right_confidence"], "right_confidence": f["left_confidence"],
                          "left_lines": f["right_lines"], "right_lines": f["left_lines"]} for f in data[key]]
    return Comparison.model_validate(data)
