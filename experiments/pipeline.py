"""One job: for each task and repeat, materialize -> localize (idempotent) -> render -> score.

Localization and scoring are separate steps: a saved result is reused unless `force`, and
`localize=False` only scores what was saved (the rescoring command).
"""

from __future__ import annotations

import time
import traceback
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Literal

from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf
from pydantic import ValidationError

from dataset.gold import check_gold
from dataset.manifest import Manifest, ManifestRow
from dataset.subjects import SubjectStore, source_reader
from experiments.identity import code_identity
from locator.base import Locator
from locator.hashing import blake3_hex, canonical_json
from locator.outline import keep_on_disk as keep_outlines_on_disk
from locator.redact import redact
from locator.repository import PathOutsideSubjectError, RepositoryView, UnknownFileError
from locator.result import LocalizationResult, Provenance
from locator.runtime import localize
from locator.system_one.backend import Backend
from locator.system_one.cache import DecisionCache
from locator.system_one.client import Pricing, SystemOne
from locator.trace import Trace
from metrics.localization import score_task
from render.pack import render_pack
from render.settings import RenderSettings

RESULT_FILE = "localization-result.json"
TRACE_FILE = "trace.jsonl"


class HarnessStage(StrEnum):
    """Where a job's wall time goes: the locator's own work, and loclab's around it."""

    SUBJECT = "subject"  # materialize and verify the subject, check the gold against it
    LOCALIZE = "localize"  # the locator (0 for a reused result)
    RENDER = "render"
    SCORE = "score"
    TRACE = "trace"  # the task's System One calls logged as an MLflow trace, as the task ends


