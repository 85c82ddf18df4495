"""SWE-bench rows (JSON, JSONL or parquet) -> a loclab manifest, gold derived from the gold patch.

Only the problem statement reaches the locator: hints, tests and the patch stay out of the Task.

Row formats (`row_format`): SWE-bench's own (Lite, Verified, and SWE-bench Multilingual and
SWE-PolyBench, which share it; a row's `language` field declares its task's language), and
Multi-SWE-bench's (`org`, `repo`, `base.sha`, `fix_patch`, `resolved_issues`): its task text is the
resolved issues' titles and bodies, never the pull request's own `title` and `body`, which describe
the fix. A data set declares its tasks' languages (`languages`); absent both, a task's languages are
every registered language its subject holds. The gold rule is the data set's choice (`gold_files`):
every file the fix edits, or only the source files of the declared languages.

Three kinds of subject:
- a row with a `subject` pin (`kind: pypi`, the PyPI subset in ../shared): the released artifact,
  checked against the row's `gold_file_sha256`;
- a row pinned by a registry subset's pins file (`subjects`: one JSON line per row, `instance_id`,
  `subject` (`kind: npm` or `debian`) and `gold_file_sha256`; scripts/build_registry_subset.py finds
  them): the published artifact, checked the same way; only the pinned rows are loaded;
- a plain SWE-bench row (`repo` + `base_commit`, as published for Lite or Verified): a git subject,
  resolved against a local clone or mirror (`git_mirrors`: one `<owner>__<name>` or `<owner>/<name>`
  folder per repository) or cloned once from `clone_url` (`{repo}` is replaced) into the cache. The
  gold files' sha256 are taken from the row when it has them, else computed from the checkout at
  `base_commit`, so a task still fails closed if its subject is later not that code.
"""

from __future__ import annotations

import json
import subprocess
import warnings
from pathlib import Path

import pandas as pd
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from enum import StrEnum

from dataset.gold import GOLD_RULE, GoldPatchError, gold_from_patch, hunk_anchors
from dataset.manifest import (DebianSubject, GitSubject, Gold, Manifest, ManifestError, ManifestRow, NpmSubject,
                              PypiSubject, RepositoryName, Revision, build_manifest)
from locator import languages as registry
from locator.hashing import sha256_bytes
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
    repo: RepositoryName
    base_commit: Revision
    patch: str
    problem_statement: str
    version: str | None = None
    created_at: str | None = None
    split: str | None = None
    subject: _PypiPin | None = None  # None: a git subject (repo at base_commit)
    gold_file_sha256: dict[str, str] | None = None
    language: str | None = None  # SWE-bench Multilingual / SWE-PolyBench: the task's language


class RegistryPin(BaseModel):
    """One line of a registry subset's pins file: the published artifact that holds a row's gold files
    byte-identical to its `base.sha` (their sha256 are checked after unpacking)."""

    model_config = ConfigDict(extra="forbid")
    instance_id: str
    subject: Annotated[NpmSubject | DebianSubject, Field(discriminator="kind")]
    gold_file_sha256: dict[str, str] = Field(min_length=1)


