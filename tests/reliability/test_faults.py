"""Probes: faults and runs that could lie about their state. A failing endpoint, a failing task, a
stopped or killed sweep, a missing or truncated saved result: each ends in a state that says what
happened (FAILED, KILLED, exit 3), and nothing is left RUNNING."""

from __future__ import annotations

import json

import pandas as pd

import pytest

from experiments.job.system_one_process import system_one_server
from tests.experiments.cli import Workspace, tampered_manifest

pytestmark = pytest.mark.network

FAST = ("system_one.backend.max_attempts=2", "system_one.backend.backoff_initial_s=0.01")


@pytest.fixture
def ws(tmp_path, subject_cache):
    return Workspace(tmp_path / "ws", subject_cache)


def _ok(proc):
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def test_a_dead_server_fails_its_job_with_the_message_and_the_sweep_goes_on(ws, tmp_path):
    with system_one_server(tmp_path / "bad-cache", "server.faults.fail_rate=1.0", "server.faults.fail_status=500") as bad, \
            system_one_server(tmp_path / "good-cache") as good:
        proc = ws.run("experiments.run", "system_one=http", f"system_one.backend.url={bad},{good}", "limit=1",
                      "system_one.cache.enabled=false", "tracking.task_runs=true", *FAST, multirun=True)
    assert proc.returncode != 0
    jobs = {j.data.params["system_one.backend.url"]: j for j in ws.jobs()}
    assert jobs[good].info.status == "FINISHED" and jobs[bad].info.status == "FAILED"
    [failed_task] = ws.runs(filter_string=f"tags.`mlflow.parentRunId` = '{jobs[bad].info.run_id}'")
    assert failed_task.info.status == "FAILED"
    assert "failed after 2 attempts; last: status 500" in failed_task.data.tags["loclab.error"]
    [parent] = ws.runs(filter_string="tags.`loclab.kind` = 'sweep'")
    assert parent.info.status == "FAILED"


