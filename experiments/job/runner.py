"""One job or one sweep job, every stage: localize (or reuse), render, score, and log it all to MLflow as one
run. `python -m experiments.run` (and `.render`, `.score`) call `run_or_exit` with their stage."""

from __future__ import annotations

import dataclasses
import gc
import os
import resource
import shutil
import signal
import socket
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from enum import StrEnum
from pathlib import Path

import mlflow
import pandas as pd
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from hydra.utils import instantiate
from mlflow.tracking import MlflowClient
from omegaconf import DictConfig
from tqdm import tqdm

from experiments.job.gc_tuning import tune_gc
from experiments.tracking.metric_keys import ci_tag, language_metric_key, logged_value, metric_key
from experiments.tracking.traces import flush_traces, log_task_trace
from experiments.job.paths import PROJECT_ROOT, git_revision, register_resolvers
from experiments.job.pipeline import RESULT_FILE, TRACE_FILE, HarnessStage, Job, TaskOutcome
from experiments.job.production import spawn_worker
from experiments.job.record import DECISIONS_ARTIFACT, HYDRA_ARTIFACTS, RESULTS_ARTIFACT
from experiments.job.report import (HEADLINE_COST, HEADLINE_QUALITY, SUMMARY_METRICS, by_language, headline_figure,
                                job_description, per_task_frame, print_summary)
from experiments.tracking.sweep_summary import BEST_BY
from experiments.job.sweep_worker import end_with_the_sweep, mark_killed, on_stop_signals, working_for
from experiments.job.telemetry import file_telemetry, job_telemetry
from experiments.tracking.links import run_page
from experiments.tracking.store import (
    PARENT_RUN_ENV, SWEPT_ENV, TrackingUnreachableError, close_stale_runs, ensure_experiment, finished_job, flatten,
    job_run_name, swept_params, tracking_uri, ui_address, ui_command, unreachable,
)
from experiments.tracking.vocabulary import MlflowTag, RunKind, Tag
from dataset.manifest import ManifestError
from locator.hashing import blake3_hex, canonical_json
from locator.extras import MissingExtraError
from locator.imported import ImportedResultError
from locator.system_one.cache import DecisionCacheError
from locator.system_one.local_llm import LocalModelError
from locator.system_one.transport import SystemOneUnavailableError
from locator.system_one.wire import GenerationUnsupportedError
from locator.redact import redact
from locator.result import LocalizationResult
from render.page import pack_page
from locator.system_one.snapshot import decisions_from_trace, write_snapshot
from locator.trace import read_trace
from metrics.aggregate import CI_METHOD, REPEAT_REDUCTION, aggregate

register_resolvers()

PARAM_GROUPS = ("dataset", "locator", "system_one", "render", "scoring", "review", "repeats", "force", "limit", "tasks", "split",
                "allow_failed_tasks", "concurrency", "sampling")
EXIT_TASKS_FAILED = 3
EXIT_BAD_INPUT = 2  # as argparse: the command was given something it cannot run
EXIT_TRACKING_LOST = 4  # the tracking server stopped answering mid-job


class Stage(StrEnum):
    LOCALIZE = "localize+score"  # localize what has no saved result, render, score
    SCORE = "score"  # saved results only: render and score
    RENDER = "render"  # saved results only, for a render sweep (`experiments.render`)


class JobConfigError(ValueError):
    """A job setting that cannot run (repeats < 1, …); the message names the setting."""


class TasksFailedError(RuntimeError):
    """Some task of the job failed: the job is FAILED (exit 3) unless allow_failed_tasks=true."""


# Errors that mean the user's settings or data are wrong (each message names the file, row, field or
# setting): a single job prints one line and exits 2 instead of a traceback.
INPUT_ERRORS = (ManifestError, JobConfigError, ImportedResultError, LocalModelError, GenerationUnsupportedError,
                TrackingUnreachableError, DecisionCacheError, SystemOneUnavailableError, MissingExtraError)


def _log_metrics(scores: dict[str, float | None]) -> None:
    mlflow.log_metrics({metric_key(k): logged_value(v) for k, v in scores.items() if v is not None})


# How a store says another job inserted the same row first: SQLite, PostgreSQL (directly or through
# an `mlflow server`).
_LOST_INSERT_RACE = ("UNIQUE constraint failed", "duplicate key value violates unique constraint")


