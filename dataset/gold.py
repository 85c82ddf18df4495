"""Gold from a unified diff, and gold entities from the old-side source.

Rule (GOLD_RULE): old-side line numbers of the gold patch; every removed or modified line is gold;
a pure insertion is anchored at the old-side line before it (line 1 at the top of a file);
test files are excluded; files the patch creates have no old side and are not gold. Each hunk
is one gold region. Entities: the innermost function / method / class enclosing a gold line.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from dataset.manifest import Gold, GoldSpan
from locator.outline import definitions, innermost

GOLD_RULE = (
    "unidiff-old-side-v1: removed/modified old-side lines are gold; a pure insertion is anchored at "
    "the old-side line before it; test files excluded; created files excluded; one region per hunk; "
    "entities = innermost enclosing function/method/class (Python ast)"
)

_TEST_DIRS = {"tests", "test"}


class GoldPatchError(ValueError):
    pass


def is_test_path(path: str) -> bool:
    pure = PurePosixPath(path)
    name = pure.name
    return (
        any(part in _TEST_DIRS for part in pure.parts[:-1])
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
    )


def _strip_prefix(path: str) -> str:
    return path[2:] if path.startswith(("a/", "b/")) else path


def _contiguous(lines: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for n in sorted(set(lines)):
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


def gold_from_patch(patch: str) -> tuple[list[str], list[GoldSpan]]:
    """Gold files (patch order) and old-side gold spans."""
    try:
        patch_set = PatchSet(patch)
    except UnidiffParseError as exc:
        raise GoldPatchError(f"gold patch does not parse: {exc}") from None
    files: list[str] = []
    spans: list[GoldSpan] = []
    region = 0
    for patched in patch_set:
        path = _strip_prefix(patched.source_file)
        if patched.is_added_file or is_test_path(path):
            continue
        files.append(path)
        for hunk in patched:
            gold_lines = [line.source_line_no for line in hunk if line.is_removed]
            gold_lines.extend(_insertion_anchors(hunk))
            for start, end in _contiguous(gold_lines):
                spans.append(GoldSpan(path=path, start_line=start, end_line=end, region=region))
            region += 1
    return files, spans


def _insertion_anchors(hunk) -> list[int]:
    """Old-side line before each run of added lines that replaces nothing."""
    anchors: list[int] = []
    previous_old = max(hunk.source_start - 1, 1)
    run_has_removed = False
    run_has_added = False
    for line in list(hunk) + [None]:
        changed = line is not None and (line.is_added or line.is_removed)
        if changed:
            run_has_removed |= line.is_removed
            run_has_added |= line.is_added
            if line.is_removed:
                previous_old = line.source_line_no
            continue
        if run_has_added and not run_has_removed:
            anchors.append(previous_old)
        run_has_removed = run_has_added = False
        if line is not None and line.is_context:
            previous_old = line.source_line_no
    return anchors


def derive_entities(spans: list[GoldSpan], source_of: Callable[[str], str]) -> list[str]:
    """Entities enclosing gold lines, first-seen order; module-level lines name no entity."""
    entities: dict[str, None] = {}
    for span in spans:
        defs = definitions(source_of(span.path))
        for line in range(span.start_line, span.end_line + 1):
            found = innermost(defs, line)
            if found is not None:
                entities.setdefault(f"{span.path}:{found.qualname}", None)
    return list(entities)


class GoldMismatchError(ValueError):
    """Gold that does not fit the subject it is about: a task with it would be scored wrong."""


def check_gold(gold: Gold, line_count_of: Callable[[str], int | None], what: str) -> None:
    """Every gold file is a readable text file of the subject and every gold span lies inside it;
    checked before localizing, so such a task fails closed instead of scoring a miss."""
    for path in gold.files:
        if line_count_of(path) is None:
            raise GoldMismatchError(f"{what}: gold file {path!r} is not a readable text file of the subject")
    for span in gold.spans:
        lines = line_count_of(span.path)
        if span.end_line > lines:
            raise GoldMismatchError(f"{what}: gold span {span.path}:{span.start_line}-{span.end_line} ends past the "
                                    f"end of the file ({lines} lines in the subject)")
