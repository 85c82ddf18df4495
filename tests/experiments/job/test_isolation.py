"""Gold never shares a process with localization: a production job localizes in a worker process that
holds the task's text and the metered view, never the manifest; its environment names no data set,
results, cache or `../shared` path; and a locator that reaches past its context there fails its task
closed, naming the call and the path. The probes are `tests/experiments/sneaky_locators.py`."""

from __future__ import annotations

import gc
import json
import os
import time

import pytest

from experiments.job.isolation import KEPT_LOCLAB_VARIABLES, worker_env
from tests.reliability.probes import job, local_manifest

PROBES = "tests.experiments.sneaky_locators"


def _probe(tmp_path, name: str, hint: str | None = None, first: str | None = None):
    """The probe's task outcome, in a job over one local task; `first` runs another locator on the
    same task first, in the same worker's job."""
    manifest = local_manifest(tmp_path)
    overrides = ["locator=bm25", f"locator._target_={PROBES}.{name}"]
    if hint is not None:
        overrides.append(f"+locator.hint={hint.lstrip('/')}")
    if first is not None:
        earlier = job(tmp_path, manifest, f"locator={first}")
        assert earlier.run_task("task-0", 0).status == "ok"
        earlier.close()
    the_job = job(tmp_path, manifest, *overrides)
    try:
        return the_job.run_task("task-0", 0)
    finally:
        the_job.close()


def _failed_closed(outcome, call: str) -> None:
    assert outcome.status == "failed", f"the probe saw past its context: {outcome.scores}"
    assert outcome.error.startswith("experiments.job.audit.MeteringViolation: task task-0") and call in outcome.error, outcome.error
    assert "outside the metered context" in outcome.error and "sneaky_locators.py" in outcome.error


def test_gc_finds_no_gold_and_is_refused(tmp_path):
    _failed_closed(_probe(tmp_path, "GcGold"), "gc.get_objects")


def test_the_caller_s_frames_are_refused(tmp_path):
    _failed_closed(_probe(tmp_path, "TracebackFrames"), "traceback.tb_frame")


def test_the_data_set_s_file_is_refused(tmp_path):
    _failed_closed(_probe(tmp_path, "DataFile", hint=str(tmp_path / "manifest.jsonl")), f"open {tmp_path / 'manifest.jsonl'}")


def test_shared_beside_the_checkout_is_refused(tmp_path):
    from experiments.job.production import shared_dirs

    if not shared_dirs()[0].is_dir():
        pytest.skip("no ../shared beside this checkout")
    _failed_closed(_probe(tmp_path, "SharedData"), f"os.listdir {shared_dirs()[0].resolve()}")


def test_saved_results_are_refused(tmp_path):
    outcome = _probe(tmp_path, "SavedResults", hint=str(tmp_path / "results"), first="bm25")
    _failed_closed(outcome, f"os.scandir {tmp_path / 'results'}")


def test_libc_through_ctypes_is_refused(tmp_path):
    _failed_closed(_probe(tmp_path, "Libc", hint=str(tmp_path / "subject0" / "pkg" / "core.py")), "ctypes.dlopen None")


def test_the_subject_s_tree_on_disk_is_refused(tmp_path):
    _failed_closed(_probe(tmp_path, "SubjectTree", hint=str(tmp_path / "subject0")),
                   f"open {tmp_path / 'subject0' / 'pkg' / 'core.py'}")


def test_no_module_keeps_another_view_s_lines(tmp_path):
    outcome = _probe(tmp_path, "LineCache", first="bm25")
    assert outcome.status == "ok" and outcome.scores["file_recall"] == 0.0  # found nothing to copy


def test_no_switch_turns_the_audit_off(tmp_path):
    _failed_closed(_probe(tmp_path, "AuditSwitch", hint=str(tmp_path / "subject0")), "open")


def test_a_view_of_its_own_through_sys_modules_is_refused(tmp_path):
    _failed_closed(_probe(tmp_path, "ImportChain", hint=str(tmp_path / "subject0")), "os.scandir")


def test_the_module_that_holds_gold_is_never_loaded_in_the_worker(tmp_path):
    outcome = _probe(tmp_path, "GoldModule")
    assert outcome.status == "ok", outcome.error


