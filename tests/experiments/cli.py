"""Runs loclab's real entry points in a subprocess, isolated to a temporary workspace."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from mlflow.tracking import MlflowClient

from experiments.paths import PROJECT_ROOT


@dataclass
class Workspace:
    root: Path
    subject_cache: Path
    project: Path = PROJECT_ROOT  # the loclab checkout whose entry points run (a copy, to test code changes)

    @property
    def db(self) -> Path:
        return self.root / "mlflow.db"

    def env(self) -> dict[str, str]:
        # mlflow.set_tracking_uri (called by in-process analysis tests) exports MLFLOW_TRACKING_URI,
        # which loclab honours: a workspace's store is its own SQLite file, never an inherited URI.
        env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
        env.update(
            LOCLAB_CACHE_DIR=str(self.subject_cache),
            LOCLAB_RESULTS_DIR=str(self.root / "results"),
            LOCLAB_MLFLOW_DB=str(self.db),
            LOCLAB_MLFLOW_ARTIFACTS=str(self.root / "artifacts"),
            MLFLOW_DISABLE_TELEMETRY="true",
            HF_HUB_OFFLINE="1",
        )
        return env

    def run(self, module: str, *overrides: str, multirun: bool = False) -> subprocess.CompletedProcess:
        dirs = [f"hydra.sweep.dir={self.root}/hydra-multi"] if multirun else [f"hydra.run.dir={self.root}/hydra"]
        cmd = [sys.executable, "-m", module, *(["-m"] if multirun else []), *overrides, *dirs]
        return subprocess.run(cmd, cwd=self.project, env=self.env(), capture_output=True, text=True, timeout=600)

    def client(self) -> MlflowClient:
        return MlflowClient(tracking_uri=f"sqlite:///{self.db}")

    def runs(self, experiment: str = "loclab-demo", filter_string: str = ""):
        client = self.client()
        exp = client.get_experiment_by_name(experiment)
        return client.search_runs([exp.experiment_id], filter_string=filter_string, max_results=1000) if exp else []

    def jobs(self, experiment: str = "loclab-demo"):
        return self.runs(experiment, "tags.`loclab.kind` = 'job'")