def test_a_stopped_sweep_closes_its_parent_run_as_killed(ws, tmp_path):
    import signal
    import subprocess
    import sys
    import time

    from experiments.job.paths import PROJECT_ROOT

    ws.create_store()
    with system_one_server(tmp_path / "slow-cache", "server.faults.latency_ms=3000") as url:
        cmd = [sys.executable, "-m", "experiments.run", "-m", "system_one=http", f"system_one.backend.url={url}",
               "system_one.cache.enabled=false", "locator=two_phase,bm25", "limit=1",
               f"hydra.sweep.dir={ws.root}/hydra-multi"]
        proc = subprocess.Popen(cmd, cwd=PROJECT_ROOT, env=ws.env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 180
        while not ws.runs(filter_string="tags.`loclab.kind` = 'job'") and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()[1][-3000:]  # it must still be running when stopped
            time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    [parent] = ws.runs(filter_string="tags.`loclab.kind` = 'sweep'")
    assert parent.info.status == "KILLED"  # stopped from outside, not failed: the same command resumes it
    assert proc.returncode != 0, stderr[-3000:]
    assert not ws.runs(filter_string="attributes.status = 'RUNNING'")


def test_a_job_stopped_with_sigterm_ends_its_run_killed_at_once(ws, tmp_path):
    """Not RUNNING until the next job on the host notices: the job closes its own run, mid-task."""
    import signal
    import subprocess
    import sys
    import time

    from experiments.job.paths import PROJECT_ROOT

    ws.create_store()
    with system_one_server(tmp_path / "slow-cache", "server.faults.latency_ms=3000") as url:
        cmd = [sys.executable, "-m", "experiments.run", "system_one=http", f"system_one.backend.url={url}",
               "system_one.cache.enabled=false", "locator=two_phase", "limit=2"]
        proc = subprocess.Popen(cmd, cwd=PROJECT_ROOT, env=ws.env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 180
        while not ws.jobs() and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()[1][-3000:]
            time.sleep(0.5)
        time.sleep(2)  # into the first task: a request is in flight at the server's 3 s
        stopped = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
        took = time.monotonic() - stopped
    assert proc.returncode == 128 + signal.SIGTERM, stderr[-3000:]
    assert took < 10  # the handler ends the process, it does not wait for the task in flight
    [job] = ws.jobs()
    assert job.info.status == "KILLED" and "stopped by SIGTERM" in job.data.tags["loclab.error"]
    assert not ws.runs(filter_string="attributes.status = 'RUNNING'")


def test_a_job_whose_terminal_closed_ends_its_run_killed(ws):
    """SIGHUP, as a closed terminal or a dropped ssh session sends it, closes the job's run as SIGTERM
    does, not left RUNNING until the next job on the host notices."""
    import signal
    import subprocess
    import sys

    from experiments.job.paths import PROJECT_ROOT

    ws.create_store()
    # a terminal's job: SIGHUP at its default even where the tests themselves run under nohup (which
    # every child inherits, and which a job keeps on purpose)
    job = (f"import os, signal, time, mlflow\nsignal.signal(signal.SIGHUP, signal.SIG_DFL)\nfrom experiments.job import runner as run\n"
           f"mlflow.set_tracking_uri('sqlite:///{ws.db}')\nmlflow.set_experiment('loclab-demo')\n"
           "with mlflow.start_run() as active:\n"
           "    run._killed_on_stop_signals(active.info.run_id)\n"
           "    os.kill(os.getpid(), signal.SIGHUP)\n"
           "    time.sleep(60)\n")
    proc = subprocess.run([sys.executable, "-c", job], cwd=PROJECT_ROOT, env=ws.env(), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 128 + signal.SIGHUP, proc.stderr[-3000:]
    [run] = ws.runs()
    assert run.info.status == "KILLED" and run.data.tags["loclab.error"] == "stopped by SIGHUP; a rerun resumes it"


def test_a_hash_mismatch_fails_that_task_closed_and_the_job_goes_on(ws, tmp_path):
    manifest = tampered_manifest(tmp_path, tamper={"bad"})
    proc = ws.run("experiments.run", "locator=bm25", f"dataset.loader.path={manifest}")
    assert proc.returncode == 3 and "1 of 2 tasks failed" in proc.stderr  # a script can tell
    [job] = ws.jobs()
    assert (job.info.status, job.data.metrics["6 tasks/ok"], job.data.metrics["6 tasks/failed"]) == ("FAILED", 1, 1)
    assert job.data.tags["loclab.tasks_failed"] == "1"
    _ok(ws.run("experiments.run", "locator=bm25", f"dataset.loader.path={manifest}", "allow_failed_tasks=true"))
    allowed = max(ws.jobs(), key=lambda r: r.info.start_time)
    assert allowed.info.status == "FINISHED" and allowed.data.tags["loclab.tasks_failed"] == "1"
    assert not ws.runs(filter_string="tags.`loclab.kind` = 'task'")  # per-task runs are opt-in
    table = pd.read_csv(ws.client().download_artifacts(allowed.info.run_id, "per_task.csv", str(tmp_path)))
    [failed] = table[table.status == "failed"].itertuples()
    assert failed.task_id == "bad" and "sha256 mismatch" in failed.error
    assert not list((ws.root / "results").rglob("bad/r0/localization-result.json"))


def test_a_job_whose_every_task_fails_is_marked_failed(ws, tmp_path):
    manifest = tampered_manifest(tmp_path, tamper={"good", "bad"})
    proc = ws.run("experiments.run", "locator=bm25", f"dataset.loader.path={manifest}", "allow_failed_tasks=true")
    assert proc.returncode == 3
    [job] = ws.jobs()
    assert job.info.status == "FAILED" and "every task failed" in job.data.tags["loclab.error"]


def test_rescoring_without_saved_results_fails_the_tasks_not_silently(ws):
    proc = ws.run("experiments.score", "locator=bm25", "limit=1")
    assert proc.returncode != 0
    assert "no saved result" in proc.stdout
    [job] = ws.jobs()
    assert job.info.status == "FAILED"


def test_a_sweep_killed_with_sigkill_resumes_without_duplicates_and_leaves_nothing_running(ws, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    from experiments.job.paths import PROJECT_ROOT

    ws.create_store()
    # Every answer takes 0.5 s, so the second job is still running when it is killed (a bm25 job of
    # ten tasks took 1 s: a kill in CI could come after it had finished).
    with system_one_server(tmp_path / "slow-cache", "server.faults.latency_ms=500") as url:
        sweep = ["locator=two_phase", "locator.reader.schedule.batch_size=2,4", "limit=1", "system_one=http",
                 f"system_one.backend.url={url}", "system_one.cache.enabled=false"]
        cmd = [sys.executable, "-m", "experiments.run", "-m", *sweep, f"hydra.sweep.dir={ws.root}/hydra-multi"]
        proc = subprocess.Popen(cmd, cwd=PROJECT_ROOT, env=ws.env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:  # kill -9 once the first job finished and the second is running
            jobs = ws.jobs()
            if any(j.info.status == "FINISHED" for j in jobs) and any(j.info.status == "RUNNING" for j in jobs):
                break
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert ws.runs(filter_string="attributes.status = 'RUNNING'")  # what kill -9 leaves behind

        rerun = ws.run("experiments.run", *sweep, multirun=True)
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        [parent] = ws.runs(filter_string="tags.`loclab.kind` = 'sweep'")
        # the same sweep once more, ended: a new parent, named and linked apart from the first (issue 49, point 11)
        again = ws.run("experiments.run", *sweep, multirun=True)
    assert again.returncode == 0, again.stderr[-3000:]
    second = next(p for p in ws.runs(filter_string="tags.`loclab.kind` = 'sweep'") if p.info.run_id != parent.info.run_id)
    assert second.info.run_name == parent.info.run_name + " #2" and second.data.tags["loclab.rerun_of"] == parent.info.run_id
    assert "this is run #2" in again.stdout
    assert "resuming stopped sweep run" in rerun.stdout and "already finished in this sweep" in rerun.stdout
    parent = ws.client().get_run(parent.info.run_id)
    assert parent.info.status == "FINISHED" and parent.data.metrics["8 sweep/jobs_total"] == 2
    finished = [j for j in ws.jobs() if j.info.status == "FINISHED" and j.data.tags["mlflow.parentRunId"] == parent.info.run_id]
    assert sorted(j.data.params["locator.reader.schedule.batch_size"] for j in finished) == ["2", "4"]  # one per config
    # waiting on System One's half-second answers is wall time, not the job's CPU time
    assert all(0 < j.data.metrics["7 harness/job_cpu_s"] < j.data.metrics["7 harness/job_s"] / 2 for j in finished), \
        [(j.data.metrics["7 harness/job_cpu_s"], j.data.metrics["7 harness/job_s"]) for j in finished]
    first = [j for j in ws.jobs() if j.data.tags["mlflow.parentRunId"] == parent.info.run_id]
    killed = [j for j in first if j.info.status == "KILLED"]
    assert len(killed) == 1 and len(first) == 3
    assert not ws.runs(filter_string="attributes.status = 'RUNNING'")


def test_a_truncated_saved_result_is_localized_again_and_scoring_alone_names_it(ws):
    _ok(ws.run("experiments.run", "locator=bm25", "limit=1"))
    [saved] = list((ws.root / "results").rglob("localization-result.json"))
    saved.write_text(saved.read_text()[:200])
    proc = _ok(ws.run("experiments.run", "locator=bm25", "limit=1"))
    assert "saved result is unreadable" in proc.stderr and "localizing again" in proc.stderr
    # one line saying so, not Python's `file:line: UserWarning:` with the source line that warned echoed after it
    [said] = [line for line in proc.stderr.splitlines() if "saved result is unreadable" in line]
    assert said.startswith("warning: ") and "warnings.warn(" not in proc.stderr
    rerun = max(ws.jobs(), key=lambda r: r.info.start_time)
    assert rerun.data.metrics["6 tasks/reused"] == 0 and rerun.data.metrics["6 tasks/ok"] == 1
    json.loads(saved.read_text())  # whole again
    saved.write_text(saved.read_text()[:200])
    proc = ws.run("experiments.score", "locator=bm25", "limit=1", "tracking.task_runs=true")
    assert proc.returncode == 3
    [task] = ws.runs(filter_string="tags.`loclab.kind` = 'task' and attributes.status = 'FAILED'")
    assert str(saved) in task.data.tags["loclab.error"] and "force=true" in task.data.tags["loclab.error"]


def test_a_reused_result_with_a_truncated_trace_is_localized_again_and_scoring_alone_names_it(ws):
    _ok(ws.run("experiments.run", "locator=two_phase", "limit=1"))
    [trace] = list((ws.root / "results").rglob("trace.jsonl"))
    trace.write_text(trace.read_text()[:300])
    proc = _ok(ws.run("experiments.run", "locator=two_phase", "limit=1"))
    assert f"{trace}: saved result is unreadable" in proc.stderr and "localizing again" in proc.stderr
    rerun = max(ws.jobs(), key=lambda r: r.info.start_time)
    assert rerun.data.metrics["6 tasks/reused"] == 0 and rerun.data.metrics["6 tasks/ok"] == 1
    trace.write_text(trace.read_text()[:300])
    proc = ws.run("experiments.score", "locator=two_phase", "limit=1", "tracking.task_runs=true")
    assert proc.returncode == 3
    [task] = ws.runs(filter_string="tags.`loclab.kind` = 'task' and attributes.status = 'FAILED'")
    assert str(trace) in task.data.tags["loclab.error"]


def test_a_bad_selection_fails_the_job_with_the_setting_named(ws):
    proc = ws.run("experiments.run", "locator=bm25", "limit=0")
    assert proc.returncode == 2 and "setting limit: a positive number of tasks" in proc.stderr
    assert ws.jobs() == []  # a single job that cannot start is no run; in a sweep it is FAILED (test_clear_errors)


def test_a_sweep_whose_parent_cannot_be_recorded_stops_before_any_job(ws, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the store's folder would be\n")
    proc = ws.run("experiments.run", "locator=bm25", "locator.top_files=3,5", "limit=1",
                  f"tracking.db_path={blocker}/mlflow.db", multirun=True)
    assert proc.returncode == 2
    assert "the sweep's parent run could not be recorded" in proc.stderr and "no job was started" in proc.stderr
    assert "Traceback" not in proc.stderr and "Launching" not in proc.stdout + proc.stderr


def test_two_sweeps_started_together_on_a_fresh_store_both_land(ws):
    import subprocess
    import sys

    from experiments.job.paths import PROJECT_ROOT

    procs = [subprocess.Popen([sys.executable, "-m", "experiments.run", "-m", "locator=bm25", f"locator.top_files={n}",
                               "limit=1", f"hydra.sweep.dir={ws.root}/hydra-multi-{n}"], cwd=PROJECT_ROOT, env=ws.env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in (3, 5)]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outputs]
    parents = ws.runs(filter_string="tags.`loclab.kind` = 'sweep'")
    assert len(parents) == 2 and all(p.info.status == "FINISHED" for p in parents)
    assert sorted(j.data.params["locator.top_files"] for j in ws.jobs()) == ["3", "5"]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_tracking_server_is_one_line_naming_the_variable_before_anything_runs(tmp_path, subject_cache):
    ws = Workspace(tmp_path, subject_cache, pristine_store=False)  # so that a local store made by mistake shows
    import subprocess
    import sys
    import time

    from experiments.job.paths import PROJECT_ROOT

    uri = f"http://127.0.0.1:{_free_port()}"
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "experiments.run", "locator=bm25", "limit=1",
                           f"hydra.run.dir={ws.root}/hydra"], cwd=PROJECT_ROOT, env=ws.env() | {"MLFLOW_TRACKING_URI": uri},
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert f"error: tracking server {uri} (tracking.uri, from MLFLOW_TRACKING_URI) does not answer" in proc.stderr
    assert "Traceback" not in proc.stderr and time.monotonic() - started < 60  # MLflow's retries took 252 s
    assert not ws.db.exists()


def test_a_tracking_server_stopped_mid_job_ends_it_in_one_line_and_the_next_job_marks_it_killed(ws, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    import httpx
    from mlflow.tracking import MlflowClient

    from experiments.job.paths import PROJECT_ROOT

    port = _free_port()
    uri = f"http://127.0.0.1:{port}"
    store = tmp_path / "server.db"

    def serve() -> subprocess.Popen:
        server = subprocess.Popen(
            [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", f"sqlite:///{store}",
             "--artifacts-destination", str(tmp_path / "server-artifacts"), "--host", "127.0.0.1", "--port", str(port),
             "--workers", "1"], env=os.environ | {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
                                                   "MLFLOW_DISABLE_TELEMETRY": "true"},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{uri}/health", timeout=2).status_code == 200:
                    return server
            except httpx.HTTPError:
                time.sleep(0.2)
        raise TimeoutError("mlflow server did not start")

    env = ws.env() | {"MLFLOW_TRACKING_URI": uri}
    job = [sys.executable, "-m", "experiments.run", f"hydra.run.dir={ws.root}/hydra"]
    server = serve()
    try:
        proc = subprocess.Popen([*job, "locator=two_phase", "limit=4"], cwd=PROJECT_ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        client = MlflowClient(tracking_uri=uri)
        deadline = time.monotonic() + 240
        running = []
        while not running and time.monotonic() < deadline and proc.poll() is None:
            experiment = client.get_experiment_by_name("loclab-demo")
            running = experiment and client.search_runs([experiment.experiment_id],
                                                        "tags.`loclab.kind` = 'job' and attributes.status = 'RUNNING'")
            time.sleep(0.2)
        assert running, "the job never showed a RUNNING run"
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
        stopped = time.monotonic()
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 4, err[-3000:]
        assert f"error: tracking server {uri} stopped answering during the job" in err and "Traceback" not in err
        assert time.monotonic() - stopped < 120  # 3 retries, not MLflow's 7 (252 s)

        server = serve()
        assert client.get_run(running[0].info.run_id).info.status == "RUNNING"  # what the stop left behind
        other = subprocess.run([*job, "locator=bm25", "limit=1"], cwd=PROJECT_ROOT, env=env, capture_output=True,
                               text=True, timeout=300)  # a different job closes it
        assert other.returncode == 0, other.stderr[-3000:]
        assert f"marked KILLED: run {running[0].info.run_id}" in other.stdout
        assert client.get_run(running[0].info.run_id).info.status == "KILLED"
    finally:
        os.killpg(server.pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    import os
    from pathlib import Path

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())  # a zombie has ended


def test_kill_9_of_a_parallel_sweeps_main_process_ends_its_workers_and_their_runs(ws, tmp_path):
    import subprocess
    import sys

    from experiments.job.paths import PROJECT_ROOT

    ws.create_store()
    # Every answer takes 1.5 s, so neither job can finish between being seen RUNNING and the kill
    # (with the embedded backend a job took ~3 s, and in CI one ran on to FINISHED first).
    with system_one_server(tmp_path / "slow-cache", "server.faults.latency_ms=1500") as url:
        cmd = [sys.executable, "-m", "experiments.run", "-m", "sweep=parallel", "locator=two_phase",
               "system_one=http", f"system_one.backend.url={url}", "system_one.cache.enabled=false",
               "locator.reader.schedule.batch_size=2,4", f"hydra.sweep.dir={ws.root}/hydra-multi"]
        main = subprocess.Popen(cmd, cwd=PROJECT_ROOT, env=ws.env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        _kill_main_and_watch_its_workers(ws, main)


def _kill_main_and_watch_its_workers(ws, main) -> None:
    import os
    import signal
    import time

    try:
        deadline = time.monotonic() + 300
        running = []
        while len(running) < 2 and time.monotonic() < deadline:
            running = [j for j in ws.jobs() if j.info.status == "RUNNING"]
            time.sleep(0.2)
        assert len(running) == 2, "both jobs never ran at once"
        workers = {int(j.data.tags["loclab.pid"]) for j in running}
        assert main.pid not in workers
        os.kill(main.pid, signal.SIGKILL)  # the main process only, as `kill -9 PID` does
        main.wait(timeout=30)
        deadline = time.monotonic() + 90
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not any(_alive(pid) for pid in workers), "workers outlived the sweep's main process"
        assert {ws.client().get_run(j.info.run_id).info.status for j in running} == {"KILLED"}
    finally:
        os.killpg(main.pid, signal.SIGKILL) if _alive(main.pid) else None
        for pid in workers if "workers" in locals() else ():
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_damaged_decision_cache_fails_the_job_in_one_line_naming_the_file(ws, tmp_path):
    cache = tmp_path / "decisions.sqlite"
    cache.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 32)  # a header, then garbage
    proc = ws.run("experiments.run", "locator=two_phase", "limit=1", f"system_one.cache.path={cache}")
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert f"error: decision cache {cache}: " in proc.stderr and "move the file aside" in proc.stderr
    assert "Traceback" not in proc.stderr
    [job] = ws.jobs()
    assert job.info.status == "FAILED" and "DecisionCacheError" in job.data.tags["loclab.error"]


@pytest.fixture
def full_disk(tmp_path):
    """A 48 KiB file system (tmpfs, mounted as root): room for about one task's result and trace."""
    import subprocess

    where = tmp_path / "small-disk"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", str(where)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_a_full_results_disk_fails_tasks_naming_the_file_and_leaves_no_staging_file(ws, full_disk):
    env = {"LOCLAB_RESULTS_DIR": str(full_disk)}
    import subprocess
    import sys

    from experiments.job.paths import PROJECT_ROOT

    proc = subprocess.run([sys.executable, "-m", "experiments.run", "locator=two_phase", "limit=3",
                           f"hydra.run.dir={ws.root}/hydra"], cwd=PROJECT_ROOT, env=ws.env() | env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 3, proc.stderr[-3000:]  # tasks failed; the job itself ran to its end
    [job] = ws.jobs()
    assert job.info.status == "FAILED" and int(job.data.tags["loclab.tasks_failed"]) >= 1
    table = pd.read_csv(ws.client().download_artifacts(job.info.run_id, "per_task.csv", str(ws.root)))
    errors = table.loc[table.status == "failed", "error"]
    assert len(errors) >= 1 and all(f"cannot write {full_disk}/" in e and "No space left on device" in e for e in errors)
    assert not list(full_disk.rglob("*.tmp"))


def test_decisions_lost_from_the_cache_mid_job_fail_the_job_s_tasks_naming_the_loss(tmp_path):
    """What SQLite does with a garbled write-ahead log: the entries not yet in the database are gone,
    and no later statement says so. Here a second connection takes them: the next task fails closed,
    naming how many of the job's decisions were lost."""
    import sqlite3

    from tests.reliability.probes import job, local_manifest

    the_job = job(tmp_path, local_manifest(tmp_path, tasks=2), "locator=two_phase",
                  "locator.discovery.file_threshold=0.0")
    try:
        first = the_job.run_task("task-0", 0)
        assert first.status == "ok" and first.scores["model_calls"] > 0
        cache = tmp_path / "cache" / "system_one" / "decisions.sqlite"
        with sqlite3.connect(cache) as other:
            stored = other.execute("SELECT COUNT(*) FROM decisions").fetchone()[0]
            other.execute("DELETE FROM decisions WHERE rowid % 2 = 0")
        second = the_job.run_task("task-1", 0)
    finally:
        the_job.close()
    assert second.status == "failed" and "DecisionCacheError" in second.error
    assert f"of the {stored} decisions this job stored are gone" in second.error and "were lost" in second.error
