"""Results of other systems, imported into the canonical format so they are scored and tracked
exactly like loclab's own locators (`locator=locagent`, `locator=imported`).

Formats: `locagent` (LocAgent / SweRank `loc_outputs.jsonl`: found_files, found_modules,
found_entities), `agentless` (found_files, found_related_locs, found_edit_locs) and `generic`
(`{"task": id, "files": [{"path": p, "ranges": [[start, end], ...]}]}`). List fields may be JSON
lists or Python-literal strings (parsed with `ast.literal_eval`, never `eval`). A path that escapes
the subject root fails the task; a task the file does not cover fails too (never scored as empty).
The imported system's cost is unknown, so it is reported as null.
"""

from __future__ import annotations

import ast
import json
import re
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from locator.base import LocatorContext, LocatorOutput
from locator.hashing import sha256_file
from locator.repository import UnknownFileError, normalize_relpath
from locator.result import Evidence, Producer, ResultFile
from locator.settings import Settings
from locator.task import Task


class Format(StrEnum):
    LOCAGENT = "locagent"
    AGENTLESS = "agentless"
    GENERIC = "generic"


_LOC_LINE = re.compile(r"^\s*(line|function|class|method|variable)\s*:\s*(\S+)", re.IGNORECASE)


class ImportedResultError(ValueError):
    pass


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

    @cached_property
    def _rows(self) -> dict[str, dict]:
        if not self.path.is_file():
            raise ImportedResultError(f"{self.path}: imported results file not found")
        text = self.path.read_text(encoding="utf-8")
        rows: dict[str, dict] = {}
        items = json.loads(text) if self.path.suffix == ".json" else [
            json.loads(line) for line in text.splitlines() if line.strip()]
        for number, item in enumerate(items, 1):
            key = item.get("instance_id") or item.get("task")
            if not key:
                raise ImportedResultError(f"{self.path}:{number}: no instance_id or task field")
            rows[str(key)] = item | {"_where": f"{self.path}:{number}"}
        return rows

    def localize(self, task: Task, ctx: LocatorContext) -> LocatorOutput:
        row = self._rows.get(task.id)
        if row is None:
            raise ImportedResultError(f"{self.path}: no imported result for task {task.id}")
        where = row["_where"]
        parse = {Format.LOCAGENT: self._locagent, Format.AGENTLESS: self._agentless, Format.GENERIC: self._generic}
        files = parse[self.format](row, ctx, where)
        modules = entities = None
        if self.format == Format.LOCAGENT:
            # LocAgent's module and function Acc@k rank its own lists: keep them as they were ranked.
            modules = self._names(row, "found_modules", where)
            entities = self._names(row, "found_entities", where)
        ctx.decide(stage="import", source=str(self.path), files=[f.path for f in files])
        return LocatorOutput(files=files, confidence_semantics="rank only (imported; no confidence)",
                             producer=Producer(system=self.system, model=self.model,
                                               confidence_semantics="rank only (imported; no confidence)"),
                             cost_known=False, ranked_modules=modules, ranked_entities=entities)

    # --- formats ------------------------------------------------------------------------------

    @staticmethod
    def _path(raw: str, where: str) -> str:
        try:
            return normalize_relpath(raw.strip())
        except ValueError as exc:
            raise ImportedResultError(f"{where}: rejected path: {exc}") from None

    def _names(self, row: dict, field: str, where: str) -> list[str]:
        """A ranked `path:Qualified.name` list, paths normalized, first occurrence kept."""
        names: dict[str, None] = {}
        for entry in _flatten(_as_list(row.get(field), field, where)):
            path, _, name = entry.partition(":")
            names.setdefault(f"{self._path(path, where)}:{name}" if name else self._path(path, where), None)
        return list(names)

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

    def _assemble(self, ordered_paths: list[str], evidence: dict[str, list[Evidence]]) -> list[ResultFile]:
        paths = list(dict.fromkeys(ordered_paths + list(evidence)))
        return [ResultFile(path=p, reason=f"imported from {self.system}", evidence=evidence.get(p, [])) for p in paths]

    def _locagent(self, row: dict, ctx: LocatorContext, where: str) -> list[ResultFile]:
        files = [self._path(p, where) for p in _flatten(_as_list(row.get("found_files"), "found_files", where))]
        by_file: dict[str, list[str]] = {}
        for entity in _flatten(_as_list(row.get("found_entities"), "found_entities", where)):
            path, _, name = entity.partition(":")
            if name:
                by_file.setdefault(self._path(path, where), []).append(name)
        evidence = {p: self._entity_spans(ctx, p, names) for p, names in by_file.items()}
        return self._assemble(files, evidence)

    def _agentless(self, row: dict, ctx: LocatorContext, where: str) -> list[ResultFile]:
        files = [self._path(p, where) for p in _flatten(_as_list(row.get("found_files"), "found_files", where))]
        locs = row.get("found_edit_locs") or row.get("found_related_locs") or []
        if isinstance(locs, dict):
            per_file = {self._path(p, where): _flatten(v if isinstance(v, list) else [v]) for p, v in locs.items()}
        else:
            per_file = {p: _flatten(v if isinstance(v, list) else [v]) for p, v in zip(files, _as_list(locs, "locs", where))}
        evidence: dict[str, list[Evidence]] = {}
        for path, entries in per_file.items():
            names, spans = [], []
            for entry in entries:
                for line in str(entry).splitlines():
                    match = _LOC_LINE.match(line)
                    if not match:
                        continue
                    kind, value = match.group(1).lower(), match.group(2)
                    if kind == "line" and value.isdigit():
                        spans.append(Evidence(id=f"{path}#L{value}", start_line=int(value), end_line=int(value),
                                              reason="imported edit line"))
                    elif kind in ("function", "class", "method"):
                        names.append(value)
            evidence[path] = self._entity_spans(ctx, path, names) + spans
        return self._assemble(files, evidence)

    def _generic(self, row: dict, ctx: LocatorContext, where: str) -> list[ResultFile]:
        files, evidence = [], {}
        for entry in _as_list(row.get("files"), "files", where):
            path = self._path(str(entry["path"]), where)
            files.append(path)
            evidence[path] = [Evidence(id=f"{path}#{s}-{e}", start_line=int(s), end_line=int(e), reason="imported range")
                              for s, e in entry.get("ranges", [])]
        return self._assemble(files, evidence)
