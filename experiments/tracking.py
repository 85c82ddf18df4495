"""MLflow: experiment set-up, parameter flattening, and the parent run of a multirun sweep."""

from __future__ import annotations

import atexit
import os
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Any

import mlflow
from hydra.core.hydra_config import HydraConfig
from hydra.experimental.callback import Callback
from mlflow.entities import Run, RunStatus
from mlflow.tracking import MlflowClient
from omegaconf import DictConfig, OmegaConf

from locator.hashing import blake3_hex, canonical_json
from locator.redact import redact, redact_logging, redact_std_streams, redact_value
from locator.system_one.cache import DecisionCache

PARENT_RUN_ENV = "LOCLAB_MLFLOW_PARENT_RUN_ID"
PARENT_TAG = "mlflow.parentRunId"


def mlflow_key(metric: str) -> str:
    """MLflow forbids '@' in keys: `file_acc_all@5` is logged as `file_acc_all_at_5`."""
    return metric.replace("@", "_at_")


def sqlite_uri(path: str | Path) -> str:
    return f"sqlite:///{Path(path).resolve()}"


def tracking_uri(tracking: DictConfig) -> str:
    """`tracking.uri` (MLFLOW_TRACKING_URI) when set, else the local SQLite file."""
    return tracking.get("uri") or sqlite_uri(tracking.db_path)


def ensure_experiment(tracking: DictConfig) -> str:
    """Creates the store and the experiment if needed; call once before parallel work."""
    uri = tracking_uri(tracking)
    local = uri.startswith("sqlite:")
    if local:
        Path(tracking.db_path).parent.mkdir(parents=True, exist_ok=True)
    mlflow.set_tracking_uri(uri)
    client = MlflowClient()
    existing = client.get_experiment_by_name(tracking.experiment)
    if existing is not None:
        return existing.experiment_id
    artifacts = None
    if local:  # a server keeps artifacts in its own store
        Path(tracking.artifact_dir).mkdir(parents=True, exist_ok=True)
        artifacts = Path(tracking.artifact_dir).resolve().as_uri()
    try:
        return client.create_experiment(tracking.experiment, artifact_location=artifacts)
    except mlflow.exceptions.MlflowException:
        # Another process created it between our lookup and create.
        return client.get_experiment_by_name(tracking.experiment).experiment_id


def flatten(cfg: DictConfig, keys: tuple[str, ...]) -> dict[str, Any]:
    flat: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        else:
            flat[prefix] = value

    container = redact_value(OmegaConf.to_container(cfg, resolve=True))
    for key in keys:
        if key in container:
            walk(key, container[key])
    return flat