def read_pins(path: str | Path) -> dict[str, tuple[int, RegistryPin]]:
    """A pins file's pins by instance id, each with its line number."""
    path = Path(path)
    if not path.is_file():
        raise ManifestError(f"{path}: registry pins file not found (dataset.loader.subjects)")
    pins: dict[str, tuple[int, RegistryPin]] = {}
    for lineno, raw in _raw_rows(path, "dataset.loader.subjects"):
        try:
            pin = RegistryPin.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ManifestError(f"{path}:{lineno}: field {'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None
        if pin.instance_id in pins:
            raise ManifestError(f"{path}:{lineno}: field instance_id: {pin.instance_id} is pinned twice "
                                f"(line {pins[pin.instance_id][0]})")
        pins[pin.instance_id] = (lineno, pin)
    return pins


class RowFormat(StrEnum):
    SWEBENCH = "swebench"
    MULTI_SWE_BENCH = "multi_swe_bench"


class GoldFiles(StrEnum):
    ALL_EDITED = "all_edited"  # every non-test file the fix edits (changelogs, manifests included)
    DECLARED_SOURCE = "declared_source"  # only files of the task's declared languages


def _from_multi_swe_bench(raw: dict) -> dict:
    """A Multi-SWE-bench row in SWE-bench's fields: the task text is its resolved issues."""
    issues = raw.get("resolved_issues")
    if not isinstance(issues, list) or not issues:
        raise ValueError("field resolved_issues: a Multi-SWE-bench row needs at least one resolved issue (its task text)")
    text = "\n\n".join(f"{issue.get('title') or ''}\n\n{issue.get('body') or ''}".strip() for issue in issues)
    base = raw.get("base") if isinstance(raw.get("base"), dict) else {}
    return {"instance_id": raw.get("instance_id"), "repo": f"{raw.get('org')}/{raw.get('repo')}",
            "base_commit": base.get("sha"), "patch": raw.get("fix_patch"), "problem_statement": text}


ROW_FORMATS = {RowFormat.SWEBENCH: lambda raw: raw, RowFormat.MULTI_SWE_BENCH: _from_multi_swe_bench}


def _raw_rows(path: Path, path_setting: str) -> list[tuple[int, dict]]:
    if not path.is_file():
        raise ManifestError(f"{path}: dataset file not found (set {path_setting})")
    if path.suffix == ".parquet":
        try:
            frame = pd.read_parquet(path)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises many types for a bad file
            raise ManifestError(f"{path}: not a readable parquet file: {exc}") from None
        return [(n, {k: (None if v is None or (isinstance(v, float) and v != v) else v) for k, v in row.items()})
                for n, row in enumerate(frame.to_dict(orient="records"), 1)]
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


class GitSources:
    """Where a repository's history is found: a mirror folder, else a bare clone from `clone_url`
    kept in the cache (cloned once)."""

    def __init__(self, mirrors: str | None, clone_url: str | None, cache_dir: str | Path):
        self.mirrors = Path(mirrors) if mirrors else None
        self.clone_url = clone_url
        self.cache_dir = Path(cache_dir)

    def repository(self, repo: str, where: str) -> str:
        owner, _, name = repo.partition("/")
        if self.mirrors is not None:
            for candidate in (self.mirrors / f"{owner}__{name}", self.mirrors / owner / name,
                              self.mirrors / f"{owner}__{name}.git", self.mirrors / owner / f"{name}.git"):
                if candidate.is_dir():
                    return str(candidate.resolve())
        if self.clone_url:
            clone = self.cache_dir / "git" / f"{owner}__{name}.git"
            if not clone.is_dir():
                clone.parent.mkdir(parents=True, exist_ok=True)
                _git(where, ["clone", "--bare", "--quiet", "--", self.clone_url.format(repo=repo), str(clone)])
            return str(clone)
        looked = f"{self.mirrors}/{owner}__{name} or {self.mirrors}/{owner}/{name}" if self.mirrors else "no mirror folder"
        raise ManifestError(f"{where}: field repo: no clone of {repo} ({looked}); set LOCLAB_GIT_MIRRORS or "
                            "dataset.loader.clone_url")


def _git(where: str, args: list[str]) -> bytes:
    proc = subprocess.run(["git", *args], capture_output=True)
    if proc.returncode != 0:
        raise ManifestError(f"{where}: git {args[0]} failed: {proc.stderr.decode('utf-8', 'replace').strip()}")
    return proc.stdout


def _gold_hashes(repository: str, commit: str, files: list[str], where: str) -> dict[str, str]:
    hashes = {}
    for path in files:
        try:
            hashes[path] = sha256_bytes(_git(where, ["-C", repository, "show", "--end-of-options", f"{commit}:{path}"]))
        except ManifestError as exc:
            raise ManifestError(f"{where}: field base_commit: gold file {path} is not in {commit} of {repository} "
                                f"({exc})") from None
    return hashes


class NoSourceGoldError(GoldPatchError):
    """Under `declared_source` gold, a fix that edits no source file of the declared languages that
    existed before (it only adds files, or edits manifests and docs): not a localization task."""


class RowsLeftOutWarning(UserWarning):
    """Rows that are not tasks under the data set's gold rule, named."""


def _to_manifest_row(row: SweBenchRow, git: GitSources, where: str, declared: tuple[str, ...],
                     gold_files: GoldFiles, pin: RegistryPin | None = None) -> ManifestRow:
    files, spans = gold_from_patch(row.patch)
    if gold_files is GoldFiles.DECLARED_SOURCE:
        if not declared:
            raise GoldPatchError("gold_files: declared_source needs declared languages (the data set's or the row's)")
        files = [f for f in files if (lang := registry.language_of(f)) is not None and lang.name in declared]
        spans = [s for s in spans if s.path in files]
        if not files:
            raise NoSourceGoldError(f"the fix edits no {', '.join(declared)} file that existed before")
    if not files:
        raise GoldPatchError(f"the gold patch changes no non-test file that existed before"
                             f"{' in ' + ', '.join(declared) if gold_files is GoldFiles.DECLARED_SOURCE else ''}")
    task = Task(
        id=row.instance_id,
        text=row.problem_statement,
        subject=SubjectIdentity(repository=row.repo, revision=row.base_commit),
        languages=declared,
        metadata={"repo": row.repo, "split": row.split, "version": row.version, "created_at": row.created_at},
    )
    if pin is not None:
        missing = sorted(set(files) - set(pin.gold_file_sha256))
        if missing:
            raise GoldPatchError(f"its registry pin has no gold_file_sha256 for gold files {missing}")
        subject = pin.subject.model_copy(update={"verify_sha256": {f: pin.gold_file_sha256[f] for f in files}})
    elif row.subject is not None:
        missing = sorted(set(files) - set(row.gold_file_sha256 or {}))
        if missing:
            raise GoldPatchError(f"gold files without gold_file_sha256: {missing}")
        subject = PypiSubject(**row.subject.model_dump(exclude={"kind"}), verify_sha256=row.gold_file_sha256)
    else:
        repository = git.repository(row.repo, where)
        hashes = row.gold_file_sha256 or _gold_hashes(repository, row.base_commit, files, where)
        subject = GitSubject(repository=repository, revision=row.base_commit, verify_sha256=hashes)
    anchors = [a for a in hunk_anchors(row.patch) if a.path in files]
    return ManifestRow(task=task, subject=subject,
                       gold=Gold(files=files, spans=spans, anchors=anchors, rule=gold_rule(gold_files)))


def gold_rule(gold_files: GoldFiles) -> str:
    return GOLD_RULE if gold_files is GoldFiles.ALL_EDITED else f"{GOLD_RULE}; only the declared languages' source files"


def _declared(names: list[str] | None, where: str, field: str) -> tuple[str, ...]:
    try:
        return tuple(registry.named(n.lower()).name for n in names or ())
    except registry.UnknownLanguageError as exc:
        raise ManifestError(f"{where}: field {field}: {exc}") from None


def load_swebench(path: str | Path | None, name: str, version: str, description: str, git_mirrors: str | None,
                  clone_url: str | None, cache_dir: str | Path, path_setting: str = "dataset.loader.path",
                  row_format: str = RowFormat.SWEBENCH, languages: list[str] | None = None,
                  gold_files: str = GoldFiles.ALL_EDITED, subjects: str | Path | None = None) -> Manifest:
    """`path_setting`: what sets the rows file (the env var and the key), named when it is missing.
    `languages`: the data set's declared languages (a row's own `language` wins). `subjects`: a
    registry subset's pins file: only its rows are loaded, each from its pinned artifact."""
    if path is None:
        raise ManifestError(f"dataset {name}: no rows file: set {path_setting}")
    try:
        row_format, gold_files = RowFormat(row_format), GoldFiles(gold_files)
    except ValueError as exc:
        raise ManifestError(f"dataset {name}: {exc} (row_format: {[f.value for f in RowFormat]}, "
                            f"gold_files: {[g.value for g in GoldFiles]})") from None
    data_set_languages = _declared(languages, f"dataset {name}", "languages")
    path = Path(path)
    git = GitSources(git_mirrors, clone_url, cache_dir)
    pins = read_pins(subjects) if subjects is not None else None
    rows, left_out, pinned = [], [], set()
    for lineno, raw in _raw_rows(path, path_setting):
        where = f"{path}:{lineno}"
        if pins is not None and raw.get("instance_id") not in pins:
            continue  # a registry subset holds only its pinned rows
        try:
            parsed = SweBenchRow.model_validate(ROW_FORMATS[row_format](raw))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise ManifestError(f"{where}: field {field}: {first['msg']}") from None
        except ValueError as exc:
            raise ManifestError(f"{where}: {exc}") from None
        declared = _declared([parsed.language], where, "language") if parsed.language else data_set_languages
        if parsed.subject is not None and parsed.subject.kind != "pypi":
            raise ManifestError(f"{where}: field subject.kind: a pinned subject must be 'pypi' (a row without `subject` "
                                f"is a git subject), got {parsed.subject.kind!r}")
        pin = pins[parsed.instance_id][1] if pins is not None else None
        pinned.add(parsed.instance_id)
        try:
            rows.append(_to_manifest_row(parsed, git, where, declared, gold_files, pin))
        except NoSourceGoldError as exc:
            left_out.append(f"{parsed.instance_id} (row {lineno}: {exc})")
        except (GoldPatchError, ValidationError) as exc:
            raise ManifestError(f"{where}: field patch: {exc}") from None
    if pins is not None and (unknown := sorted(set(pins) - pinned)):
        lineno = pins[unknown[0]][0]
        raise ManifestError(f"{subjects}:{lineno}: field instance_id: {unknown[0]} is not a row of {path}"
                            f"{f' (nor are {len(unknown) - 1} more pins)' if len(unknown) > 1 else ''}")
    if left_out:
        warnings.warn(RowsLeftOutWarning(f"{path}: {len(left_out)} rows are not tasks under gold_files="
                                         f"{gold_files.value}: {'; '.join(left_out)}"), stacklevel=2)
    return build_manifest(name, version, description, gold_rule(gold_files), rows, str(path))
