"""Results of other systems, imported into the canonical format so they are scored and tracked
exactly like loclab's own locators (`locator=locagent`, `locator=imported`).

Formats: `locagent` (LocAgent / SweRank `loc_outputs.jsonl`: found_files, found_modules,
found_entities), `agentless` (found_files, found_related_locs, found_edit_locs), `generic`
(`{"task": id, "files": [{"path": p, "ranges": [[start, end], ...]}]}`) and `relevant_files`
(`{"instance_id": id, "output": text}`: SWE-Explore's agent explorers' answer, its `RELEVANT_FILES:`
block read by locator.relevant_files) and `result` (canonical localization-result.json objects, their
files' roles kept: a tiered reference for `experiments.analysis.compare --reference`). List fields may be JSON
lists or Python-literal strings (parsed with `ast.literal_eval`, never `eval`).

The whole file is validated before any subject is fetched (`check_inputs`): malformed JSON, a row
that is not an object, two rows for one task, a path that escapes the subject root, a negative or
reversed range — each an error naming the file, the line and the field. A range past the end of
its file is clipped to the file (a range that starts past it is dropped), with a warning; a task
the file does not cover fails (never scored as empty). The imported system's cost is unknown, so
it is reported as null.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ValidationError

from locator.base import LocatorContext, LocatorOutput
from locator.hashing import sha256_file
from locator.repository import UnknownFileError, normalize_relpath
from locator.relevant_files import relevant_files
from locator.result import Evidence, LocalizationResult, Producer, ResultFile, Role
from locator.settings import Settings
from locator.task import Task


class Format(StrEnum):
    LOCAGENT = "locagent"
    AGENTLESS = "agentless"
    GENERIC = "generic"
    RELEVANT_FILES = "relevant_files"  # SWE-Explore's agent answer: {"instance_id", "output": "...RELEVANT_FILES: ..."}
    RESULT = "result"  # canonical localization-result.json objects (a reference with its files' roles kept)


_LOC_LINE = re.compile(r"^\s*(line|function|class|method|variable)\s*:\s*(\S+)", re.IGNORECASE)


class ImportedResultError(ValueError):
    """A bad imported file: the message names the file, the line (or JSON item) and the field."""


def _as_list(value: Any, field: str, where: str) -> list:
    if value is None:
        return []
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value) if value.strip() else []
        except (ValueError, SyntaxError):
            raise ImportedResultError(f"{where}: field {field} is neither a list nor a Python-literal list") from None
    if not isinstance(value, list):
        raise ImportedResultError(f"{where}: field {field} must be a list, got {type(value).__name__}")
    return value


def _flatten(items: list) -> list[str]:
    out: list[str] = []
    for item in items:
        out.extend(_flatten(item) if isinstance(item, list) else [str(item)])
    return out


def _path(raw: object, field: str, where: str) -> str:
    if not isinstance(raw, str):
        raise ImportedResultError(f"{where}: field {field}: a path must be a string, got {type(raw).__name__}")
    try:
        return normalize_relpath(raw.strip())
    except ValueError as exc:
        raise ImportedResultError(f"{where}: field {field}: rejected path: {exc}") from None


def _range(raw: object, field: str, where: str) -> tuple[int, int]:
    if (not isinstance(raw, (list, tuple)) or len(raw) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in raw)):
        raise ImportedResultError(f"{where}: field {field}: a range is [start_line, end_line] of integers, got {raw!r}")
    start, end = raw
    if start < 1 or end < start:
        raise ImportedResultError(f"{where}: field {field}: need 1 <= start_line <= end_line, got [{start}, {end}]")
    return start, end


@dataclass(frozen=True)
class ImportedRow:
    """One task's imported answer, validated: ranked paths, line ranges and entity names per path."""

    where: str
    files: list[str]
    ranges: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    entities: dict[str, list[str]] = field(default_factory=dict)
    ranked_modules: list[str] | None = None
    ranked_entities: list[str] | None = None
    roles: dict[str, Role] = field(default_factory=dict)  # a canonical result's tiers (primary, supporting, context)


def _names(item: dict, key: str, where: str) -> list[str]:
    """A ranked `path:Qualified.name` list, paths normalized, first occurrence kept."""
    names: dict[str, None] = {}
    for entry in _flatten(_as_list(item.get(key), key, where)):
        path, _, name = entry.partition(":")
        names.setdefault(f"{_path(path, key, where)}:{name}" if name else _path(path, key, where), None)
    return list(names)


