"""Runs loclab's real entry points in a subprocess, isolated to a temporary workspace."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from mlflow.tracking import MlflowClient

from dataset.manifest import Gold, GoldSpan, LocalSubject, ManifestRow, build_manifest, write_manifest
from experiments.job.paths import PROJECT_ROOT
from locator.hashing import sha256_file
from locator.task import SubjectIdentity, Task
from tests.conftest import write_tree


@lru_cache(maxsize=1)
def _pristine_store() -> Path:
    """An empty MLflow store, created and migrated by MLflow once per test process: MLflow's migrations
    took 2.5-4 s of every workspace's first job (about a hundred in the suite); a copy takes a millisecond."""
    path = Path(tempfile.mkdtemp(prefix="loclab-pristine-store-")) / "mlflow.db"
    MlflowClient(tracking_uri=f"sqlite:///{path}").search_experiments()
    return path


@dataclass
class Workspace:
    root: Path
    subject_cache: Path
    project: Path = PROJECT_ROOT  # the loclab checkout whose entry points run (a copy, to test code changes)
    # False: no store until a job creates it (tests of store creation, or that nothing is stored locally)
    pristine_store: bool = True

    def __post_init__(self) -> None:
        if self.pristine_store and not self.db.exists():
            self.root.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(_pristine_store(), self.db)

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

    def run(self, module: str, *overrides: str, multirun: bool = False, timeout: int = 600) -> subprocess.CompletedProcess:
        dirs = [f"hydra.sweep.dir={self.root}/hydra-multi"] if multirun else [f"hydra.run.dir={self.root}/hydra"]
        cmd = [sys.executable, "-m", module, *(["-m"] if multirun else []), *overrides, *dirs]
        return subprocess.run(cmd, cwd=self.project, env=self.env(), capture_output=True, text=True, timeout=timeout)

    def create_store(self) -> None:
        """Creates (and migrates) the store before a test polls it while a subprocess runs: two processes
        creating one SQLite store at once race its migration ("_alembic_tmp_experiments already exists")."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.client().search_experiments()

    def client(self) -> MlflowClient:
        return MlflowClient(tracking_uri=f"sqlite:///{self.db}")

    def runs(self, experiment: str = "loclab-demo", filter_string: str = ""):
        client = self.client()
        exp = client.get_experiment_by_name(experiment)
        return client.search_runs([exp.experiment_id], filter_string=filter_string, max_results=1000) if exp else []

    def jobs(self, experiment: str = "loclab-demo"):
        return self.runs(experiment, "tags.`loclab.kind` = 'job'")



def tampered_manifest(tmp_path: Path, tamper: set[str]) -> Path:
    """Two local tasks, "good" and "bad"; those named in `tamper` expect a wrong gold-file hash."""
    rows = []
    for name in ("good", "bad"):
        root = write_tree(tmp_path / name, {"pkg/core.py": "def parse_config(path):\n    return path\n",
                                            "pkg/util.py": "def helper():\n    return 1\n"})
        digest = sha256_file(root / "pkg" / "core.py")
        rows.append(
            ManifestRow(
                task=Task(id=name, text="parse_config returns the path instead of the config",
                          subject=SubjectIdentity(repository=f"local/{name}", revision="1")),
                subject=LocalSubject(path=str(root), verify_sha256={"pkg/core.py": "0" * 64 if name in tamper else digest}),
                gold=Gold(files=["pkg/core.py"], spans=[GoldSpan(path="pkg/core.py", start_line=2, end_line=2, region=0)], rule="t"),
            )
        )
    path = tmp_path / "manifest.jsonl"
    write_manifest(build_manifest("local", "1", "d", "t", rows, str(path)), path)
    return path
