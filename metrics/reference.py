"""Reference-relative metrics (seed 000's accuracy study): a result scored against a reference
localization of the same task instead of gold.

Seed 000 compared System One against a Claude Code run of the same task (5 primary, 9 supporting, 4
context files) and reported primary-file recall 4/5, primary evidence-region recall 16/20, primary
evidence-line coverage 85.8 % and an evidence precision proxy of 75 %. The note names the numbers, not
their formulas; loclab's, in the reference's own tiers (its files' roles):

- `ref_primary_file_recall`: the reference's primary files the candidate returns / its primary files;
- `ref_primary_region_recall`: the reference's evidence regions in its primary files that a candidate
  evidence range touches (same file, a shared line) / those regions;
- `ref_primary_line_coverage`: the reference's primary evidence lines inside candidate evidence / those lines;
- `ref_precision_proxy`: the candidate's evidence ranges that touch any reference evidence range (any
  tier) / the candidate's evidence ranges (the share of what it shows that the reference also showed).

A reference whose files carry no role (every file `relevant` or `unknown`, as an imported peer's) is
all primary: its tiers are unknown, so every file it names counts.
"""

from __future__ import annotations

from locator.result import LocalizationResult, Role

REFERENCE_METRICS = ("ref_primary_file_recall", "ref_primary_region_recall", "ref_primary_line_coverage",
                     "ref_precision_proxy")
_TIERED = {Role.PRIMARY, Role.SUPPORTING, Role.CONTEXT}


class ReferenceError(ValueError):
    """A reference that cannot judge the candidate: another task or subject."""


def primary_files(reference: LocalizationResult) -> list[str]:
    tiered = any(f.role in _TIERED for f in reference.files)
    return list(dict.fromkeys(f.path for f in reference.files if not tiered or f.role is Role.PRIMARY))


def _ranges(result: LocalizationResult, paths: set[str] | None = None) -> list[tuple[str, int, int]]:
    return [(f.path, e.start_line, e.end_line) for f in result.files for e in f.evidence if paths is None or f.path in paths]


def _touch(a: tuple[str, int, int], b: tuple[str, int, int]) -> bool:
    return a[0] == b[0] and a[1] <= b[2] and b[1] <= a[2]


def _lines(ranges) -> set[tuple[str, int]]:
    return {(p, n) for p, s, e in ranges for n in range(s, e + 1)}


def reference_metrics(candidate: LocalizationResult, reference: LocalizationResult) -> dict[str, float | None]:
    """The four numbers of one task; None where the reference gives nothing to measure against."""
    if candidate.task != reference.task or (candidate.subject and reference.subject and candidate.subject != reference.subject):
        raise ReferenceError(f"the reference is for {reference.task} at {reference.subject}, the candidate for "
                             f"{candidate.task} at {candidate.subject}")
    primary = primary_files(reference)
    returned = set(candidate.ranked_paths())
    shown = _ranges(candidate)
    primary_regions = _ranges(reference, set(primary))
    primary_lines = _lines(primary_regions)
    reference_regions = _ranges(reference)
    ratio = lambda part, whole: part / whole if whole else None  # noqa: E731
    return {
        "ref_primary_file_recall": ratio(len(returned & set(primary)), len(primary)),
        "ref_primary_region_recall": ratio(sum(any(_touch(r, c) for c in shown) for r in primary_regions), len(primary_regions)),
        "ref_primary_line_coverage": ratio(len(primary_lines & _lines(shown)), len(primary_lines)),
        "ref_precision_proxy": ratio(sum(any(_touch(c, r) for r in reference_regions) for c in shown), len(shown)),
    }
