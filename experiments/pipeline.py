"""One job: for each task and repeat, materialize -> localize (idempotent) -> score.

Localization and scoring are separate steps: a saved result is reused unless `force`, and
`localize=False` only scores what was saved (the rescoring command).
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from dataset.manifest import Manifest, ManifestRow
from dataset.subjects import SubjectStore
from locator.base import Locator
from locator.hashing import blake3_hex, canonical_json
from locator.repository import RepositoryView, UnknownFileError
from locator.result import LocalizationResult
from locator.runtime import localize
from locator.system_one.backend import Backend
from locator.system_one.cache import DecisionCache
from locator.system_one.client import Pricing, SystemOne
from locator.trace import Trace
from metrics.localization import score_task

RESULT_FILE = "localization-result.json"
TRACE_FILE = "trace.jsonl"


class NoSavedResultError(FileNotFoundError):
    pass


@dataclass(frozen=True)
class TaskOutcome:
    task_id: str
    repository: str
    split: str | None
    repeat: int
    status: Literal["ok", "failed"]
    reused: bool
    result_dir: Path
    scores: dict[str, float | None]
    error: str | None = None


class Job:
    """Everything a job builds once from its config and shares across its tasks."""

    def __init__(self, cfg: DictConfig, manifest: Manifest, locator_name: str):
        self.cfg = cfg
        self.manifest = manifest
        self.locator_name = locator_name
        self.locator: Locator = instantiate(cfg.locator)
        self.backend: Backend | None = instantiate(cfg.system_one.backend) if cfg.system_one else None
        cache_cfg = cfg.system_one.cache if cfg.system_one else None
        self.cache = DecisionCache(cache_cfg.path) if cache_cfg and cache_cfg.enabled else None
        self.store = SubjectStore(cfg.paths.cache_dir, Path(manifest.source).parent)

    @property
    def system_one_identity(self) -> str:
        return self.backend.identity if self.backend is not None else "none"

    @property
    def run_key(self) -> str:
        """Content address of the results: the locator's config and its inputs' identity (e.g. the
        hash of an imported file), the System One identity when the locator asks System One."""
        key = {"locator": OmegaConf.to_container(self.cfg.locator, resolve=True),
               "inputs": getattr(self.locator, "input_identity", None)}
        if getattr(self.locator, "uses_system_one", True):
            key["system_one"] = self.system_one_identity
        return f"{self.locator_name}-{blake3_hex(canonical_json(key))[:12]}"

    @property
    def results_dir(self) -> Path:
        dataset_dir = f"{self.manifest.header.name}-{self.manifest.content_hash[:12]}"
        return Path(self.cfg.paths.results_dir) / dataset_dir / self.run_key

    def run_task(self, row: ManifestRow, repeat: int, localize_missing: bool = True) -> TaskOutcome:
        out_dir = self.results_dir / row.task.id / f"r{repeat}"
        result_path = out_dir / RESULT_FILE
        reused = False
        try:
            repo = RepositoryView(self.store.materialize(row.subject, what=row.task.id))
            if result_path.is_file() and not (self.cfg.force and localize_missing):
                result, reused = LocalizationResult.read(result_path), True
            elif localize_missing:
                result = self._localize(row, repo, out_dir)
            else:
                raise NoSavedResultError(f"{row.task.id}: no saved result at {result_path}; run experiments.run first")
            if result.task != row.task.id or result.subject != row.task.subject:
                raise ValueError(f"{result_path}: result is for {result.task}@{result.subject}, not {row.task.id}")
            scores = score_task(result, row.gold, _source_reader(repo))
        except Exception as exc:  # noqa: BLE001 - a task failure is recorded, the sweep goes on
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            out_dir.mkdir(parents=True, exist_ok=True)
            (out_dir / "error.txt").write_text(traceback.format_exc(), encoding="utf-8")
            return TaskOutcome(row.task.id, *_origin(row), repeat, "failed", reused, out_dir, {}, detail)
        return TaskOutcome(row.task.id, *_origin(row), repeat, "ok", reused, out_dir, scores)

    def _localize(self, row: ManifestRow, repo: RepositoryView, out_dir: Path) -> LocalizationResult:
        trace = Trace()
        system_one = None
        if self.backend is not None:
            so = self.cfg.system_one
            system_one = SystemOne(self.backend, model=so.model, cache=self.cache, max_concurrency=so.max_concurrency,
                                   pricing=Pricing(**so.pricing) if so.get("pricing") else None)
        result = localize(self.locator, row.task, repo, system_one, trace)
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "error.txt").unlink(missing_ok=True)
        trace.write(out_dir / TRACE_FILE)
        result.write(out_dir / RESULT_FILE)
        return result


def _origin(row: ManifestRow) -> tuple[str, str | None]:
    split = row.task.metadata.get("split")
    return row.task.subject.repository, None if split is None else str(split)


def _source_reader(repo: RepositoryView):
    def source_of(path: str) -> str | None:
        try:
            return repo.unmetered_text(path)
        except (UnknownFileError, ValueError):
            return None

    return source_of