def _locagent(item: dict, where: str) -> ImportedRow:
    files = [_path(p, "found_files", where) for p in _flatten(_as_list(item.get("found_files"), "found_files", where))]
    entities = _names(item, "found_entities", where)
    by_file: dict[str, list[str]] = {}
    for entity in entities:
        path, _, name = entity.partition(":")
        if name:
            by_file.setdefault(path, []).append(name)
    # LocAgent's module and function Acc@k rank its own lists: keep them as they were ranked.
    return ImportedRow(where, files, entities=by_file, ranked_modules=_names(item, "found_modules", where),
                       ranked_entities=entities)


def _agentless(item: dict, where: str) -> ImportedRow:
    files = [_path(p, "found_files", where) for p in _flatten(_as_list(item.get("found_files"), "found_files", where))]
    key = "found_edit_locs" if item.get("found_edit_locs") else "found_related_locs"
    locs = item.get(key) or []
    if isinstance(locs, dict):
        per_file = {_path(p, key, where): _flatten(v if isinstance(v, list) else [v]) for p, v in locs.items()}
    else:
        per_file = {p: _flatten(v if isinstance(v, list) else [v]) for p, v in zip(files, _as_list(locs, key, where))}
    ranges: dict[str, list[tuple[int, int]]] = {}
    entities: dict[str, list[str]] = {}
    for path, entries in per_file.items():
        for entry in entries:
            for line in str(entry).splitlines():
                match = _LOC_LINE.match(line)
                if not match:
                    continue
                kind, value = match.group(1).lower(), match.group(2)
                if kind == "line" and value.isdigit() and int(value) >= 1:
                    ranges.setdefault(path, []).append((int(value), int(value)))
                elif kind in ("function", "class", "method"):
                    entities.setdefault(path, []).append(value)
    return ImportedRow(where, files, ranges=ranges, entities=entities)


def _generic(item: dict, where: str) -> ImportedRow:
    files, ranges = [], {}
    for i, entry in enumerate(_as_list(item.get("files"), "files", where)):
        if not isinstance(entry, dict) or "path" not in entry:
            raise ImportedResultError(f"{where}: field files[{i}]: expected an object with a path, got {entry!r}")
        path = _path(entry["path"], f"files[{i}].path", where)
        given = [_range(r, f"files[{i}].ranges[{j}]", where)
                 for j, r in enumerate(_as_list(entry.get("ranges"), f"files[{i}].ranges", where))]
        if path in ranges:  # named twice: one file, ranked where first named, with the ranges of both
            ranges[path] += [r for r in given if r not in ranges[path]]
            continue
        files.append(path)
        ranges[path] = given
    return ImportedRow(where, files, ranges=ranges)


def _relevant_files(item: dict, where: str) -> ImportedRow:
    """An agent's answer with a `RELEVANT_FILES:` block (locator.relevant_files): ranked paths in the
    block's order, their ranges; a bare path is its whole file (a file without evidence)."""
    text = item.get("output")
    if not isinstance(text, str):
        raise ImportedResultError(f"{where}: field output: the agent's answer text (with a RELEVANT_FILES: block) is "
                                  f"missing or not a string")
    files, ranges = [], {}
    for path, start, end in relevant_files(text):
        path = _path(path, "output", where)
        if path not in ranges:
            files.append(path)
            ranges[path] = []
        if start is not None and (start, end) not in ranges[path]:
            ranges[path].append((start, end))
    return ImportedRow(where, files, ranges=ranges)


