"""MLflow: experiment set-up, parameter flattening, and the parent run of a multirun sweep."""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import mlflow
from hydra.experimental.callback import Callback
from mlflow.entities import RunStatus
from mlflow.tracking import MlflowClient
from omegaconf import DictConfig, OmegaConf

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

    container = OmegaConf.to_container(cfg, resolve=True)
    for key in keys:
        if key in container:
            walk(key, container[key])
    return flat


class SweepParentRun(Callback):
    """In the multirun parent: create the store once, open a parent run, close it with the verdict.

    Hydra skips on_multirun_end when a job raised, so an exit hook closes the run as FAILED then;
    SIGTERM is turned into a normal exit so that the hook also runs when the sweep is stopped.
    """

    def __init__(self) -> None:
        self.run_id: str | None = None

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        experiment_id = ensure_experiment(config.tracking)
        if config.get("system_one") and config.system_one.cache.enabled:
            DecisionCache(config.system_one.cache.path).close()  # created once, before the jobs
        client = MlflowClient()
        run = client.create_run(
            experiment_id,
            run_name=f"sweep-{Path(config.hydra.sweep.dir).name}",
            tags={"loclab.kind": "sweep", "loclab.sweep_dir": str(config.hydra.sweep.dir)},
        )
        self.run_id = run.info.run_id
        os.environ[PARENT_RUN_ENV] = self.run_id
        atexit.register(self._close, aborted=True)
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        atexit.unregister(self._close)
        self._close(aborted=False)

    def _close(self, aborted: bool) -> None:
        if self.run_id is None:
            return
        client = MlflowClient()
        experiment_id = client.get_run(self.run_id).info.experiment_id
        children = client.search_runs([experiment_id], filter_string=f"tags.`{PARENT_TAG}` = '{self.run_id}'")
        failed = [c for c in children if c.info.status != RunStatus.to_string(RunStatus.FINISHED)]
        client.log_metric(self.run_id, "jobs_total", len(children))
        client.log_metric(self.run_id, "jobs_failed", len(failed))
        client.set_terminated(self.run_id, status="FAILED" if aborted or failed or not children else "FINISHED")
        os.environ.pop(PARENT_RUN_ENV, None)
        self.run_id = None
