"""SWE-Explore's ground truth as a data set: its bench rows -> a loclab manifest with tiered gold.

SWE-Explore (arXiv 2606.07297) builds its ground truth from the trajectories of agents that solved an
issue: `read_core_regions` (read by them all) become loclab's gold spans, the core tier;
`read_optional_regions_map` (read by some, per model) the optional tier, every model's list
concatenated with repeats kept, as its evaluator reads them; `read_core_files`, the union of
`read_optional_files_map` and `main_files` (read and modified) as they are. The task text is the
row's `problem_statement` alone: the patch, the tests and the trajectories' read steps never reach a
locator. Subjects are each repository at `base_commit` from git mirrors (`LOCLAB_GIT_MIRRORS`) or a
clone, every core file checked by its sha256 there.

Rows left out, and named (a warning): a row without core regions (SWE-Explore drops them too,
`--skip-empty-core`); a row whose core region is not a line range loclab's gold can hold (an end of
-1, a negative start, an inverted range: SWE-Explore resolves those per metric, which a gold span
does not); a row whose core file is not in its base commit.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dataset.manifest import GitSubject, Gold, GoldSpan, Manifest, ManifestError, ManifestRow, RepositoryName, Revision, \
    TierRegion, build_manifest
from dataset.swebench import GitSources, RowsLeftOutWarning, _gold_hashes, _raw_rows
from locator.task import SubjectIdentity, Task

GOLD_RULE = ("swe-explore: core regions (read by every agent trajectory that solved the issue) are the gold spans; "
             "optional regions (read by some) the optional tier; main files are read and modified")


class _Region(BaseModel):
    model_config = ConfigDict(extra="ignore")
    path: str = Field(min_length=1)
    start: int
    end: int


class ExploreGroundTruth(BaseModel):
    model_config = ConfigDict(extra="ignore")
    read_core_files: list[str] = Field(default_factory=list)
    read_core_regions: list[_Region] = Field(default_factory=list)
    read_optional_files_map: dict[str, list[str]] | None = None
    read_optional_regions_map: dict[str, list[_Region]] | None = None
    main_files: list[str] = Field(default_factory=list)


class ExploreRow(BaseModel):
    model_config = ConfigDict(extra="ignore")
    instance_id: str = Field(min_length=1)
    repo: RepositoryName
    base_commit: Revision
    problem_statement: str = Field(min_length=1)
    ground_truth: ExploreGroundTruth
    dataset: str | None = None  # SWE-Explore's source benchmark (verified, multilingual, …)


class LeftOut(ValueError):
    """A row that is not a task loclab can score; the message says why."""


def _gold(truth: ExploreGroundTruth) -> Gold:
    if not truth.read_core_regions:
        raise LeftOut("no core regions (SWE-Explore skips such rows too)")
    odd = [r for r in truth.read_core_regions if r.start < 1 or r.end < r.start]
    if odd:
        raise LeftOut(f"core region {odd[0].path} {odd[0].start}..{odd[0].end} is not a line range a gold span holds")
    files = list(dict.fromkeys([*truth.read_core_files, *(r.path for r in truth.read_core_regions)]))
    optional = truth.read_optional_regions_map
    return Gold(
        files=files,
        spans=[GoldSpan(path=r.path, start_line=r.start, end_line=r.end, region=i) for i, r in enumerate(truth.read_core_regions)],
        rule=GOLD_RULE,
        optional_regions=None if optional is None else [TierRegion(path=r.path, start=r.start, end=r.end)
                                                        for regions in optional.values() for r in regions],
        optional_files=None if truth.read_optional_files_map is None else
        sorted({f for files in truth.read_optional_files_map.values() for f in files}),
        main_files=list(truth.main_files),
    )


def load_swe_explore(path: str | Path | None, name: str, version: str, description: str, git_mirrors: str | None,
                     clone_url: str | None, cache_dir: str | Path, path_setting: str = "dataset.loader.path") -> Manifest:
    if path is None:
        raise ManifestError(f"dataset {name}: no rows file: set {path_setting}")
    path = Path(path)
    git = GitSources(git_mirrors, clone_url, cache_dir)
    rows, left_out = [], []
    for lineno, raw in _raw_rows(path, path_setting):
        where = f"{path}:{lineno}"
        try:
            row = ExploreRow.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ManifestError(f"{where}: field {'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None
        try:
            gold = _gold(row.ground_truth)
            repository = git.repository(row.repo, where)
            try:
                hashes = _gold_hashes(repository, row.base_commit, gold.files, where)
            except ManifestError as exc:
                raise LeftOut(str(exc).removeprefix(f"{where}: ")) from None
        except LeftOut as exc:
            left_out.append(f"{row.instance_id} (row {lineno}: {exc})")
            continue
        task = Task(id=row.instance_id, text=row.problem_statement,
                    subject=SubjectIdentity(repository=row.repo, revision=row.base_commit),
                    metadata={"repo": row.repo, "source_benchmark": row.dataset})
        rows.append(ManifestRow(task=task, subject=GitSubject(repository=repository, revision=row.base_commit,
                                                             verify_sha256=hashes), gold=gold))
    if left_out:
        warnings.warn(RowsLeftOutWarning(f"{path}: {len(left_out)} rows are not tasks: {'; '.join(left_out)}"), stacklevel=2)
    return build_manifest(name, version, description, GOLD_RULE, rows, str(path))
