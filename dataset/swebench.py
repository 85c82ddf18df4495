"""SWE-bench rows (JSON or JSONL) -> a loclab manifest, gold derived from the gold patch.

Only the problem statement reaches the locator: hints, tests and the patch stay out of the Task.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from dataset.gold import GOLD_RULE, GoldPatchError, gold_from_patch
from dataset.manifest import Gold, Manifest, ManifestError, ManifestRow, PypiSubject, build_manifest
from locator.task import SubjectIdentity, Task


class _PypiPin(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str
    requirement: str
    artifact: str
    artifact_filename: str
    artifact_sha256: str
    path_map: dict[str, str]


class SweBenchRow(BaseModel):
    model_config = ConfigDict(extra="ignore")
    instance_id: str
    repo: str
    base_commit: str
    patch: str
    problem_statement: str
    version: str | None = None
    created_at: str | None = None
    split: str | None = None
    subject: _PypiPin
    gold_file_sha256: dict[str, str]


def _raw_rows(path: Path) -> list[tuple[int, dict]]:
    if not path.is_file():
        raise ManifestError(f"{path}: dataset file not found (set the dataset path or its env var)")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ManifestError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
        if not isinstance(data, list):
            raise ManifestError(f"{path}: a .json dataset must be a list of rows")
        return list(enumerate(data, 1))
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append((lineno, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise ManifestError(f"{path}:{lineno}: not valid JSON: {exc.msg} (column {exc.colno})") from None
    return rows


def _to_manifest_row(row: SweBenchRow) -> ManifestRow:
    files, spans = gold_from_patch(row.patch)
    if not files:
        raise GoldPatchError("the gold patch changes no non-test file that existed before")
    missing = sorted(set(files) - set(row.gold_file_sha256))
    if missing:
        raise GoldPatchError(f"gold files without gold_file_sha256: {missing}")
    task = Task(
        id=row.instance_id,
        text=row.problem_statement,
        subject=SubjectIdentity(repository=row.repo, revision=row.base_commit),
        metadata={"repo": row.repo, "split": row.split, "version": row.version, "created_at": row.created_at},
    )
    subject = PypiSubject(**row.subject.model_dump(exclude={"kind"}), verify_sha256=row.gold_file_sha256)
    return ManifestRow(task=task, subject=subject, gold=Gold(files=files, spans=spans, rule=GOLD_RULE))


def load_swebench(path: str | Path, name: str, version: str, description: str) -> Manifest:
    path = Path(path)
    rows = []
    for lineno, raw in _raw_rows(path):
        where = f"{path}:{lineno}"
        try:
            parsed = SweBenchRow.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise ManifestError(f"{where}: field {field}: {first['msg']}") from None
        if parsed.subject.kind != "pypi":
            raise ManifestError(f"{where}: field subject.kind: only 'pypi' subjects are supported, got {parsed.subject.kind!r}")
        try:
            rows.append(_to_manifest_row(parsed))
        except (GoldPatchError, ValidationError) as exc:
            raise ManifestError(f"{where}: field patch: {exc}") from None
    return build_manifest(name, version, description, GOLD_RULE, rows, str(path))
