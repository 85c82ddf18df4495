"""benchmarks/run_arms.py: the seed's arms over whole task sets in parallel processes within a deadline,
each (arm, set) scored into one store, as the serial job would have scored it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from experiments.paths import PROJECT_ROOT
from tests.experiments.cli import Workspace

pytestmark = pytest.mark.network  # the demo subjects: real pip downloads into the session's cache


def _run_arms(ws: Workspace, store, deadline_s: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "benchmarks/run_arms.py", "--store", str(store), "--workers", "2",
                           "--deadline-s", str(deadline_s), "--jobs", "two_phase:demo", "--chunk", "2", "limit=3"],
                          cwd=PROJECT_ROOT, env=ws.env(), capture_output=True, text=True, timeout=600)


def _table(store) -> list[list[str]]:
    proc = subprocess.run([sys.executable, "benchmarks/model_arms.py", "--db", str(store / "mlflow.db")],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in proc.stdout.splitlines()[2:]]


def test_chunks_run_in_parallel_and_each_arm_is_scored_as_the_serial_job(tmp_path, subject_cache):
    ws = Workspace(tmp_path / "ws", subject_cache)
    proc = _run_arms(ws, tmp_path / "arms", deadline_s=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "c000 two_phase demo 2 tasks: rc 0" in proc.stdout and "c001 two_phase demo 1 tasks: rc 0" in proc.stdout
    serial = ws.run("experiments.run", "locator=two_phase", "limit=3")
    assert serial.returncode == 0, serial.stderr[-3000:]
    [job] = ws.jobs()
    [row] = _table(tmp_path / "arms")
    assert row[:3] == ["two_phase", "lexical", "3"]
    assert row[4] == f"{job.data.metrics['1 quality/file_acc_all_at_5']:.3f}"
    assert row[8] == f"{job.data.metrics['2 cost/input_tokens']:,.0f}"


def test_at_the_deadline_no_chunk_starts_and_the_unlocalized_tasks_are_scored_failed(tmp_path, subject_cache):
    ws = Workspace(tmp_path / "ws", subject_cache)
    proc = _run_arms(ws, tmp_path / "arms", deadline_s=0)
    assert proc.returncode == 1  # the score job failed: no task had a result
    assert proc.stdout.count("not started (deadline)") == 2 and "score two_phase demo: rc 3" in proc.stdout
    assert "demo-itsdangerous-001: no saved result" in (tmp_path / "arms" / "score-two_phase-demo.log").read_text()