class StageClock:
    """Wall time per stage of one task: `with clock(HarnessStage.SCORE): ...`."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, stage: HarnessStage):
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[stage.value] = self.seconds.get(stage.value, 0.0) + time.perf_counter() - started


class NoSavedResultError(FileNotFoundError):
    pass


class StaleResultError(ValueError):
    """A saved result whose provenance does not match the address it was found at."""


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
    produced_at: str | None = None  # git revision (+"-dirty") of the code that produced the result
    code_identity: str | None = None  # source hash of that code
    pack_text: str | None = None  # the result rendered as the agent's context pack
    seconds: dict[str, float] = field(default_factory=dict)  # wall time per HarnessStage


class Job:
    """Everything a job builds once from its config and shares across its tasks."""

    def __init__(self, cfg: DictConfig, manifest: Manifest, locator_name: str, backend: Backend | None = None):
        """`backend`: System One to use instead of the configured one (a replay's decision snapshot)."""
        self.cfg = cfg
        self.manifest = manifest
        self.locator_name = locator_name
        self.locator: Locator = instantiate(cfg.locator)
        check_inputs = getattr(self.locator, "check_inputs", None)
        if check_inputs is not None:
            check_inputs()  # a bad input fails the job before any subject is fetched
        self.backend: Backend | None = backend or (instantiate(cfg.system_one.backend) if cfg.system_one else None)
        cache_cfg = cfg.system_one.cache if cfg.system_one else None
        self.cache = DecisionCache(cache_cfg.path) if cache_cfg and cache_cfg.enabled else None
        self.store = SubjectStore(cfg.paths.cache_dir, Path(manifest.source).parent)
        keep_outlines_on_disk(Path(cfg.paths.cache_dir) / "outlines")  # render and score parse the same files every job
        self.render: RenderSettings = instantiate(cfg.render)

    @property
    def system_one_identity(self) -> str:
        return self.backend.identity if self.backend is not None else "none"

    @property
    def uses_system_one(self) -> bool:
        return getattr(self.locator, "uses_system_one", True)

    @cached_property
    def run_key(self) -> str:
        """Content address of the results: the locator's config, the source of the code that
        localizes (`experiments.identity`), its inputs' identity (e.g. the hash of an imported
        file), and the System One identity when the locator asks System One. Computed once per job:
        it hashes the config and any input file, and every task asks for it."""
        key = {"locator": OmegaConf.to_container(self.cfg.locator, resolve=True),
               "code": code_identity().source_blake3,
               "inputs": getattr(self.locator, "input_identity", None)}
        if self.uses_system_one:
            key["system_one"] = self.system_one_identity
        return f"{self.locator_name}-{blake3_hex(canonical_json(key))[:12]}"

    def provenance(self) -> Provenance:
        return Provenance(code=code_identity(), run_key=self.run_key,
                          system_one=self.system_one_identity if self.uses_system_one else None)

    @property
    def results_dir(self) -> Path:
        dataset_dir = f"{self.manifest.header.name}-{self.manifest.content_hash[:12]}"
        return Path(self.cfg.paths.results_dir) / dataset_dir / self.run_key

    def run_task(self, row: ManifestRow, repeat: int, localize_missing: bool = True) -> TaskOutcome:
        out_dir = self.results_dir / row.task.id / f"r{repeat}"
        result_path = out_dir / RESULT_FILE
        reused = False
        clock = StageClock()
        try:
            with clock(HarnessStage.SUBJECT):
                repo = RepositoryView(self.store.materialize(row.subject, what=row.task.id),
                                      frozen=self.store.frozen(row.subject),
                                      listing_dir=self.store.derived_dir(row.subject))
                check_gold(row.gold, _line_count_in(repo), what=row.task.id)
            saved = self._saved(result_path, localize_missing)
            if saved is not None:
                result, reused = saved, True
            elif localize_missing:
                with clock(HarnessStage.LOCALIZE):
                    result = self._localize(row, repo, out_dir)
            else:
                raise NoSavedResultError(f"{row.task.id}: no saved result at {result_path}; run experiments.run first")
            if result.task != row.task.id or result.subject != row.task.subject:
                raise ValueError(f"{result_path}: result is for {result.task}@{result.subject}, not {row.task.id}")
            source_of = source_reader(repo.root)
            with clock(HarnessStage.RENDER):
                pack = render_pack(result, source_of, self.render)  # the saved result, never re-localized
            with clock(HarnessStage.SCORE):
                scores = score_task(result, row.gold, source_of, pack)
        except Exception as exc:  # noqa: BLE001 - a task failure is recorded, the sweep goes on
            detail = redact("".join(traceback.format_exception_only(type(exc), exc)).strip())
            out_dir.mkdir(parents=True, exist_ok=True)
            (out_dir / "error.txt").write_text(redact(traceback.format_exc()), encoding="utf-8")
            return TaskOutcome(row.task.id, *_origin(row), repeat, "failed", reused, out_dir, {}, detail,
                               seconds=clock.seconds)
        code = result.provenance.code
        return TaskOutcome(row.task.id, *_origin(row), repeat, "ok", reused, out_dir, scores,
                           produced_at=code.git_revision + ("-dirty" if code.dirty else ""),
                           code_identity=code.source_blake3, pack_text=pack.text, seconds=clock.seconds)

    def _saved(self, path: Path, localize_missing: bool) -> LocalizationResult | None:
        """The result saved at this address, if it may be reused. An unreadable one is rebuilt
        (with a warning) when localizing, and an error naming the file when only scoring."""
        if not path.is_file() or (self.cfg.force and localize_missing):
            return None
        try:
            result = LocalizationResult.read(path)
        except (ValidationError, ValueError, OSError) as exc:
            if not localize_missing:
                raise StaleResultError(f"{path}: saved result is unreadable ({type(exc).__name__}); "
                                       "rebuild it with experiments.run force=true") from None
            warnings.warn(f"{path}: saved result is unreadable ({type(exc).__name__}); localizing again", stacklevel=2)
            return None
        if result.provenance is None or result.provenance.run_key != self.run_key:
            found = result.provenance.run_key if result.provenance else "none"
            raise StaleResultError(f"{path}: saved result was produced for address {found}, not {self.run_key}; "
                                   "it was moved or copied — delete it or run with force=true")
        return result

    def _localize(self, row: ManifestRow, repo: RepositoryView, out_dir: Path) -> LocalizationResult:
        trace = Trace()
        system_one = None
        if self.backend is not None:
            so = self.cfg.system_one
            system_one = SystemOne(self.backend, model=so.model, cache=self.cache, max_concurrency=so.max_concurrency,
                                   pricing=Pricing(**so.pricing) if so.get("pricing") else None)
        result = localize(self.locator, row.task, repo, system_one, trace)
        result = result.model_copy(update={"provenance": self.provenance()})
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "error.txt").unlink(missing_ok=True)
        trace.write(out_dir / TRACE_FILE)
        result.write(out_dir / RESULT_FILE)
        return result


def _origin(row: ManifestRow) -> tuple[str, str | None]:
    split = row.task.metadata.get("split")
    return row.task.subject.repository, None if split is None else str(split)


def _line_count_in(repo: RepositoryView):
    def line_count(path: str) -> int | None:
        try:
            return repo.stat(path).line_count
        except (UnknownFileError, PathOutsideSubjectError):
            return None

    return line_count