def _process_gone(run: Run) -> bool:
    """A RUNNING run whose process is known to be dead: same host, pid not alive."""
    tags = run.data.tags
    if tags.get("loclab.host") != socket.gethostname() or not tags.get("loclab.pid", "").isdigit():
        return False
    try:
        os.kill(int(tags["loclab.pid"]), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _runs(client: MlflowClient, experiment_id: str, query: str) -> list[Run]:
    return client.search_runs([experiment_id], filter_string=query, max_results=5000,
                              order_by=["attributes.start_time DESC"])


def close_stale_runs(client: MlflowClient, experiment_id: str, job_key: str) -> list[str]:
    """Marks KILLED the RUNNING runs of this job (and their RUNNING task runs) whose process is gone:
    what `kill -9` leaves behind. Returns their ids."""
    killed = []
    for run in _runs(client, experiment_id, f"tags.`loclab.job_key` = '{job_key}' and attributes.status = 'RUNNING'"):
        if not _process_gone(run):
            continue
        for task in _runs(client, experiment_id,
                          f"tags.`{PARENT_TAG}` = '{run.info.run_id}' and attributes.status = 'RUNNING'"):
            client.set_terminated(task.info.run_id, status="KILLED")
        client.set_tag(run.info.run_id, "loclab.error", "process gone while RUNNING (killed); marked KILLED on rerun")
        client.set_terminated(run.info.run_id, status="KILLED")
        killed.append(run.info.run_id)
    return killed


def finished_job(client: MlflowClient, experiment_id: str, parent_run_id: str, job_key: str) -> str | None:
    """The FINISHED run of this job under this sweep parent, if a resumed sweep already ran it."""
    done = _runs(client, experiment_id, f"tags.`{PARENT_TAG}` = '{parent_run_id}' and tags.`loclab.job_key` = '{job_key}' "
                                        "and attributes.status = 'FINISHED'")
    return done[0].info.run_id if done else None


def sweep_key(config: DictConfig) -> str:
    """What makes two sweeps the same sweep: the experiment, the command-line overrides and the
    preset's sweeper parameters (a rerun of a killed sweep has the same key and resumes it)."""
    params = config.hydra.sweeper.get("params")
    params = OmegaConf.to_container(params, resolve=False) if isinstance(params, DictConfig) else {}
    return blake3_hex(canonical_json({"experiment": config.tracking.experiment,
                                      "overrides": sorted(config.hydra.overrides.task), "params": params}))[:16]


class RedactSecrets(Callback):
    """Hydra writes the composed config, the overrides and its log before loclab's code runs; a
    System One URL with credentials would land there. This callback redacts every log record and
    rewrites the saved config files with URL credentials removed (`locator.redact`)."""

    def __init__(self) -> None:
        # instantiated before Hydra logs or prints the overrides, in every process that runs jobs
        redact_logging()
        redact_std_streams()

    def on_job_start(self, config: DictConfig, **kwargs: Any) -> None:
        # a joblib worker receives this callback pickled (no __init__ ran there): install here too
        redact_logging()
        redact_std_streams()
        output = Path(HydraConfig.get().runtime.output_dir)
        saved = list((output / str(config.hydra.output_subdir)).glob("*.yaml")) if config.hydra.output_subdir else []
        if HydraConfig.get().mode.name == "MULTIRUN":
            saved.append(Path(config.hydra.sweep.dir) / "multirun.yaml")
        for path in saved:
            try:
                text = path.read_text(encoding="utf-8")
            except OSError:
                continue
            if redact(text) != text:
                path.write_text(redact(text), encoding="utf-8")


class SweepParentRun(Callback):
    """In the multirun parent: create the store once, open a parent run, close it with the verdict.

    A sweep whose parent was left KILLED (stopped) or RUNNING by a dead process is resumed by the
    same command: the parent is reopened, and jobs that already FINISHED under it are not run again
    (`experiments.run`), so every configuration has exactly one finished job run.
    Hydra skips on_multirun_end when a job raised, so an exit hook closes the run then; SIGTERM is
    turned into a normal exit so that the hook also runs when the sweep is stopped (KILLED).
    """

    def __init__(self) -> None:
        self.run_id: str | None = None
        self.stopped = False

    def _stop(self, signum: int, frame: Any) -> None:
        self.stopped = True
        sys.exit(128 + signum)

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        experiment_id = ensure_experiment(config.tracking)
        if config.get("system_one") and config.system_one.cache.enabled:
            DecisionCache(config.system_one.cache.path).close()  # created once, before the jobs
        client = MlflowClient()
        key = sweep_key(config)
        tags = {"loclab.kind": "sweep", "loclab.sweep_dir": str(config.hydra.sweep.dir), "loclab.sweep_key": key,
                "loclab.host": socket.gethostname(), "loclab.pid": str(os.getpid())}
        stopped = [r for r in _runs(client, experiment_id, f"tags.`loclab.sweep_key` = '{key}'")
                   if r.info.status == "KILLED" or (r.info.status == "RUNNING" and _process_gone(r))]
        if stopped:
            self.run_id = stopped[0].info.run_id
            client.update_run(self.run_id, status="RUNNING")
            for name, value in tags.items():
                client.set_tag(self.run_id, name, value)
            print(f"resuming stopped sweep run {self.run_id}: jobs that finished are not run again")
        else:
            self.run_id = client.create_run(experiment_id, run_name=f"sweep-{Path(config.hydra.sweep.dir).name}",
                                            tags=tags).info.run_id
        os.environ[PARENT_RUN_ENV] = self.run_id
        atexit.register(self._close, aborted=True)
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._stop)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        atexit.unregister(self._close)
        self._close(aborted=False)

    def _close(self, aborted: bool) -> None:
        if self.run_id is None:
            return
        client = MlflowClient()
        experiment_id = client.get_run(self.run_id).info.experiment_id
        children = _runs(client, experiment_id, f"tags.`{PARENT_TAG}` = '{self.run_id}'")
        latest: dict[str, Run] = {}  # a resumed sweep holds a job's killed run and its rerun: the latest counts
        for child in children:
            latest.setdefault(child.data.tags.get("loclab.job_key", child.info.run_id), child)
        failed = [c for c in latest.values() if c.info.status != RunStatus.to_string(RunStatus.FINISHED)]
        client.log_metric(self.run_id, "jobs_total", len(latest))
        client.log_metric(self.run_id, "jobs_failed", len(failed))
        status = "KILLED" if self.stopped else "FAILED" if aborted or failed or not latest else "FINISHED"
        client.set_terminated(self.run_id, status=status)
        os.environ.pop(PARENT_RUN_ENV, None)
        self.run_id = None