def _canonical(item: dict, where: str) -> ImportedRow:
    """A canonical loclab result (schema: schemas/localization-result.schema.json): its ranked files,
    their evidence ranges and roles, so it can stand as a tiered reference (compare --reference)."""
    try:
        result = LocalizationResult.model_validate(item)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ImportedResultError(f"{where}: field {'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None
    files = [_path(f.path, "files.path", where) for f in result.files]
    ranges = {path: [(e.start_line, e.end_line) for e in f.evidence] for path, f in zip(files, result.files)}
    return ImportedRow(where, list(dict.fromkeys(files)), ranges=ranges, roles={p: f.role for p, f in zip(files, result.files)})


_PARSERS = {Format.LOCAGENT: _locagent, Format.AGENTLESS: _agentless, Format.GENERIC: _generic,
            Format.RELEVANT_FILES: _relevant_files, Format.RESULT: _canonical}


class ImportedLocator(Settings):
    name: ClassVar[str] = "imported"
    uses_system_one: ClassVar[bool] = False
    path: Path
    format: Format
    system: str
    model: str | None

    @property
    def input_identity(self) -> str:
        """The imported file's content: a changed file never reuses results scored from the old one."""
        if not self.path.is_file():
            raise ImportedResultError(f"{self.path}: imported results file not found")
        return sha256_file(self.path)

    def check_inputs(self) -> None:
        """Parse and validate the whole file up front: a bad file fails before any subject is fetched."""
        _ = self._rows

    def _items(self) -> list[tuple[str, object]]:
        if not self.path.is_file():
            raise ImportedResultError(f"{self.path}: imported results file not found")
        text = self.path.read_text(encoding="utf-8")
        if self.path.suffix == ".json":
            try:
                items = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ImportedResultError(f"{self.path}:{exc.lineno}: not valid JSON: {exc.msg} (column {exc.colno})") from None
            if not isinstance(items, list):
                raise ImportedResultError(f"{self.path}: a .json import is a list of objects, got {type(items).__name__}")
            return [(f"{self.path}: item {n}", item) for n, item in enumerate(items, 1)]
        found = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                found.append((f"{self.path}:{lineno}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise ImportedResultError(f"{self.path}:{lineno}: not valid JSON: {exc.msg} (column {exc.colno})") from None
        return found

    @cached_property
    def _rows(self) -> dict[str, ImportedRow]:
        rows: dict[str, ImportedRow] = {}
        for where, item in self._items():
            if not isinstance(item, dict):
                raise ImportedResultError(f"{where}: expected a JSON object, got {type(item).__name__}")
            key = item.get("instance_id") or item.get("task")
            if not isinstance(key, str) or not key:
                raise ImportedResultError(f"{where}: field instance_id (or task): missing or not a string")
            if key in rows:
                raise ImportedResultError(f"{self.path}: task {key} has two rows: {rows[key].where} and {where}; "
                                          "keep one (which one is right cannot be guessed)")
            rows[key] = _PARSERS[self.format](item, where)
        return rows

    def localize(self, task: Task, ctx: LocatorContext) -> LocatorOutput:
        row = self._rows.get(task.id)
        if row is None:
            raise ImportedResultError(f"{self.path}: no imported result for task {task.id}")
        evidence = {path: self._entity_spans(ctx, path, names) for path, names in row.entities.items()}
        for path, ranges in row.ranges.items():
            evidence.setdefault(path, []).extend(self._clipped(ctx, path, ranges, row.where))
        files = self._assemble(row.files, evidence, row.roles)
        ctx.decide(stage="import", source=str(self.path), files=[f.path for f in files])
        return LocatorOutput(files=files, confidence_semantics="rank only (imported; no confidence)",
                             producer=Producer(system=self.system, model=self.model,
                                               confidence_semantics="rank only (imported; no confidence)"),
                             cost_known=False, ranked_modules=row.ranked_modules, ranked_entities=row.ranked_entities)

    @staticmethod
    def _clipped(ctx: LocatorContext, path: str, ranges: list[tuple[int, int]], where: str) -> list[Evidence]:
        """Ranges clipped to the lines the file has: lines that do not exist are never scored. Each
        clip or drop is a warning on stderr and in the trace."""
        try:
            lines = ctx.stat(path).line_count
        except UnknownFileError:
            message = f"{where}: {path} is not a file of the subject: its {len(ranges)} ranges dropped"
            warnings.warn(message, ImportedRangeWarning, stacklevel=2)
            ctx.decide(stage="import", warning=message)
            return []
        kept = []
        for start, end in ranges:
            if start > lines or end > lines:
                message = (f"{where}: {path} [{start}, {end}] " + (f"clipped to [{start}, {lines}]" if start <= lines else
                           "dropped") + f": the file has {lines} lines in the subject")
                warnings.warn(message, ImportedRangeWarning, stacklevel=2)
                ctx.decide(stage="import", warning=message)
            if start <= lines:
                end = min(end, lines)
                kept.append(Evidence(id=f"{path}#{start}-{end}", start_line=start, end_line=end, reason="imported range"))
        return kept

    def _entity_spans(self, ctx: LocatorContext, path: str, names: list[str]) -> list[Evidence]:
        try:
            defs = {d.qualname: d for d in ctx.outline(path).definitions}
        except UnknownFileError:
            return []
        evidence = []
        for name in names:
            found = defs.get(name)
            if found is not None:
                evidence.append(Evidence(id=f"{path}:{name}", start_line=found.start_line, end_line=found.end_line,
                                         reason=f"imported entity {name}"))
        return evidence

    def _assemble(self, ordered_paths: list[str], evidence: dict[str, list[Evidence]], roles: dict[str, Role]) -> list[ResultFile]:
        paths = list(dict.fromkeys(ordered_paths + list(evidence)))
        return [ResultFile(path=p, role=roles.get(p, Role.RELEVANT), reason=f"imported from {self.system}",
                           evidence=evidence.get(p, [])) for p in paths]


class ImportedRangeWarning(UserWarning):
    """An imported range past the end of its file was clipped (or dropped when it starts past it)."""