def test_the_worker_s_environment_names_no_data_results_or_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCLAB_SWEBENCH_LITE", str(tmp_path / "data.jsonl"))
    monkeypatch.setenv("LOCLAB_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path}/mlflow.db")
    monkeypatch.setenv("SOME_TOOL_HOME", str(tmp_path / "cache" / "tool"))  # any variable naming a guarded path
    outcome = _probe(tmp_path, "Environment", hint=str(tmp_path / "cache"))
    assert outcome.status == "ok", outcome.error
    kept = worker_env([str(tmp_path / "cache")], {"LOCLAB_CACHE_DIR": "/x", "LOCLAB_MODEL_THREADS": "2", "A": str(tmp_path / "cache" / "y"),
                                                 "PATH": "/usr/bin", "MLFLOW_TRACKING_URI": "sqlite:///x"})
    assert kept == {"LOCLAB_MODEL_THREADS": "2", "PATH": "/usr/bin"} and "LOCLAB_MODEL_THREADS" in KEPT_LOCLAB_VARIABLES


def test_an_honest_job_localizes_in_the_worker_as_before(tmp_path):
    manifest = local_manifest(tmp_path)
    the_job = job(tmp_path, manifest, "locator=bm25")
    try:
        outcome = the_job.run_task("task-0", 0)
        worker = the_job.start_worker()
        assert outcome.status == "ok" and outcome.scores["file_recall"] == 1.0
        assert worker.ready_s is not None and worker.pid != os.getpid()
    finally:
        the_job.close()
    trace = (outcome.result_dir / "trace.jsonl").read_text().splitlines()
    assert trace and json.loads((outcome.result_dir / "localization-result.json").read_text())["provenance"]["run_key"]


def test_a_task_that_runs_loclab_code_outside_its_address_fails_closed(tmp_path):
    """The static closure cannot see a module imported by a computed name: the worker sees it loaded."""
    outcome = _probe(tmp_path, "DynamicImport")
    assert outcome.status == "failed" and "CodeOutsideAddressError" in outcome.error
    assert "render.notes" in outcome.error


def test_what_is_localized_is_the_producer_s_sealed_copy_of_the_task(tmp_path):
    """The runner and scoring are off the results' address: they name a task by its id and cannot
    change what it says. A row changed after the job was built changes nothing; a manifest whose rows
    no longer match its content hash is refused."""
    from dataset.manifest import load_manifest
    from experiments.job.config import compose_config
    from experiments.job.pipeline import Job
    from experiments.job.production import ManifestChangedError

    path = local_manifest(tmp_path)
    cfg = compose_config("locator=bm25", f"paths.results_dir={tmp_path / 'results'}",
                         f"paths.cache_dir={tmp_path / 'cache'}")
    manifest = load_manifest(path)
    the_job = Job(cfg, manifest, "bm25")
    original = manifest.rows[0]
    metadata = dict(original.task.metadata)
    original.task.metadata["hint"] = "pkg/core.py"  # changed in place: the rows' objects are the caller's
    manifest.rows[0] = original.model_copy(update={"task": original.task.model_copy(update={"text": "cut"})})
    try:
        assert the_job.row("task-0").task.text == original.task.text
        assert the_job.row("task-0").task.metadata == metadata
        outcome = the_job.run_task("task-0", 0)
    finally:
        the_job.close()
    assert outcome.status == "ok" and outcome.scores["file_recall"] == 1.0
    with pytest.raises(ManifestChangedError, match="rows were changed after it was loaded"):
        Job(cfg, manifest, "bm25")


def test_a_job_dropped_without_close_stops_its_worker(tmp_path):
    the_job = job(tmp_path, local_manifest(tmp_path), "locator=bm25")
    assert the_job.run_task("task-0", 0).status == "ok"
    pid = the_job.start_worker().pid
    del the_job
    gc.collect()
    deadline = time.monotonic() + 30
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{pid}"), "the worker outlived its job"


def test_the_job_s_own_process_is_refused(tmp_path):
    _failed_closed(_probe(tmp_path, "JobProcess"), f"open /proc/{os.getpid()}/environ")
