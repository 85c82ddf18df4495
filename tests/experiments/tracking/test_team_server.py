"""The README's team set-up, run end to end: PostgreSQL + `mlflow server` (scripts/team_server.sh),
loclab's System One server, a parallel sweep logging to the tracking server over HTTP (every run
landed exactly once, nothing local), and an analysis command reading it back."""

from __future__ import annotations

import shlex
import socket
import subprocess
import sys

import pytest
from mlflow.tracking import MlflowClient

from experiments.job.paths import PROJECT_ROOT
from experiments.job.system_one_process import system_one_server
from tests.experiments.cli import Workspace
from tests.test_configs import readme_blocks

pytestmark = pytest.mark.network


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _team_commands() -> list[list[str]]:
    [block] = readme_blocks(team=True)
    commands = [[a for a in shlex.split(line, comments=True) if a != "&"] for line in block.splitlines()]
    return [c for c in commands if c]


def test_the_readme_team_set_up_lands_every_run_once(tmp_path, subject_cache):
    start, export, serve, sweep, analysis, stop = _team_commands()
    assert start[:3] == ["bash", "scripts/team_server.sh", "start"] and stop[2] == "stop" and export[0] == "export"
    where = str(tmp_path / "team")
    try:
        proc = subprocess.run([*start[:3], where, str(_free_port()), str(_free_port())], cwd=PROJECT_ROOT,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        uri = proc.stdout.strip().splitlines()[-1].split("=", 1)[1]
        ws = Workspace(tmp_path / "ws", subject_cache, pristine_store=False)
        with system_one_server(tmp_path / "so-cache", *[a for a in serve[3:] if not a.startswith("server.port=")]) as url:
            env = ws.env() | {"MLFLOW_TRACKING_URI": uri, "LOCLAB_SYSTEM_ONE_URL": url}
            run = [sys.executable, *sweep[1:], "limit=2", f"hydra.sweep.dir={tmp_path}/multi"]
            proc = subprocess.run(run, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr[-3000:]
        client = MlflowClient(tracking_uri=uri)
        experiment = client.get_experiment_by_name("loclab-demo")
        jobs = client.search_runs([experiment.experiment_id], "tags.`loclab.kind` = 'job'", max_results=100)
        [parent] = client.search_runs([experiment.experiment_id], "tags.`loclab.kind` = 'sweep'", max_results=10)
        assert len(jobs) == 2 and len({j.data.tags["loclab.job_key"] for j in jobs}) == 2  # none lost, none twice
        assert all(j.info.status == "FINISHED" and j.data.tags["mlflow.parentRunId"] == parent.info.run_id for j in jobs)
        assert parent.info.status == "FINISHED" and parent.data.metrics["8 sweep/jobs_total"] == 2
        assert not ws.db.exists()  # nothing went to a local store
        table = client.download_artifacts(jobs[0].info.run_id, "per_task.csv", str(tmp_path))  # from the server's store
        assert open(table).read().startswith("task_id")
        ids = {"RUN_A": jobs[0].info.run_id, "RUN_B": jobs[1].info.run_id}
        proc = subprocess.run([sys.executable, *analysis[1:3], *[ids.get(a, a) for a in analysis[3:]],
                               "--out", str(tmp_path / "report")],
                              cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
    finally:
        subprocess.run([*stop[:3], where], cwd=PROJECT_ROOT, capture_output=True, timeout=120)
