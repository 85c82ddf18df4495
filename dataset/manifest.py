"""loclab's gold manifest: a header line, then one JSON row per task (JSONL).

The header carries the BLAKE3 content hash of the task rows, so every number loclab logs is tied
to the exact task set; a manifest whose rows do not match its header fails to load.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, ValidationError, model_validator

from locator.hashing import blake3_hex, canonical_json
from locator.task import Record, Task

MANIFEST_KIND = "loclab-manifest"


class ManifestError(ValueError):
    """Bad dataset input; the message names the file, the line and the field."""


class ManifestHashError(ManifestError):
    pass


# A revision reaches git's command line, so it must never read as an option ("--output=X" makes
# `git archive` write a file): a commit id, or a ref name by git's own rules, never starting with "-".
_REVISION = re.compile(r"[0-9A-Za-z_][0-9A-Za-z_./-]*")
# A repository name becomes a mirror path (`<owner>__<name>`, `<owner>/<name>`): one safe segment each.
_REPOSITORY_PART = re.compile(r"[0-9A-Za-z_][0-9A-Za-z_.-]*")


def check_revision(value: str) -> str:
    if (not _REVISION.fullmatch(value) or ".." in value or value.endswith((".", "/", ".lock"))
            or "//" in value or "/." in value):
        raise ValueError(f"{value!r} is not a commit id or ref name (hex, or letters, digits, '_', '.', '/', '-', "
                         "not starting with '-')")
    return value


def check_repository_name(value: str) -> str:
    owner, slash, name = value.partition("/")
    if not slash or not all(_REPOSITORY_PART.fullmatch(part) and part not in {".", ".."} for part in (owner, name)):
        raise ValueError(f"{value!r} is not an 'owner/name' repository name (one safe segment each)")
    return value


Revision = Annotated[str, AfterValidator(check_revision)]
RepositoryName = Annotated[str, AfterValidator(check_repository_name)]


class PypiSubject(Record):
    kind: Literal["pypi"] = "pypi"
    requirement: str
    artifact: Literal["wheel", "sdist"]
    artifact_filename: str
    artifact_sha256: str | None = None
    path_map: dict[str, str] = Field(default_factory=lambda: {"": ""})
    verify_sha256: dict[str, str] = Field(default_factory=dict)


class GitSubject(Record):
    kind: Literal["git"] = "git"
    repository: str
    revision: Revision
    verify_sha256: dict[str, str] = Field(default_factory=dict)


class DebianSubject(Record):
    """A Debian binary package's files (`apt-get download PACKAGE=VERSION`): a crate's source from
    `librust-*-dev`, a Go module's from `golang-*-dev`. `path_map` maps repository paths to the
    package's (`{"": "usr/share/cargo/registry/clap-4.0.32"}`)."""

    kind: Literal["debian"] = "debian"
    package: str = Field(pattern=r"^[a-z0-9][a-z0-9+.-]+$")
    version: str = Field(pattern=r"^[A-Za-z0-9.+:~-]+$")
    artifact_filename: str
    artifact_sha256: str
    path_map: dict[str, str]
    verify_sha256: dict[str, str] = Field(default_factory=dict)


class NpmSubject(Record):
    """An npm package's published tarball (`{registry}/{name}/-/{basename}-{version}.tgz`): a package
    that ships its TypeScript sources (rxjs's `src/`), or a JavaScript package's own files. `path_map`
    maps repository paths to the tarball's (`{"": "package"}`)."""

    kind: Literal["npm"] = "npm"
    name: str = Field(pattern=r"^(@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*$")
    version: str = Field(pattern=r"^[0-9A-Za-z.+-]+$")
    artifact_sha256: str
    registry: str = "https://registry.npmjs.org"
    path_map: dict[str, str]
    verify_sha256: dict[str, str] = Field(default_factory=dict)


class LocalSubject(Record):
    kind: Literal["local"] = "local"
    path: str
    verify_sha256: dict[str, str] = Field(default_factory=dict)


SubjectSpec = Annotated[PypiSubject | GitSubject | DebianSubject | NpmSubject | LocalSubject, Field(discriminator="kind")]


class GoldSpan(Record):
    path: str
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    region: int = Field(ge=0, description="gold hunk the span belongs to (gold-region recall)")

    @model_validator(mode="after")
    def _ordered(self) -> "GoldSpan":
        if self.end_line < self.start_line:
            raise ValueError(f"end_line {self.end_line} < start_line {self.start_line}")
        return self


class HunkAnchor(Record):
    """The old-side text a gold hunk says is at `start_line` of `path` (its context and removed
    lines): checked against the subject before scoring, as `patch` checks a hunk before applying it."""

    path: str
    region: int = Field(ge=0)
    start_line: int = Field(ge=1)
    old_lines: list[str]


class TierRegion(Record):
    """A region of a gold tier in SWE-Explore's terms, kept as the ground truth wrote it: 1-based and
    inclusive, `end == -1` the file's end, a negative start counted from it, an inverted region empty
    (metrics.swe_explore resolves them as its evaluator does)."""

    path: str = Field(min_length=1)
    start: int
    end: int


