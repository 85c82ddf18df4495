"""One job: for each task and repeat, materialize -> localize (idempotent) -> render -> score.

Localization and scoring are separate steps: a saved result is reused unless `force`, and
`localize=False` only scores what was saved (the rescoring command).
"""

from __future__ import annotations

import json
import time
import traceback
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Literal

from hydra.utils import instantiate
from omegaconf import DictConfig

from dataset.manifest import Manifest, ManifestRow
from dataset.subjects import source_reader
from experiments.job.production import RESULT_FILE, TRACE_FILE, NoSavedResultError, Producer, StaleResultError, line_count_in
from experiments.job.result_check import check_result
from experiments.job.review import reviewer
from locator.files import write_atomically
from locator.redact import redact
from locator.system_one.backend import Backend
from metrics.localization import score_task
from render.pack import render_pack
from render.settings import RenderSettings

__all__ = ["RESULT_FILE", "TRACE_FILE", "HarnessStage", "Job", "NoSavedResultError", "StaleResultError", "TaskOutcome"]


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
    code_identity: str | None = None  # digest of that code and its dependencies (CodeIdentity.digest)
    pack_text: str | None = None  # the result rendered as the agent's context pack
    seconds: dict[str, float] = field(default_factory=dict)  # wall time per HarnessStage
    adjustments: int = 0  # files or ranges of the result not in its subject, dropped or clipped (named as warnings)


REVIEW_FILE = "review.json"  # the evaluator's text, and its review or why it was rejected


class Job(Producer):
    """A job: the producer of its results (`experiments.job.production`), then each result rendered
    and scored — steps that re-run on saved results and are not part of their address."""

    def __init__(self, cfg: DictConfig, manifest: Manifest, locator_name: str, backend: Backend | None = None):
        super().__init__(cfg, manifest, locator_name, backend)
        self.render: RenderSettings = instantiate(cfg.render)
        self.explore_k: int = cfg.scoring.swe_explore_k
        self.reviewer = reviewer(cfg)  # None unless review=blind

    def run_task(self, task_id: str, repeat: int, localize_missing: bool = True) -> TaskOutcome:
        """One task: its result produced (`experiments.job.production`: saved, or localized in the worker),
        checked against its subject, rendered and scored. Named by its id: what is localized is the
        producer's own sealed copy of the task."""
        row = self.row(task_id)
        out_dir = self.result_dir(task_id, repeat)
        reused = False
        clock = StageClock()
        try:
            produced = self.produce(task_id, repeat, localize_missing, clock=lambda stage: clock(HarnessStage(stage)))
            result, repo, gold, reused = produced.result, produced.repo, produced.gold, produced.reused
            result, notes = check_result(result, line_count_in(repo), out_dir / RESULT_FILE)
            for note in notes:
                warnings.warn(note, ResultAdjustedWarning, stacklevel=2)
            source_of = source_reader(repo.root)
            with clock(HarnessStage.RENDER):
                pack = render_pack(result, source_of, self.render)  # the saved result, never re-localized
            with clock(HarnessStage.SCORE):
                scores = score_task(result, gold, source_of, pack, self.explore_k)
                if self.reviewer is not None:  # blind: the evaluator sees the pack, never the gold
                    review, record = self.reviewer.review(row.task, pack.text, repo)
                    scores |= review
                    write_atomically(out_dir / REVIEW_FILE, json.dumps(record, indent=1))
        except Exception as exc:  # noqa: BLE001 - a task failure is recorded, the sweep goes on
            detail = redact("".join(traceback.format_exception_only(type(exc), exc)).strip())
            worker = getattr(exc, "worker_traceback", None)  # localized in the worker: its traceback too
            try:
                write_atomically(out_dir / "error.txt", redact(traceback.format_exc()
                                                               + (f"\nin the localization worker:\n{worker}" if worker else "")))
            except OSError:  # the disk that refused the result refuses this too: the outcome still says why
                pass
            return TaskOutcome(row.task.id, *_origin(row), repeat, "failed", reused, out_dir, {}, detail,
                               seconds=clock.seconds)
        code = result.provenance.code
        return TaskOutcome(row.task.id, *_origin(row), repeat, "ok", reused, out_dir, scores,
                           produced_at=code.git_revision + ("-dirty" if code.dirty else ""),
                           code_identity=code.digest, pack_text=pack.text, seconds=clock.seconds,
                           adjustments=len(notes))


class ResultAdjustedWarning(UserWarning):
    """A saved result's file or range that is not in its subject, dropped or clipped before scoring."""


def _origin(row: ManifestRow) -> tuple[str, str | None]:
    split = row.task.metadata.get("split")
    return row.task.subject.repository, None if split is None else str(split)
