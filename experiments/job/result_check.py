"""A result is checked against its subject before it is rendered or scored, as imported outputs are
(`locator.imported`): a saved result is a file anyone can edit, and a number computed over a range
to line 100000 or a path out of the subject is not a number about this subject.

- a path that is absolute or climbs out of the subject (`../../etc/passwd`) rejects the task, named;
- a file that is not a readable text file of the subject is dropped, named;
- an evidence range past the end of its file is clipped to the file, or dropped when it starts past it, named.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from locator.repository import PathOutsideSubjectError, normalize_relpath
from locator.result import LocalizationResult


class ResultOutsideSubjectError(ValueError):
    """A result naming a path outside its subject: the task fails closed."""


def _paths(result: LocalizationResult) -> list[tuple[str, str]]:
    """(field, path) of every path a result names."""
    named = [(f"files[{i}].path", f.path) for i, f in enumerate(result.files)]
    if result.handoff is not None:
        for field in ("ranked", "handed_off", "followed"):
            named += [(f"handoff.{field}[{i}]", p) for i, p in enumerate(getattr(result.handoff, field))]
    for field in ("ranked_modules", "ranked_entities"):
        named += [(f"{field}[{i}]", p.partition(":")[0]) for i, p in enumerate(getattr(result, field) or [])]
    return named


def check_result(result: LocalizationResult, line_count_of: Callable[[str], int | None],
                 where: Path | str) -> tuple[LocalizationResult, list[str]]:
    """The result as it may be scored, and a note per file dropped or range clipped or dropped."""
    for field, path in _paths(result):
        try:
            if normalize_relpath(path) != path:
                raise PathOutsideSubjectError(f"not a canonical subject path: {path!r}")
        except PathOutsideSubjectError as exc:
            raise ResultOutsideSubjectError(f"{where}: field {field}: rejected path: {exc}") from None
    notes: list[str] = []
    files = []
    for i, file in enumerate(result.files):
        lines = line_count_of(file.path)
        if lines is None:
            notes.append(f"{where}: files[{i}] {file.path} is not a readable text file of the subject: dropped")
            continue
        evidence = []
        for j, span in enumerate(file.evidence):
            if span.end_line <= lines:
                evidence.append(span)
            elif span.start_line <= lines:
                notes.append(f"{where}: files[{i}].evidence[{j}] {file.path}:{span.start_line}-{span.end_line} clipped "
                             f"to {span.start_line}-{lines}: the file has {lines} lines in the subject")
                evidence.append(span.model_copy(update={"end_line": lines}))
            else:
                notes.append(f"{where}: files[{i}].evidence[{j}] {file.path}:{span.start_line}-{span.end_line} dropped: "
                             f"the file has {lines} lines in the subject")
        files.append(file if len(evidence) == len(file.evidence) and evidence == file.evidence
                     else file.model_copy(update={"evidence": evidence}))
    if not notes:
        return result, []
    return result.model_copy(update={"files": files}), notes