class Gold(Record):
    files: list[str] = Field(min_length=1)
    spans: list[GoldSpan]
    entities: list[str] | None = Field(
        default=None, description="None: derived from the verified subject at scoring time"
    )
    anchors: list[HunkAnchor] | None = Field(
        default=None, description="the gold hunks' old-side text, where gold comes from a patch")
    rule: str
    # SWE-Explore's tiers beside the core (the spans): what agents that solved the task also read, and
    # which gold files they read and modified. None: the gold has no such tier (its metrics are absent)
    optional_regions: list[TierRegion] | None = None
    optional_files: list[str] | None = None
    main_files: list[str] | None = Field(default=None, description="None: every gold file (the files the fix modifies)")

    @model_validator(mode="after")
    def _spans_in_files(self) -> "Gold":
        stray = sorted({s.path for s in self.spans} - set(self.files))
        if stray:
            raise ValueError(f"gold spans in files that are not gold files: {stray}")
        return self


class ManifestRow(Record):
    task: Task
    subject: SubjectSpec
    gold: Gold


class ContentHash(Record):
    algorithm: Literal["blake3"] = "blake3"
    hex: str


class ManifestHeader(Record):
    kind: Literal["loclab-manifest"] = MANIFEST_KIND
    schema_version: Literal[1] = 1
    name: str
    version: str
    description: str
    gold_rule: str
    task_count: int
    content_hash: ContentHash


class Manifest(Record):
    header: ManifestHeader
    rows: list[ManifestRow]
    source: str

    @property
    def content_hash(self) -> str:
        return self.header.content_hash.hex

    def select(self, task_ids: Sequence[str] | str | None = None, limit: int | None = None,
               split: str | None = None) -> list[ManifestRow]:
        """The tasks to run; never empty (an empty selection is an error, not a job that scores nothing)."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ManifestError(f"setting limit: a positive number of tasks (or null for all), got {limit!r}")
        if not self.rows:
            raise ManifestError(f"{self.source}: the manifest holds no task")
        if isinstance(task_ids, str):  # `tasks=demo-click-001` without brackets: one id, never its letters
            task_ids = [task_ids]
        rows = self.rows
        if split is not None:
            rows = [r for r in rows if r.task.metadata.get("split") == split]
            if not rows:
                raise ManifestError(f"{self.source}: no task has split {split!r}")
        if task_ids:
            known = {r.task.id for r in rows}
            unknown = sorted(set(task_ids) - known)
            if unknown:
                hints = [f"{t} (did you mean {close[0]}?)" if (close := difflib.get_close_matches(t, known, n=1)) else t
                         for t in unknown]
                raise ManifestError(f"{self.source}: setting tasks: unknown task ids {', '.join(hints)}")
            rows = [r for r in rows if r.task.id in set(task_ids)]
        return rows[:limit] if limit is not None else rows


def row_json(row: "ManifestRow") -> dict:
    """A row as it is hashed and written: gold without hunk anchors or tiers says nothing of them, so
    a manifest made before they existed keeps its hash."""
    data = row.model_dump(mode="json")
    for tier in ("anchors", "optional_regions", "optional_files", "main_files"):  # absent: as a manifest made before them
        if data["gold"].get(tier) is None:
            data["gold"].pop(tier, None)
    if not data["task"].get("languages"):  # undeclared: as a manifest made before tasks declared languages
        data["task"].pop("languages", None)
    return data


def rows_hash(rows: list[ManifestRow]) -> str:
    return blake3_hex("\n".join(canonical_json(row_json(r)) for r in rows))


def build_manifest(name: str, version: str, description: str, gold_rule: str, rows: list[ManifestRow], source: str) -> Manifest:
    ids = [r.task.id for r in rows]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ManifestError(f"{source}: duplicate task ids {duplicates}")
    header = ManifestHeader(
        name=name, version=version, description=description, gold_rule=gold_rule,
        task_count=len(rows), content_hash=ContentHash(hex=rows_hash(rows)),
    )
    return Manifest(header=header, rows=rows, source=source)


def _field_error(path: Path, lineno: int, error: ValidationError) -> ManifestError:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(row)"
    return ManifestError(f"{path}:{lineno}: field {where}: {first['msg']}")


def _json_line(path: Path, lineno: int, line: str) -> dict:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{path}:{lineno}: not valid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(value, dict):
        raise ManifestError(f"{path}:{lineno}: expected a JSON object, got {type(value).__name__}")
    return value


def load_manifest(path: str | Path, verify_hash: bool = True, path_setting: str = "dataset.loader.path") -> Manifest:
    """`path_setting`: what sets the path (named when the file is not there)."""
    path = Path(path)
    if not path.is_file():
        raise ManifestError(f"{path}: dataset file not found (set {path_setting})")
    lines = [(n, line) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if line.strip()]
    if not lines:
        raise ManifestError(f"{path}: empty manifest")
    try:
        header = ManifestHeader.model_validate(_json_line(path, *lines[0]))
    except ValidationError as exc:
        raise _field_error(path, lines[0][0], exc) from None
    rows = []
    for lineno, line in lines[1:]:
        try:
            rows.append(ManifestRow.model_validate(_json_line(path, lineno, line)))
        except ValidationError as exc:
            raise _field_error(path, lineno, exc) from None
    manifest = build_manifest(header.name, header.version, header.description, header.gold_rule, rows, str(path))
    if verify_hash and manifest.header != header:
        raise ManifestHashError(
            f"{path}: header does not match the rows (content_hash {header.content_hash.hex[:16]}… vs "
            f"{manifest.content_hash[:16]}…, task_count {header.task_count} vs {len(rows)}); "
            f"if the edit was intended, reseal with `python -m experiments.manifest seal {path}`"
        )
    return manifest


def write_manifest(manifest: Manifest, path: str | Path) -> None:
    path = Path(path)
    lines = [canonical_json(manifest.header.model_dump(mode="json"))]
    lines += [canonical_json(row_json(r)) for r in manifest.rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
