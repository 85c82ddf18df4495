"""benchmarks/run_arms.py: the seed's arms over whole task sets in parallel processes within a deadline,
each (arm, set) scored into one store, as the serial job would have scored it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from experiments.job.paths import PROJECT_ROOT
from tests.experiments.cli import Workspace

network = pytest.mark.network  # the demo subjects: real pip downloads into the session's cache


def _run_arms(ws: Workspace, store, deadline_s: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "benchmarks/run_arms.py", "--store", str(store), "--workers", "2",
                           "--deadline-s", str(deadline_s), "--jobs", "two_phase:demo", "--chunk", "2", "limit=3"],
                          cwd=PROJECT_ROOT, env=ws.env(), capture_output=True, text=True, timeout=600)


def _table(store) -> list[list[str]]:
    proc = subprocess.run([sys.executable, "benchmarks/model_arms.py", "--db", str(store / "mlflow.db")],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in proc.stdout.splitlines()[2:]]


@network
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
    assert row[4] == f"{job.data.metrics['1 quality/file_acc_all_at_05']:.3f}"
    assert row[8] == f"{job.data.metrics['2 cost/input_tokens']:,.0f}"


@network
def test_at_the_deadline_no_chunk_starts_and_the_unlocalized_tasks_are_scored_failed(tmp_path, subject_cache):
    ws = Workspace(tmp_path / "ws", subject_cache)
    proc = _run_arms(ws, tmp_path / "arms", deadline_s=0)
    assert proc.returncode == 1  # the score job failed: no task had a result
    assert proc.stdout.count("not started (deadline)") == 2 and "score two_phase demo: rc 3" in proc.stdout
    assert "demo-itsdangerous-001: no saved result" in (tmp_path / "arms" / "score-two_phase-demo.log").read_text()


@network
def test_stopped_from_outside_it_stops_its_running_chunks_and_starts_no_more(tmp_path, subject_cache):
    """Each chunk runs in a session of its own, so a signal to run_arms alone would leave it running."""
    ws = Workspace(tmp_path / "ws", subject_cache)
    store = tmp_path / "arms"
    driver = subprocess.Popen([sys.executable, "benchmarks/run_arms.py", "--store", str(store), "--workers", "1",
                               "--deadline-s", "600", "--jobs", "two_phase:demo,semantic_zoom:demo", "--chunk", "13"],
                              cwd=PROJECT_ROOT, env=ws.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    chunk = store / "workers" / "c000.db"
    deadline = time.monotonic() + 120
    # the first chunk's job is localizing (its first task saved; the store is its own until it ends: opening
    # it meanwhile would race the job's migration of it)
    while not any((store / "results").rglob("localization-result.json")) and time.monotonic() < deadline:
        time.sleep(0.2)
    driver.send_signal(signal.SIGTERM)
    out, _ = driver.communicate(timeout=120)
    assert driver.returncode == 128 + signal.SIGTERM and "Traceback" not in out, out[-3000:]
    assert "stopped by SIGTERM" in out and "c000 two_phase demo 13 tasks: rc 143" in out  # the summary, said
    assert "c001 semantic_zoom demo 13 tasks: not started (stopped)" in out
    left = [p for p in Path("/proc").iterdir() if p.name.isdigit() and str(store).encode() in _cmdline(p)]
    assert not left, [_cmdline(p) for p in left]
    assert [run.info.status for run in _runs(chunk)] == ["KILLED"]
    assert not (store / "workers" / "c001.log").exists()  # the next chunk never started


def _runs(db: Path) -> list:
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    return client.search_runs([e.experiment_id for e in client.search_experiments()])


def _cmdline(process: Path) -> bytes:
    try:
        return (process / "cmdline").read_bytes()
    except OSError:  # ended meanwhile
        return b""


@pytest.mark.parametrize("args, message", [
    (["--deadline-s", "-5"], "--deadline-s is the seconds from start after which no chunk runs: 0 or more, got -5"),
    (["--deadline-s", "60", "locator.no_such_setting=1"], "run_arms: an override Hydra refuses:"),
    (["--deadline-s", "60", "locator=[unclosed"], "run_arms: an override Hydra refuses:"),
])
def test_settings_it_cannot_run_are_one_line_before_anything_starts(tmp_path, args, message):
    proc = subprocess.run([sys.executable, "benchmarks/run_arms.py", "--store", str(tmp_path / "arms"), "--jobs",
                           "bm25:demo", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 if args[1] == "-5" else proc.returncode == 1
    assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert not (tmp_path / "arms").exists()
