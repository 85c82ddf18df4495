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

from dataset.manifest import Gold, GoldSpan, HunkAnchor
from locator.languages import language_of
from locator.outline import definitions, innermost

GOLD_RULE = (
    "unidiff-old-side-v2: removed/modified old-side lines are gold; a pure insertion is anchored at "
    "the old-side line before it; test files excluded (each language's rule, locator/languages; other "
    "files under a tests/ or test/ folder); created files excluded; one region per hunk; "
    "entities = innermost enclosing definition (the language's tags queries)"
)

_TEST_DIRS = {"tests", "test"}


class GoldPatchError(ValueError):
    pass


def is_test_path(path: str) -> bool:
    """A test file: by its language's rule (pytest's, a crate's `tests/`, `*.test.ts`, `_test.go`,
    `src/test/java`); a file of no registered language, by a tests folder on its path."""
    language = language_of(path)
    if language is not None:
        return language.is_test(path)
    return any(part in _TEST_DIRS for part in PurePosixPath(path).parts[:-1])


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


class GoldMismatchError(ValueError):
    """Gold that does not fit the subject it is about: a task with it would be scored wrong."""


def hunk_anchors(patch: str) -> list[HunkAnchor]:
    """Each gold hunk's old-side text (context and removed lines) at the line its header names, in
    the regions `gold_from_patch` numbers."""
    anchors: list[HunkAnchor] = []
    region = 0
    for patched in PatchSet(patch):
        path = _strip_prefix(patched.source_file)
        if patched.is_added_file or is_test_path(path):
            continue
        for hunk in patched:
            anchors.append(HunkAnchor(path=path, region=region, start_line=max(hunk.source_start, 1),
                                      old_lines=_old_side(hunk)))
            region += 1
    return anchors


_NO_NEWLINE = "\\"  # unidiff's line type of "\\ No newline at end of file"


def _old_side(hunk) -> list[str]:
    """A hunk's old-side lines as they are in the file: a line the patch marks "\\ No newline at end
    of file" is the file's last and has no newline, though the patch text gives it one."""
    lines = list(hunk)
    old = []
    for i, line in enumerate(lines):
        if line.is_context or line.is_removed:
            marked = i + 1 < len(lines) and lines[i + 1].line_type == _NO_NEWLINE
            old.append(line.value.removesuffix("\n") if marked else line.value)
    return old


def place_gold(gold: Gold, source_of: Callable[[str], str | None], what: str) -> tuple[Gold, list[str]]:
    """The gold as it lies in the subject: each hunk whose old-side text is not at the line its
    header names is found where it is — the nearest exact match, as `patch` applies a hunk "with
    offset" — and its spans moved with it; a hunk found nowhere, or at two equally near places,
    fails the task closed. Returns the placed gold and a note per moved hunk."""
    if not gold.anchors:
        return gold, []
    shifts: dict[int, int] = {}
    notes = []
    for anchor in gold.anchors:
        source = source_of(anchor.path)
        if source is None:
            raise GoldMismatchError(f"{what}: gold file {anchor.path!r} is not a readable text file of the subject")
        lines = source.splitlines(keepends=True)
        size, at = len(anchor.old_lines), anchor.start_line - 1
        if size == 0 or lines[at:at + size] == anchor.old_lines:
            continue
        found = [i for i in range(len(lines) - size + 1) if lines[i:i + size] == anchor.old_lines]
        if not found:
            raise GoldMismatchError(f"{what}: gold hunk at {anchor.path}:{anchor.start_line} does not match the subject "
                                    "anywhere in the file: the patch is not of this code")
        nearest = min(found, key=lambda i: abs(i - at))
        if sum(1 for i in found if abs(i - at) == abs(nearest - at)) > 1:
            raise GoldMismatchError(f"{what}: gold hunk at {anchor.path}:{anchor.start_line} matches the subject at "
                                    "two places equally near: its gold lines are ambiguous")
        shifts[anchor.region] = nearest - at
        notes.append(f"{what}: gold hunk {anchor.path}:{anchor.start_line} found at line {nearest + 1} "
                     f"(offset {nearest - at:+d} lines, as patch would apply it)")
    if not shifts:
        return gold, []
    spans = [span.model_copy(update={"start_line": span.start_line + shifts.get(span.region, 0),
                                     "end_line": span.end_line + shifts.get(span.region, 0)}) for span in gold.spans]
    anchors = [a.model_copy(update={"start_line": a.start_line + shifts.get(a.region, 0)}) for a in gold.anchors]
    return gold.model_copy(update={"spans": spans, "anchors": anchors}), notes


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
        defs = definitions(span.path, source_of(span.path))
        for line in range(span.start_line, span.end_line + 1):
            found = innermost(defs, line)
            if found is not None:
                entities.setdefault(f"{span.path}:{found.qualname}", None)
    return list(entities)


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