def _log_input(dataset) -> None:
    """Parallel jobs of a sweep register the same dataset at once; the store (SQLite, PostgreSQL) lets
    one insert win and the others fail on the unique key, after which the row exists and a retry links it."""
    for attempt in range(5):
        try:
            mlflow.log_input(dataset, context="evaluation")
            return
        except mlflow.exceptions.MlflowException as exc:
            if not any(sign in str(exc) for sign in _LOST_INSERT_RACE) or attempt == 4:
                raise
            time.sleep(0.2 * (attempt + 1))


def _log_task(outcome, stage: Stage) -> None:
    status = "FINISHED" if outcome.status == "ok" else "FAILED"
    with mlflow.start_run(run_name=f"{outcome.task_id}/r{outcome.repeat}", nested=True,
                          tags={Tag.KIND: RunKind.TASK, Tag.TASK_ID: outcome.task_id, Tag.STAGE: stage.value}):
        mlflow.log_param("repeat", outcome.repeat)
        mlflow.set_tag(Tag.REUSED_RESULT, str(outcome.reused).lower())
        if outcome.error:
            mlflow.set_tag(Tag.ERROR, outcome.error[:4000])
        _log_metrics(outcome.scores)
        mlflow.end_run(status=status)


def _positive(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _check(cfg: DictConfig) -> None:
    """Settings that cannot run fail the job before any subject is fetched."""
    if not _positive(cfg.repeats):
        raise JobConfigError(f"repeats must be a positive number of repeats per task, got {cfg.repeats!r}")
    if not _positive(cfg.concurrency.tasks):
        raise JobConfigError(f"concurrency.tasks must be a positive number of tasks in flight, "
                             f"got {cfg.concurrency.tasks!r}")
    if not _positive(cfg.tracking.trace_span_batch):
        raise JobConfigError(f"tracking.trace_span_batch must be a positive number of spans, "
                             f"got {cfg.tracking.trace_span_batch!r}")


def decided_by(job: Job) -> str | None:
    """Who made the job's System One decisions, said plainly: the lexical backend is word overlap
    and cannot judge actions described by geometry alone; any other backend is named by its model."""
    if not job.uses_system_one or job.backend is None:
        return None
    if job.system_one_identity.startswith("lexical"):
        return "System One: the lexical backend (word overlap: it cannot read, so it cannot judge geometry-only actions)"
    return f"System One: {job.cfg.system_one.model}"


def _job_key(job: Job, rows, cfg: DictConfig, stage: Stage) -> str:
    """What makes two job runs the same job: results address, task set, stage, and every setting the
    job logs as a param (the selection as asked: `limit=13` and `limit=16` over 13 tasks select the
    same tasks but are two jobs of a sweep, each its own row; render settings: a render sweep reuses
    one localization for every setting). A resumed sweep's job has the same settings, so the same key."""
    selection = {"tasks": [r.task.id for r in rows], "stage": stage.value, "settings": flatten(cfg, PARAM_GROUPS)}
    return blake3_hex(canonical_json({"run_key": job.run_key, "manifest": job.manifest.content_hash, **selection}))[:16]


def _gc_collections() -> int:
    return sum(generation["collections"] for generation in gc.get_stats())


def process_measures() -> dict[str, float]:
    """The job's process: its peak RSS and the hit rate of each content cache it used (a file's
    tokens and chunks, a word's tokens, a text's token count). Process-wide: a sweep worker that ran
    jobs before counts theirs too, as it holds their memory and their cached entries."""
    from locator.retrieval.documents import memo_lookups
    from locator.system_one.tokens import count_lookups
    from locator.text import word_lookups

    measures = {"process_peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    for name, (hits, misses) in (memo_lookups() | {"words": word_lookups(), "token_counts": count_lookups()}).items():
        if hits + misses:
            measures[f"process_{name}_cache_hit_rate"] = hits / (hits + misses)
    return measures


def run_job(cfg: DictConfig, stage: Stage) -> None:
    started, cpu_started = time.perf_counter(), time.process_time()
    tune_gc()
    end_with_the_sweep()
    localize_missing = stage is Stage.LOCALIZE
    choices = HydraConfig.get().runtime.choices
    locator_name = choices["locator"]
    experiment_id = ensure_experiment(cfg.tracking)
    if os.environ.get("MLFLOW_EXPERIMENT_ID") != experiment_id:  # what set_experiment sets, and MLflow reads
        # nested task runs inherit it. Set once per experiment, not per job: each call retires MLflow's
        # tracer provider, whose flush waits up to a second for its export thread (a stall per sweep job)
        mlflow.set_experiment(experiment_id=experiment_id)
    parent = os.environ.get(PARENT_RUN_ENV)
    spawned = None
    try:  # an error here is recorded in the job's own (FAILED) run below
        _check(cfg)
        # read by MLflow when this process's first span starts
        os.environ["MLFLOW_ASYNC_TRACE_LOGGING_MAX_SPAN_BATCH_SIZE"] = str(cfg.tracking.trace_span_batch)
        spawned = spawn_worker(cfg) if localize_missing else None  # it imports while the job builds itself
        manifest = instantiate(cfg.dataset.loader)
        job = Job(cfg, manifest, locator_name)
        rows = manifest.select(cfg.tasks or None, cfg.limit, cfg.split)
        if spawned is not None:
            job.start_worker(spawned)
        job_key, setup_error = _job_key(job, rows, cfg, stage), None
    except Exception as exc:  # noqa: BLE001
        if spawned is not None:
            spawned.close()
        if not parent and _input_error(exc) is not None:
            # a single job given settings or data it cannot run (a task id, a value, a path mistyped)
            # never started: one line and exit 2, and no FAILED run left in the experiment for a typo.
            # A sweep's job records it in its FAILED run, so the sweep's table says which setting failed.
            raise
        manifest = job = rows = job_key = None
        setup_error = exc
    client = MlflowClient()
    for killed in close_stale_runs(client, experiment_id):
        print(f"marked KILLED: run {killed}, left RUNNING by a process that is gone")
    if job_key is not None:
        if parent:
            done = finished_job(client, experiment_id, parent, job_key)
            if done is not None:
                print(f"already finished in this sweep (run {done}): not run again")
                job.close()
                return
    tags = {Tag.KIND: RunKind.JOB, Tag.STAGE: stage.value, Tag.LOCATOR: locator_name,
            Tag.PRODUCER: redact(str(cfg.locator.get("system") or "loclab")),
            Tag.DATASET: cfg.dataset.name, Tag.GIT_REVISION: git_revision(),
            Tag.REPEAT_REDUCTION: REPEAT_REDUCTION, Tag.CI_METHOD: CI_METHOD,
            Tag.HOST: socket.gethostname(), Tag.PID: str(os.getpid())}
    overrides = list(HydraConfig.get().overrides.task)
    tags[Tag.OVERRIDES] = redact(" ".join(overrides))[:4000]
    if job is not None:
        tags |= {Tag.CODE_IDENTITY: job.code.digest, Tag.CODE_DIRTY: str(job.code.dirty).lower(),
                 Tag.DEPENDENCIES: job.code.versions()[:4000], Tag.PYTHON: job.code.python}
    if job_key is not None:
        tags[Tag.JOB_KEY] = job_key
    if parent:
        tags[MlflowTag.PARENT_RUN_ID] = parent
        tags[Tag.SWEEP_JOB] = str(HydraConfig.get().job.num)  # launch order: job 0 is every param's first value
    swept = tuple(k for k in os.environ.get(SWEPT_ENV, "").split(",") if k) if parent else ()
    run_name = redact(job_run_name(locator_name, cfg.dataset.name, overrides, swept))[:250]
    with mlflow.start_run(experiment_id=experiment_id, run_name=run_name, tags=tags) as active:
        working_for(active.info.run_id, mlflow.get_tracking_uri())
        stop_signals = _killed_on_stop_signals(active.info.run_id)
        try:
            mlflow.log_params(swept_params(overrides, swept) | flatten(cfg, PARAM_GROUPS))  # the swept ones first
            if setup_error is not None:
                raise setup_error
            try:
                _run(cfg, job, manifest, rows, locator_name, stage, localize_missing, started, cpu_started)
            finally:
                job.close()
        except BaseException as exc:
            mlflow.set_tag(Tag.ERROR, redact(f"{type(exc).__name__}: {exc}")[:4000])
            mlflow.log_text(redact(traceback.format_exc()), "error.txt")
            if isinstance(exc, (SystemExit, KeyboardInterrupt)):
                mlflow.end_run(status="KILLED")  # stopped from outside: a rerun resumes it
            raise  # otherwise the run ends FAILED
        finally:
            working_for(None)
            for signum in stop_signals:
                signal.signal(signum, signal.SIG_DFL)


def _killed_on_stop_signals(run_id: str) -> tuple[signal.Signals, ...]:
    """A job stopped with SIGTERM (`kill`, `timeout`, a scheduler) or SIGHUP (the terminal it ran in
    closed, an ssh session dropped) ends its run KILLED at once, itself: by default either signal ended
    the process with the run RUNNING until the next job on the host marked it. The run is closed from
    the handler and the process ends there (as the sweep watcher does): raised as an exception, the
    stop waited for the tasks in flight, minutes with a model. A handler set already is kept (a
    sweep's main process turns both into its exit, closing the job KILLED). Returns the signals handled."""
    uri = mlflow.get_tracking_uri()

    def stop(signum: int, frame) -> None:
        try:
            mark_killed(MlflowClient(tracking_uri=uri), run_id,
                        f"stopped by {signal.Signals(signum).name}; a rerun resumes it")
        finally:
            os._exit(128 + signum)

    return on_stop_signals(stop)


def _run(cfg: DictConfig, job: Job, manifest, rows, locator_name: str, stage: Stage, localize_missing: bool,
         started: float, cpu_started: float) -> None:
    """The job's body. Its wall time is logged by harness stage (`7 harness/…_s`: setup, each task
    stage summed over tasks, logging), so loclab's own overhead is measured on every run. Beside it
    the process's CPU time over the job (`job_cpu_s`, every thread's, an embedded model's included):
    a job paused (SIGSTOP, a busy shared machine) gains wall time, not CPU time."""
    collections_before = _gc_collections()
    mlflow.set_tags({Tag.MANIFEST_HASH: manifest.content_hash, Tag.RUN_KEY: job.run_key,
                     Tag.DECIDED_BY: decided_by(job) or "no model (the locator asks no System One)",
                     Tag.MANIFEST_SOURCE: redact(str(manifest.source)),
                     Tag.SYSTEM_ONE_IDENTITY: redact(job.system_one_identity),
                     Tag.RESULTS_DIR: str(job.results_dir)})
    if job.reviewer is not None:
        mlflow.set_tag(Tag.REVIEWER, redact(job.reviewer.identity))
    with warnings.catch_warnings():
        # MLflow registers two equivalent local-file source types and warns that it picked one.
        warnings.filterwarnings("ignore", message="The specified dataset source can be interpreted")
        dataset = mlflow.data.from_pandas(pd.DataFrame({"task_id": [r.task.id for r in rows]}), source=manifest.source,
                                          name=manifest.header.name, digest=manifest.content_hash[:36])
    _log_input(dataset)
    if localize_missing:  # a worker that could not build the locator or System One fails the job, not each task
        job.start_worker().wait_ready()
    work = [(row.task.id, repeat) for row in rows for repeat in range(cfg.repeats)]
    tasks_started = time.perf_counter()
    tracing = threading.Lock()
    # a trace says which job and setting it came from: the Traces tab lists traces of every job together
    active = mlflow.active_run()
    trace_metadata = {Tag.JOB_RUN: active.info.run_id, Tag.LOCATOR: locator_name,
                      Tag.OVERRIDES: redact(" ".join(HydraConfig.get().overrides.task))}

    def trace(outcome: TaskOutcome) -> TaskOutcome:
        # as each task ends, so a job with tasks in flight logs its traces while others wait on System One
        if not (cfg.tracking.traces and outcome.status == "ok" and (outcome.result_dir / TRACE_FILE).is_file()):
            return outcome
        started = time.perf_counter()
        with tracing:
            log_task_trace(outcome.task_id, outcome.repeat, outcome.result_dir / TRACE_FILE, active.info.run_name,
                           trace_metadata)
        seconds = outcome.seconds | {HarnessStage.TRACE.value: time.perf_counter() - started}
        return dataclasses.replace(outcome, seconds=seconds)

    outcomes = _run_tasks(job, work, localize_missing, cfg.concurrency.tasks, f"{locator_name} on {cfg.dataset.name}",
                          trace)
    if cfg.tracking.traces:
        # the spans wait in MLflow's batch and its export queue; flushed while the job runs, since at
        # interpreter exit Python 3.12 refuses the queue its thread and every trace of the job was lost
        flush_traces()
    tasks_done = time.perf_counter()
    for outcome in outcomes:  # logged in task order, whatever order they finished in
        if cfg.tracking.task_runs:
            _log_task(outcome, stage)

    frame = per_task_frame(outcomes)
    ok = frame[frame.status == "ok"]
    summary = aggregate(ok) if len(ok) else pd.DataFrame()
    counts = {"total": len(frame), "ok": len(ok), "failed": int((frame.status == "failed").sum()),
              "reused": int(frame.reused.sum())}
    # the splits the tasks are in (dev, test): a sweep prints `calibrate`, which chooses on one and reports on another, only with them
    mlflow.set_tag(Tag.SPLITS, ",".join(sorted({str(s) for s in frame.split.dropna() if str(s)})))
    produced = sorted(set(ok.produced_at.dropna()))
    mlflow.set_tag(Tag.RESULTS_PRODUCED_AT, ",".join(produced)[:4000])
    _log_record(outcomes, job)
    mlflow.log_table(frame, "per_task.json")
    mlflow.log_text(frame.to_csv(index=False), "per_task.csv")
    if len(summary):
        mlflow.log_text(summary.to_csv(), "aggregate.csv")
        # the run page lists metrics as they were logged, and Compare plots the first one its runs share:
        # what sweeps rank by first, then the headline quality and cost, then by section
        means = {metric_key(name): row["mean"] for name, row in summary.iterrows()}
        lead = list(dict.fromkeys(metric_key(name) for name in (BEST_BY[0], *HEADLINE_QUALITY, *HEADLINE_COST)))
        order = sorted(means, key=lambda k: (k not in lead, lead.index(k) if k in lead else 0, k))
        mlflow.log_metrics({k: logged_value(means[k]) for k in order if means[k] is not None and means[k] == means[k]})
        _log_languages(by_language(frame))
        if cfg.repeats > 1:  # the spread over repeats and their agreement, charted on the run (`6 repeats/…`)
            from experiments.analysis.repeatability import spread_metrics

            mlflow.log_metrics(spread_metrics(frame, HEADLINE_QUALITY))
        mlflow.set_tag(Tag.CI95, ci_tag({name: (float(row.ci95_low), float(row.ci95_high), int(row.clusters)) for name, row in summary.iterrows()
                                       if name in SUMMARY_METRICS and _number(row.ci95_low) and _number(row.ci95_high)}))
        decider = decided_by(job)
        title = f"{locator_name} on {cfg.dataset.name} ({manifest.content_hash[:12]})" + (f" — {decider}" if decider else "")
        print_summary(title, summary, counts)
        figure = headline_figure(title, summary)
        mlflow.log_figure(figure, "headline_metrics.png")
        mlflow.set_tag(MlflowTag.DESCRIPTION, redact(job_description(
            f"{locator_name} on {cfg.dataset.name}, {stage.value} (manifest {manifest.content_hash[:12]})"
            + (f"; {decider}" if decider else ""), summary,
            counts, [o for o in HydraConfig.get().overrides.task if not o.startswith("hydra.")],
            mlflow.active_run().info.run_id, repeats=cfg.repeats)))
    mlflow.log_metrics({metric_key(f"tasks.{k}"): v for k, v in counts.items()})
    # beside SWE-Explore's means, as its evaluator has them: a task that failed is skipped (not scored 0),
    # an empty prediction is scored and counted
    mlflow.log_metrics({metric_key("swe_explore.instances_scored"): counts["ok"],
                        metric_key("swe_explore.instances_skipped"): counts["failed"]})
    _log_telemetry(outcomes)
    finished = time.perf_counter()
    harness = {f"{stage}_s": sum(o.seconds.get(stage.value, 0.0) for o in outcomes) for stage in HarnessStage}
    harness |= {"setup_s": tasks_started - started, "tasks_wall_s": tasks_done - tasks_started,
                "log_s": finished - tasks_done, "job_s": finished - started,
                "job_cpu_s": time.process_time() - cpu_started}
    harness["overhead_fraction"] = overhead_fraction(harness)
    harness |= job.worker_seconds()  # the localization worker: its start, and what the job waited for it
    harness["gc_collections"] = _gc_collections() - collections_before  # see GC_THRESHOLDS
    harness |= process_measures()
    mlflow.log_metrics({metric_key(f"harness.{k}"): logged_value(v) for k, v in harness.items()})
    for failed in outcomes:
        if failed.status == "failed":
            print(f"FAILED {failed.task_id}/r{failed.repeat}: {failed.error}")
    if not os.environ.get(PARENT_RUN_ENV):  # a sweep prints it once, with its summary
        run = mlflow.active_run().info
        print(f"run id: {run.run_id}  (for experiments.analysis.repeatability, experiments.analysis.replay, experiments.analysis.compare)")
        print(f"MLflow UI: {ui_command(cfg.tracking)}")
        print(f"this job:  {ui_address(cfg.tracking)}/{run_page(run.experiment_id, run.run_id)}")
    if counts["failed"]:
        mlflow.set_tag(Tag.TASKS_FAILED, str(counts["failed"]))
        if not len(ok):
            raise TasksFailedError(f"every task failed ({len(frame)}); see the per-task errors above")
        if not cfg.allow_failed_tasks:
            raise TasksFailedError(f"{counts['failed']} of {len(frame)} tasks failed (their errors are above); "
                                   "the job is marked FAILED — allow_failed_tasks=true keeps it FINISHED")


def _log_languages(slices: dict[str, pd.DataFrame]) -> None:
    """Each language's headline means (`9 language/<language>/<metric>`: the run page's headline quality
    and cost, not every summary metric again per language) and its task count; every metric's slice,
    with its CI, in `by_language.csv`."""
    for language, sliced in slices.items():
        metrics = {language_metric_key(language, name): logged_value(row["mean"]) for name, row in sliced.iterrows()
                   if name in HEADLINE_QUALITY + HEADLINE_COST and _number(row["mean"])}
        mlflow.log_metrics(metrics | {language_metric_key(language, "tasks"): int(sliced["n"].max())})
    if slices:
        mlflow.log_text(pd.concat(slices, names=["language"]).to_csv(), "by_language.csv")


def overhead_fraction(harness: dict[str, float]) -> float:
    """The share of the job's wall time that is not localization. Task stages are summed over
    tasks, which overlap when several are in flight: localization's share of the task phase's
    wall time is its share of the summed task stages."""
    in_tasks = sum(harness[f"{stage}_s"] for stage in HarnessStage)
    localize_wall = harness["tasks_wall_s"] * harness["localize_s"] / in_tasks if in_tasks else 0.0
    return 1 - localize_wall / harness["job_s"] if harness["job_s"] else 0.0


def _run_tasks(job: Job, work, localize_missing: bool, concurrency: int, label: str,
               on_done: Callable[[TaskOutcome], TaskOutcome]) -> list[TaskOutcome]:
    """Every (task, repeat) of the job, up to `concurrency` at once (a slow remote System One must
    not serialize a task set), each passed through `on_done` in its thread as it ends; outcomes in task
    order, so results and logging match a serial run."""
    with tqdm(total=len(work), desc=label, unit="task") as progress:
        def one(item):
            outcome = on_done(job.run_task(item[0], item[1], localize_missing))
            progress.update()
            return outcome

        if concurrency == 1:
            return [one(item) for item in work]
        with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="task") as pool:
            return list(pool.map(one, work))


def _number(value) -> bool:
    return value is not None and value == value  # a CI bound is None or NaN where it is undefined


def _log_telemetry(outcomes) -> None:
    """Per-file telemetry as a table, per-job counts as metrics (e.g. `3 reading/terminated_model_stop`)."""
    results = [(o.task_id, o.repeat, LocalizationResult.read(o.result_dir / RESULT_FILE))
               for o in outcomes if o.status == "ok"]
    files = file_telemetry(results)
    if len(files):
        mlflow.log_table(files, "file_telemetry.json")
    metrics = job_telemetry(results)
    if metrics:
        mlflow.log_metrics({metric_key(k): logged_value(v) for k, v in metrics.items()})


def _log_record(outcomes, job: Job) -> None:
    """What the job needs to be re-executed (`experiments.analysis.replay`) and what the agent would receive,
    uploaded as one artifact tree (one upload per job, not one per task): every task's result and
    trace (`results/`), Hydra's saved config and overrides (`hydra/`, redacted when the job started),
    the decisions every result was built on (`decisions.jsonl`, read from the traces, reused results
    included) and each task's context pack (`context_packs/`, with its page for reading in the UI)."""
    output = Path(HydraConfig.get().runtime.output_dir)
    staging = output / "artifacts"
    shutil.rmtree(staging, ignore_errors=True)
    for o in outcomes:
        if o.result_dir.is_dir():
            _link_tree(o.result_dir, staging / RESULTS_ARTIFACT / o.task_id / f"r{o.repeat}")
    hydra_dir = output / str(HydraConfig.get().output_subdir or ".hydra")
    if hydra_dir.is_dir():
        _link_tree(hydra_dir, staging / HYDRA_ARTIFACTS)
    ok = [o for o in outcomes if o.status == "ok"]
    decisions = [d for o in ok if (o.result_dir / TRACE_FILE).is_file()
                 for d in decisions_from_trace(read_trace(o.result_dir / TRACE_FILE), job.system_one_identity,
                                               str(o.result_dir / TRACE_FILE))]
    staging.mkdir(parents=True, exist_ok=True)
    (staging / DECISIONS_ARTIFACT).write_text(write_snapshot(decisions), encoding="utf-8")
    for o in ok:  # the pack as the agent gets it, and as a page to read in the UI (its own line numbers alone)
        target = staging / "context_packs" / o.task_id / f"r{o.repeat}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(o.pack_text or "", encoding="utf-8")
        target.with_suffix(".html").write_text(pack_page(o.pack_text or "", f"{o.task_id} r{o.repeat}"), encoding="utf-8")
    mlflow.log_artifacts(str(staging))


def _link_tree(source: Path, target: Path) -> None:
    """Hard links where the file system allows (no copy of every result), else copies."""
    for path in source.rglob("*"):
        if path.is_file() and not path.name.endswith(".tmp"):
            destination = target / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(path, destination)
            except OSError:
                shutil.copy2(path, destination)


def _input_error(exc: BaseException) -> BaseException | None:
    """The input error behind `exc`, also when Hydra's instantiate wrapped it (`raise … from`)."""
    while exc is not None:
        if isinstance(exc, INPUT_ERRORS):
            return exc
        exc = exc.__cause__
    return None


_OWN_PACKAGES = ("experiments", "dataset", "locator", "metrics", "render")


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """loclab's own warnings (a gold hunk placed at an offset, a result adjusted) as one line
    `warning: …`: Python's default echoed the source line that raised them after the message."""
    if filename and Path(filename).resolve().is_relative_to(PROJECT_ROOT) and \
            Path(filename).resolve().relative_to(PROJECT_ROOT).parts[0] in _OWN_PACKAGES:
        tqdm.write(f"warning: {message}", file=file or sys.stderr)  # on its own line, under the progress bar
        return
    _default_show_warning(message, category, filename, lineno, file, line)


_default_show_warning = warnings.showwarning


def run_or_exit(cfg: DictConfig, stage: Stage) -> None:
    """A single job whose tasks failed exits 3 (a script can tell it from a crash); in a sweep the
    job fails like any other so the sweep goes on and its parent run is FAILED."""
    warnings.showwarning = _show_warning
    try:
        run_job(cfg, stage)
    except TasksFailedError as exc:
        if HydraConfig.get().mode == RunMode.MULTIRUN:
            raise
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(EXIT_TASKS_FAILED)
    except Exception as exc:
        cause = _input_error(exc)
        if HydraConfig.get().mode == RunMode.MULTIRUN:
            raise
        if cause is None:
            uri = tracking_uri(cfg.tracking)
            why = unreachable(uri)
            if why is None:
                raise
            print(redact(f"error: tracking server {uri} stopped answering during the job ({why}): the job's run "
                         "stays RUNNING there until the next job started on this host marks it KILLED"), file=sys.stderr)
            sys.exit(EXIT_TRACKING_LOST)
        print(redact(f"error: {cause}"), file=sys.stderr)  # bad settings or data: one line
        sys.exit(EXIT_BAD_INPUT)
    finally:
        gc.freeze()  # what the job leaves goes with the process: the collector's scan of it at exit took 0.6 s

