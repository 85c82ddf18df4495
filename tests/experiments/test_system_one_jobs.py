"""Jobs against loclab's own System One server over real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.experiments.cli import Workspace
from experiments.system_one_process import system_one_server

pytestmark = pytest.mark.network

SECRET = "sk-loclab-never-logged-7f3a9c"
FAST = ("system_one.backend.max_attempts=2", "system_one.backend.backoff_initial_s=0.01")


@pytest.fixture
def ws(tmp_path, subject_cache):
    return Workspace(tmp_path / "ws", subject_cache)


def test_a_job_over_http_never_writes_the_key_anywhere(ws, tmp_path, monkeypatch):
    monkeypatch.setenv("LOCLAB_TEST_KEY", SECRET)
    with system_one_server(tmp_path / "server-cache", "server.api_key_env=LOCLAB_TEST_KEY") as url:
        proc = ws.run("experiments.run", "system_one=http", f"system_one.backend.url={url}",
                      "system_one.backend.api_key_env=LOCLAB_TEST_KEY", "limit=2", *FAST)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [job] = ws.jobs()
    assert job.data.metrics["tasks_ok"] == 2 and job.data.metrics["model_calls"] > 0
    assert job.data.params["system_one.backend.api_key_env"] == "LOCLAB_TEST_KEY"
    written = [p for p in ws.root.rglob("*") if p.is_file()]
    assert len(written) > 10
    leaks = [str(p) for p in written if SECRET.encode() in p.read_bytes()]
    assert leaks == [] and SECRET not in proc.stdout + proc.stderr


def test_a_dead_server_fails_its_job_with_the_message_and_the_sweep_goes_on(ws, tmp_path):
    with system_one_server(tmp_path / "bad-cache", "server.faults.fail_rate=1.0", "server.faults.fail_status=500") as bad, \
            system_one_server(tmp_path / "good-cache") as good:
        proc = ws.run("experiments.run", "system_one=http", f"system_one.backend.url={bad},{good}", "limit=1",
                      "system_one.cache.enabled=false", *FAST, multirun=True)
    assert proc.returncode != 0
    jobs = {j.data.params["system_one.backend.url"]: j for j in ws.jobs()}
    assert jobs[good].info.status == "FINISHED" and jobs[bad].info.status == "FAILED"
    [failed_task] = ws.runs(filter_string=f"tags.`mlflow.parentRunId` = '{jobs[bad].info.run_id}'")
    assert failed_task.info.status == "FAILED"
    assert "failed after 2 attempts; last: status 500" in failed_task.data.tags["loclab.error"]
    [parent] = ws.runs(filter_string="tags.`loclab.kind` = 'sweep'")
    assert parent.info.status == "FAILED"


def test_ab_arms_share_decisions_through_the_cache(ws):
    proc = ws.run("experiments.run", "experiment=ab_shared_cache", "limit=3", multirun=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    arms = sorted(ws.jobs(), key=lambda j: j.info.start_time)
    assert len(arms) == 2
    first, second = (a.data.metrics for a in arms)
    # Phase 1 asks identical questions in both arms (the arms differ only in the reader's observation
    # threshold): every discovery request of the second arm is answered by the cache.
    discovery = []
    for arm in arms:
        results = sorted(Path(arm.data.tags["loclab.results_dir"]).rglob("localization-result.json"))
        assert len(results) == 3
        stages = [next(s for s in json.loads(r.read_text())["cost"]["stages"] if s["name"] == "file_discovery")
                  for r in results]
        discovery.append([s["model_calls"] for s in stages])
    assert discovery[0] == discovery[1] and sum(discovery[1]) > 0
    assert second["cache_hits"] * 3 >= sum(discovery[1])  # cache_hits is a per-task mean
    assert second["physical_model_calls"] < second["model_calls"]
    assert first["cache_hits"] < second["cache_hits"]


def test_a_stopped_sweep_closes_its_parent_run_as_failed(ws, tmp_path):
    import signal
    import subprocess
    import sys
    import time

    from experiments.paths import PROJECT_ROOT

    with system_one_server(tmp_path / "slow-cache", "server.faults.latency_ms=3000") as url:
        cmd = [sys.executable, "-m", "experiments.run", "-m", "system_one=http", f"system_one.backend.url={url}",
               "system_one.cache.enabled=false", "locator=two_phase,bm25", "limit=1",
               f"hydra.sweep.dir={ws.root}/hydra-multi"]
        proc = subprocess.Popen(cmd, cwd=PROJECT_ROOT, env=ws.env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not ws.runs(filter_string="tags.`loclab.kind` = 'job'") and time.monotonic() < deadline:
            time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    [parent] = ws.runs(filter_string="tags.`loclab.kind` = 'sweep'")
    assert parent.info.status == "FAILED"
    assert proc.returncode != 0
