"""End to end through the real CLI: Hydra composition and multirun, real pip-downloaded subjects,
a real MLflow SQLite store."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from experiments.job import runner as run_module
from experiments.tracking.metric_keys import ci_bounds
from experiments.tracking.sweep_record import BEST_COLOURS
from experiments.tracking.links import view_state
from locator.result import CodeIdentity
from locator.trace import EventKind, read_trace
from metrics.comparator import what_was_found
from tests.experiments.cli import Workspace, tampered_manifest

pytestmark = pytest.mark.network


def _ok(proc):
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


@pytest.fixture
def ws(tmp_path, subject_cache):
    return Workspace(tmp_path, subject_cache)


def test_a_job_localizes_scores_and_logs_to_mlflow(ws):
    proc = _ok(ws.run("experiments.run", "locator=two_phase", "limit=2", "tracking.task_runs=true"))
    assert "file_acc_all@5" in proc.stdout and "mlflow ui --backend-store-uri sqlite:///" in proc.stdout
    [job] = ws.jobs()
    assert job.info.status == "FINISHED"
    assert job.data.metrics["6 tasks/ok"] == 2 and "1 quality/file_acc_all_at_05" in job.data.metrics
    assert job.data.metrics["2 cost/model_calls"] > 0
    # the run page lists metrics in logging order: the headline quality leads (`6 tasks/total` led; issue 49, point 7)
    assert list(job.data.metrics)[:2] == ["1 quality/file_acc_all_at_05", "1 quality/file_acc_all_at_01"]
    # means are metrics; CI bounds a tag (the chart view opens on the means, not on 126 bounds)
    assert not [k for k in job.data.metrics if k.startswith("ci95")]
    low, high = ci_bounds(job.data.tags, "file_recall")
    assert low <= job.data.metrics["1 quality/file_recall"] <= high
    assert len(job.data.tags["loclab.manifest_blake3"]) == 64
    assert job.data.params["locator.discovery.file_threshold"] == "0.5"
    assert job.data.params["locator.reader.schedule._target_"] == "locator.reading.schedule.BatchSchedule"
    assert "locator.reader.schedule.epoch_width" not in job.data.params  # the batch schedule has no epochs
    assert len(job.data.tags["loclab.code_identity"]) == 64
    tasks = ws.runs(filter_string=f"tags.`mlflow.parentRunId` = '{job.info.run_id}'")
    assert len(tasks) == 2 and all(t.info.status == "FINISHED" for t in tasks)
    artifacts = {a.path for a in ws.client().list_artifacts(job.info.run_id)}
    assert {"per_task.csv", "aggregate.csv", "results", "headline_metrics.png"} <= artifacts
    note = job.data.tags["mlflow.note.content"]  # the run's description in the UI
    assert note.startswith("**two_phase on demo, localize+score") and "file_acc_all@5 **" in note
    assert job.info.run_name == "two_phase@demo limit=2 task_runs=true"
    harness = {k: v for k, v in job.data.metrics.items() if k.startswith("7 harness/")}
    assert 0 < harness["7 harness/localize_s"] < harness["7 harness/job_s"] and harness["7 harness/log_s"] > 0
    assert harness["7 harness/gc_collections"] < 20  # the tuned collector (CPython's default: hundreds here)
    experiment = ws.client().get_experiment(job.info.experiment_id)
    assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"  # and experiments.tracking.ui's default
    assert f"this job:  http://127.0.0.1:5000/#/experiments/{job.info.experiment_id}/runs/{job.info.run_id}" \
           "?workflowType=machine_learning" in proc.stdout
    traces = ws.client().search_traces(locations=[job.info.experiment_id], run_id=job.info.run_id)
    assert len(traces) == 2  # one per task: a span per System One request, with its answers and tokens
    requests = [s for t in traces for s in t.data.spans if s.span_type == "LLM"]
    assert len(requests) == job.data.metrics["2 cost/model_calls"] * 2
    # inputs and outputs are JSON objects the UI folds, not JSON text; tokens where MLflow counts them
    assert all(isinstance(s.inputs["questions"], dict) and isinstance(s.outputs["answers"], dict)
               and s.inputs["question_count"] >= 1 for s in requests)
    assert sum(s.attributes["mlflow.chat.tokenUsage"]["input_tokens"] for s in requests) == \
        job.data.metrics["2 cost/input_tokens"] * 2
    assert all(t.info.token_usage["input_tokens"] > 0 for t in traces)  # the traces list's Tokens column
    # told apart: each trace carries one tag, its job's setting (the list shows one chip), and names its
    # job run and overrides in its metadata; each span its stage and file
    assert all({k for k in t.info.tags if not k.startswith("mlflow.")} == {"loclab.setting"}
               and t.info.tags["loclab.setting"] == job.info.run_name for t in traces)
    assert all(t.info.trace_metadata["loclab.job_run"] == job.info.run_id and "limit=2" in t.info.trace_metadata["loclab.overrides"]
               for t in traces)
    names = {s.name for s in requests}
    assert any(n.startswith("file_discovery") for n in names) and any(n.startswith("reading pkg/") or
                                                                       n.startswith("reading ") for n in names)
    results = list((ws.root / "results").rglob("localization-result.json"))
    assert len(results) == 2 and all((r.parent / "trace.jsonl").is_file() for r in results)

    saved = json.loads(results[0].read_text())
    assert saved["schema_version"] == 5
    code = CodeIdentity.model_validate(saved["provenance"]["code"])
    assert code.digest == job.data.tags["loclab.code_identity"]
    assert {"experiments.job.production", "dataset.subjects", "locator.repository", "locator.two_phase",
            "locator.system_one.lexical"} <= set(code.modules)  # the whole path, not one package
    assert "tree-sitter-python" in job.data.tags["loclab.dependencies"] and code.python in job.data.tags["loclab.python"]
    assert saved["provenance"]["run_key"] == job.data.tags["loclab.run_key"]

    # Idempotent: the saved results are reused, not recomputed, and say when they were produced.
    for result in results:  # as if produced by an earlier commit of the same code
        data = json.loads(result.read_text())
        data["provenance"]["code"] |= {"git_revision": "0ld0ld", "dirty": False}
        result.write_text(json.dumps(data))
    _ok(ws.run("experiments.run", "locator=two_phase", "limit=2"))
    rerun = max(ws.jobs(), key=lambda r: r.info.start_time)
    assert rerun.data.metrics["6 tasks/reused"] == 2
    assert rerun.data.metrics["1 quality/file_recall"] == job.data.metrics["1 quality/file_recall"]
    table = pd.read_csv(ws.client().download_artifacts(rerun.info.run_id, "per_task.csv", str(ws.root)))
    assert set(table.produced_at) == {"0ld0ld"} and table.reused.all()
    assert rerun.data.tags["loclab.results_produced_at"] == "0ld0ld"

    # Re-scoring reads the saved results and never localizes.
    _ok(ws.run("experiments.score", "locator=two_phase", "limit=2"))
    rescored = max(ws.jobs(), key=lambda r: r.info.start_time)
    assert rescored.data.tags["loclab.stage"] == "score"
    assert rescored.data.metrics["1 quality/file_recall"] == job.data.metrics["1 quality/file_recall"]


def test_a_sweep_gets_a_parent_run_with_its_jobs_as_children(ws):
    proc = _ok(ws.run("experiments.run", "locator=two_phase,bm25", "limit=1,2", multirun=True))
    [parent] = ws.runs(filter_string="tags.`loclab.kind` = 'sweep'")
    children = ws.jobs()
    assert parent.info.status == "FINISHED" and parent.data.metrics["8 sweep/jobs_total"] == 4
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parent.info.run_id}
    assert {c.data.tags["loclab.locator"] for c in children} == {"bm25", "two_phase"}
    # named for what they ran, what tells siblings apart first: the swept values, then what they share
    assert parent.info.run_name == "sweep locator=two_phase,bm25 limit=1,2"
    assert parent.data.tags["loclab.swept"] == "limit,locator"
    names = sorted(c.info.run_name for c in children)
    assert names == ["bm25, 1 · locator, limit · @demo", "bm25, 2 · locator, limit · @demo",
                     "two_phase, 1 · locator, limit · @demo", "two_phase, 2 · locator, limit · @demo"]
    assert all(c.data.tags["loclab.overrides"].startswith("locator=") for c in children)
    assert not ws.runs(filter_string="tags.`loclab.kind` = 'task'")  # per-task rows live in the job's table
    # the sweep ends with its jobs side by side and the commands that go on, with the real ids
    assert proc.stdout.count("MLflow UI: ") == 1 and f"parent run {parent.info.run_id}" in proc.stdout
    compare = next(line for line in proc.stdout.splitlines() if line.startswith("compare:"))
    assert set(compare.split()[4:8]) == {c.info.run_id for c in children}
    # in launch order: job 0 (every swept value's first, a preset's baseline) is compare's baseline
    by_job = {int(c.data.tags["loclab.sweep_job"]): c for c in children}
    assert compare.split()[4] == by_job[0].info.run_id and by_job[0].info.run_name == "two_phase, 1 · locator, limit · @demo"
    # the parent's page answers which setting wins: the table, the swept values, the best job, the figure
    assert parent.data.params["limit"] == "1,2" and parent.data.params["locator"] == "two_phase,bm25"
    artifacts = {a.path for a in ws.client().list_artifacts(parent.info.run_id)}
    assert {"sweep_jobs.json", "sweep_quality_vs_cost.png"} <= artifacts
    note = parent.data.tags["mlflow.note.content"]
    assert "Swept: `limit`, `locator`." in note
    # one row per job, best first, the swept values as columns, tasks scored and failed, the difference to
    # the best with its paired CI and Holm p, and the smallest p the repositories allow (issue 49, point 4)
    table = [line for line in note.splitlines() if line.startswith("| ")]
    assert table[0].startswith("|  | job | limit | locator | status | n | failed | file_acc_all@5 [95% CI] | "
                               "Δ to best [paired 95% CI] | p (Holm) |")
    rows = [line.removeprefix("| ").removesuffix(" |").split(" | ") for line in table[1:]]  # the separator is |---|
    by_job = {c.data.tags["loclab.sweep_job"]: c for c in children}
    assert rows[0][0] == "★" and by_job[rows[0][1]].info.run_id == parent.data.tags["loclab.best_job"]
    accs = [by_job[row[1]].data.metrics["1 quality/file_acc_all_at_05"] for row in rows]
    assert accs == sorted(accs, reverse=True) and len(rows) == 4
    # the charts draw each job in its own colour, the best and the runner-up in theirs (by the table's order)
    colours = [by_job[row[1]].data.tags.get("mlflow.runColor") for row in rows]
    assert colours[:2] == list(BEST_COLOURS) and len(set(colours)) == 4
    assert {(row[2], row[3]) for row in rows} == {("1", "two_phase"), ("2", "two_phase"), ("1", "bm25"), ("2", "bm25")}
    assert "no p can be below 1" in note  # one repository: no paired test can say anything
    # the best is chosen on the tasks every finished job completed, and says how many
    assert parent.data.tags["loclab.best_job_chosen_on"] == "1 tasks every one of 4 finished jobs completed"
    # every CI carries the number of repositories it resampled, in the tag and the table
    from experiments.tracking.metric_keys import ci_bounds, ci_clusters

    with_ci = [c for c in children if ci_bounds(c.data.tags, "file_acc_all@5")]  # one task has no CI
    assert len(with_ci) == 2 and all(ci_clusters(c.data.tags, "file_acc_all@5") == 1 for c in with_ci)
    assert "(1 repos)" in note and "[95 % CI] over 1 repository" in proc.stdout
    # and links the view of its jobs alone, best first, which the sweep prints as a URL
    view = parent.data.tags["loclab.sweep_view"]
    # in the machine-learning workflow: without it MLflow 3.17 opens the GenAI overview (point 1 of issue 49)
    assert view == (f"#/experiments/{parent.info.experiment_id}/runs?viewStateShareKey={parent.info.run_id}"
                    "&workflowType=machine_learning") and view in note
    assert f"jobs view: http://127.0.0.1:5000/{view}" in proc.stdout  # the port of the printed `mlflow ui --port 5000`
    assert "--port 5000" in next(line for line in proc.stdout.splitlines() if line.startswith("MLflow UI: "))
    tags = ws.client().get_experiment(parent.info.experiment_id).tags
    shared = view_state(tags[f"mlflow.sharedViewState.{parent.info.run_id}"])
    assert json.loads(tags[f"mlflow.sharedViewState.{parent.info.run_id}"])["name"].endswith(": its jobs, best first")
    assert ws.client().search_runs([parent.info.experiment_id], shared["searchFilter"]) and \
        {r.info.run_id for r in ws.client().search_runs([parent.info.experiment_id], shared["searchFilter"])} == \
        {c.info.run_id for c in children}
    assert shared["orderByKey"] == "metrics.`1 quality/file_acc_all_at_05`" and shared["runsHiddenMode"] == "SHOW_ALL"
    assert "params.`limit`" in shared["selectedColumns"]
    assert "tags.`loclab.locator`" in shared["selectedColumns"]  # a swept config group's arm: the tag naming it
    # each job's rank in the table, which the experiment's own view sorts by (every sweep's best first), and
    # its swept values as params of their own, which Compare opens on
    assert [by_job[row[1]].data.metrics["8 sweep/rank"] for row in rows] == [1, 2, 3, 4]
    assert all(by_job[row[1]].data.params["0 swept/locator"] == row[3] for row in rows)
    experiment_view = view_state(tags["mlflow.sharedViewState.loclab"])
    assert experiment_view["orderByKey"] == "metrics.`8 sweep/rank`" and experiment_view["orderByAsc"] is True
    assert {r.info.run_id for r in ws.client().search_runs([parent.info.experiment_id], experiment_view["searchFilter"])} == \
        {c.info.run_id for c in children}
    best = next(c for c in children if c.info.run_id == parent.data.tags["loclab.best_job"])
    assert parent.data.metrics["8 sweep/best_file_acc_all_at_05"] == max(
        c.data.metrics["1 quality/file_acc_all_at_05"] for c in children) == best.data.metrics["1 quality/file_acc_all_at_05"]
    # and links the compare report of its jobs against job 0, made as the sweep ended (issue 49, point 4)
    report = ws.client().get_run(parent.data.tags["loclab.compare_report"])
    assert report.data.tags["loclab.kind"] == "report" and report.data.tags["loclab.report"] == "compare"
    assert report.data.tags["loclab.reported_sweep"] == parent.info.run_id
    assert report.data.tags["loclab.reported_runs"].split(",") == [by_job[str(n)].info.run_id for n in range(4)]
    assert report.data.params["baseline"].startswith(by_job["0"].info.run_name.split(" · ")[0])
    # its page links back to the sweep and says which arm each of its numbers is about
    about = report.data.tags["mlflow.note.content"]
    assert f"jobs of the sweep [{parent.info.run_name}](#/experiments/{parent.info.experiment_id}/runs/{parent.info.run_id}" in about
    assert f"arm 1 = `{by_job['1'].info.run_name}#{by_job['1'].info.run_id[:6]}`" in about  # code: "@demo" is no mention
    assert "1 quality/file_acc_all_at_05_diff_arm3" in report.data.metrics
    link = note.split("\n\n")[1]  # under the first paragraph, above the table
    assert link.startswith("**Compare report**: [compare · ") and \
        f"(#/experiments/{report.info.experiment_id}/runs/{report.info.run_id}?workflowType=machine_learning)" in link
    assert f"compare report: http://127.0.0.1:5000/#/experiments/{report.info.experiment_id}/runs/{report.info.run_id}" in proc.stdout
    assert "(jobs 1, 2, 3 against job 0, linked from the parent's page" in proc.stdout  # names the jobs it compared


def test_jobs_that_select_the_same_tasks_with_different_settings_are_each_their_own_row(ws):
    """`limit=1,2` over one named task selects the same task twice: two jobs of the sweep, two keys,
    two rows (16 jobs `limit=range(1,17)` over 13 tasks showed as 13)."""
    proc = _ok(ws.run("experiments.run", "locator=bm25", "tasks=[demo-click-001]", "limit=1,2",
                      "tracking.sweep_compare_report=false", multirun=True))
    [parent] = ws.runs(filter_string="tags.`loclab.kind` = 'sweep'")
    jobs = ws.jobs()
    assert len(jobs) == 2 and len({j.data.tags["loclab.job_key"] for j in jobs}) == 2
    assert parent.data.metrics["8 sweep/jobs_total"] == 2
    # the compare report turned off: none made, none linked
    assert "loclab.compare_report" not in parent.data.tags and "compare report:" not in proc.stdout
    assert ws.client().get_experiment_by_name("loclab-demo-reports") is None


def test_a_failed_job_fails_the_sweep_but_not_its_siblings(ws):
    proc = ws.run("experiments.run", "locator=bm25", "locator.top_files=0,5", "limit=1", multirun=True)
    assert proc.returncode != 0 and "top_files" in proc.stderr
    [parent] = ws.runs(filter_string="tags.`loclab.kind` = 'sweep'")
    statuses = {c.data.params["locator.top_files"]: c.info.status for c in ws.jobs()}
    assert parent.info.status == "FAILED" and parent.data.metrics["8 sweep/jobs_failed"] == 1
    assert statuses == {"0": "FAILED", "5": "FINISHED"}


_NO_RAY = importlib.util.find_spec("hydra_plugins.hydra_ray_launcher") is None


# joblib; the Slurm launcher's local executor; a local Ray cluster (the ray extra)
LAUNCHERS = ("parallel", "submitit_local", "ray")
LAUNCHED_LOCATORS = ("bm25", "two_phase")  # the README's launcher commands sweep these (test_readme.py)


@pytest.mark.parametrize("launcher", [pytest.param(launcher, marks=pytest.mark.skipif(
    launcher == "ray" and _NO_RAY, reason="needs the ray extra")) for launcher in LAUNCHERS])
def test_a_parallel_sweep_shares_one_store_created_by_the_parent(tmp_path, subject_cache, launcher):
    ws = Workspace(tmp_path, subject_cache, pristine_store=False)  # the parent creates and migrates it
    _ok(ws.run("experiments.run", f"sweep={launcher}", f"locator={','.join(LAUNCHED_LOCATORS)}", "limit=1",
               multirun=True))
    [parent] = ws.runs(filter_string="tags.`loclab.kind` = 'sweep'")
    assert parent.info.status == "FINISHED"
    assert {c.data.tags["mlflow.parentRunId"] for c in ws.jobs()} == {parent.info.run_id}
    # the swept keys reach the jobs wherever the launcher runs them
    assert sorted(j.info.run_name for j in ws.jobs()) == ["bm25 · @demo limit=1", "two_phase · @demo limit=1"]
    assert all(j.info.status == "FINISHED" for j in ws.jobs())


def test_unknown_locator_lists_the_known_ones(ws):
    proc = ws.run("experiments.run", "locator=nope")
    assert proc.returncode != 0
    assert "bm25" in proc.stderr and "two_phase" in proc.stderr


def test_missing_dataset_file_fails_the_job_with_a_clear_error(ws, tmp_path):
    proc = ws.run("experiments.run", "locator=bm25", f"dataset.loader.path={tmp_path}/absent.jsonl")
    assert proc.returncode == 2 and "dataset file not found" in proc.stderr
    assert ws.jobs() == []  # a path mistyped is no run


SWEBENCH_FEW = "tasks=[pallets__flask-4992,psf__requests-2317,marshmallow-code__marshmallow-1343]"


def test_swebench_subset_runs_on_a_few_instances(ws, swebench_file):
    overrides = ("dataset=swebench_lite_pypi", SWEBENCH_FEW)
    env_path = f"dataset.loader.path={swebench_file}"
    for locator in ("bm25", "two_phase"):
        _ok(ws.run("experiments.run", f"locator={locator}", env_path, *overrides))
    jobs = ws.jobs("loclab-swebench_lite_pypi")
    assert {j.data.tags["loclab.locator"] for j in jobs} == {"bm25", "two_phase"}
    assert all(j.data.metrics["6 tasks/ok"] == 3 for j in jobs)
    bm25 = next(j for j in jobs if j.data.tags["loclab.locator"] == "bm25")
    two_phase = next(j for j in jobs if j.data.tags["loclab.locator"] == "two_phase")
    assert bm25.data.metrics["2 cost/source_lines_read"] > two_phase.data.metrics["2 cost/source_lines_read"]
    per_task = ws.client().download_artifacts(bm25.info.run_id, "per_task.csv", str(ws.root))
    assert len(pd.read_csv(per_task)) == 3


def test_results_are_addressed_by_what_they_depend_on(tmp_path, subject_cache):
    from hydra import compose, initialize_config_dir

    from experiments.job.paths import CONF_DIR, register_resolvers
    from experiments.job.pipeline import Job
    from dataset.manifest import load_manifest

    register_resolvers()
    manifest = load_manifest(tampered_manifest(tmp_path, tamper=set()))
    outputs = tmp_path / "peer.jsonl"
    outputs.write_text('{"task": "good", "files": [{"path": "pkg/core.py"}]}\n')

    def key(*overrides):
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            cfg = compose("config", overrides=list(overrides))
        return Job(cfg, manifest, locator_name=overrides[0].split("=")[1]).run_key

    imported = ("locator=imported", f"locator.path={outputs}", "locator.system=Peer")
    assert key("locator=bm25") == key("locator=bm25", "system_one.backend.scale=5")
    assert key("locator=two_phase") != key("locator=two_phase", "system_one.backend.scale=5")
    before = key(*imported)
    outputs.write_text('{"task": "good", "files": [{"path": "pkg/util.py"}]}\n')
    assert key(*imported) != before


def test_changed_locator_code_never_reuses_an_old_result(tmp_path, subject_cache):
    """A copy of loclab (no git) runs a job, its reader's wording changes, the same job runs again:
    the results are new, the code identity differs; identical code then reuses them."""
    from experiments.job.paths import PROJECT_ROOT

    copy = tmp_path / "loclab"
    for part in ("locator", "experiments", "dataset", "metrics", "conf", "datasets"):
        shutil.copytree(PROJECT_ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    ws = Workspace(tmp_path / "ws", subject_cache, project=copy)

    def job():
        _ok(ws.run("experiments.run", "locator=two_phase", "limit=1"))
        return max(ws.jobs(), key=lambda r: r.info.start_time)

    first = job()
    assert first.data.tags["loclab.results_dir"].startswith(str(ws.root))
    reader = copy / "locator" / "reading" / "engine.py"
    reader.write_text(reader.read_text().replace("to find the code the task is about?", "to find the code for the task?"))
    changed = job()
    assert changed.data.metrics["6 tasks/reused"] == 0
    assert changed.data.tags["loclab.code_identity"] != first.data.tags["loclab.code_identity"]
    assert changed.data.tags["loclab.run_key"] != first.data.tags["loclab.run_key"]
    same = job()
    assert same.data.metrics["6 tasks/reused"] == 1 and same.data.tags["loclab.run_key"] == changed.data.tags["loclab.run_key"]


def test_the_traces_are_in_the_store_before_the_interpreter_exits(ws):
    """Python 3.12 refuses a new thread once the interpreter is exiting, so MLflow's export queue, if
    first used then, loses every trace of the job (seen: 0 of 13). Here any Python refuses it after
    the job returns, as 3.12 does: the job's traces must already be in the store."""
    exiting_like_3_12 = (
        "import runpy, sys, threading\n"
        "def refused(self): raise RuntimeError(\"can't create new thread at interpreter shutdown\")\n"
        "sys.argv = ['experiments.run', *sys.argv[1:]]\n"
        "try:\n    runpy.run_module('experiments.run', run_name='__main__')\n"
        "finally:\n    threading.Thread.start = refused\n")
    proc = subprocess.run([sys.executable, "-c", exiting_like_3_12, "limit=3", f"hydra.run.dir={ws.root}/hydra"],
                          cwd=ws.project, env=ws.env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [job] = ws.jobs()
    traces = ws.client().search_traces(locations=[job.info.experiment_id], run_id=job.info.run_id)
    assert len(traces) == 3
    # every span too: a root per task and one per System One request its trace.jsonl recorded
    requests = sum(1 for path in (ws.root / "results").rglob("trace.jsonl")
                   for event in read_trace(path) if event.kind == EventKind.REQUEST)
    assert requests > 3 and sum(len(ws.client().get_trace(t.info.trace_id).data.spans) for t in traces) == requests + 3


def test_tasks_in_flight_at_once_give_the_serial_run_s_results_and_logging(ws):
    common = ("locator=two_phase", "limit=4", "tracking.task_runs=true", "system_one.cache.enabled=false")
    _ok(ws.run("experiments.run", *common))
    _ok(ws.run("experiments.run", *common, "concurrency.tasks=4", f"paths.results_dir={ws.root / 'concurrent'}"))
    serial, concurrent = sorted(ws.jobs(), key=lambda r: r.info.start_time)
    clock = ["elapsed_ms", "model_wall_time_ms", "model_critical_path_ms", "result"]
    tables = [pd.read_csv(ws.client().download_artifacts(j.info.run_id, "per_task.csv", str(ws.root / j.info.run_id)))
              .drop(columns=clock) for j in (serial, concurrent)]
    pd.testing.assert_frame_equal(tables[0], tables[1])  # same rows, same order, same values
    for job in (serial, concurrent):
        tasks = ws.runs(filter_string=f"tags.`mlflow.parentRunId` = '{job.info.run_id}'")
        assert sorted(t.info.run_name for t in tasks) == [f"{t}/r0" for t in sorted(tables[0].task_id)]
    results = [sorted(root.rglob("localization-result.json")) for root in (ws.root / "results", ws.root / "concurrent")]
    assert len(results[0]) == 4 and [what_was_found(json.loads(p.read_text())) for p in results[0]] == \
        [what_was_found(json.loads(p.read_text())) for p in results[1]]
    assert concurrent.data.params["concurrency.tasks"] == "4"
    # traces are logged from the tasks' threads as they end, each still the job's: the same spans as serial
    spans = [sorted((t.data.spans[0].inputs["task"], len(t.data.spans)) for t in
                    ws.client().search_traces(locations=[j.info.experiment_id], run_id=j.info.run_id))
             for j in (serial, concurrent)]
    assert len(spans[0]) == 4 and spans[0] == spans[1]


def test_the_overhead_fraction_counts_overlapping_tasks_once():
    # 4 tasks in flight: 8 s of localization and 2 s of subjects summed over tasks, in 2.5 s of wall time
    stages = {f"{stage}_s": 0.0 for stage in run_module.HarnessStage} | {"localize_s": 8.0, "subject_s": 2.0}
    harness = stages | {"tasks_wall_s": 2.5, "job_s": 3.0}
    assert run_module.overhead_fraction(harness) == pytest.approx(1 - 2.0 / 3.0)  # not 1 - 8/3 < 0
    serial = stages | {"tasks_wall_s": 10.0, "job_s": 12.0}
    assert run_module.overhead_fraction(serial) == pytest.approx(1 - 8.0 / 12.0)


def test_a_job_leaves_its_heap_frozen_so_the_exit_does_not_scan_it(monkeypatch):
    import gc

    from experiments.job import runner as run

    monkeypatch.setattr(run, "run_job", lambda cfg, stage: None)
    gc.unfreeze()
    try:
        run.run_or_exit(None, run.Stage.LOCALIZE)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_a_job_says_which_backend_decided(tmp_path):
    from dataset.manifest import load_manifest
    from experiments.job.config import compose_config
    from experiments.job.pipeline import Job

    manifest = load_manifest(tampered_manifest(tmp_path, tamper=set()))
    lexical = Job(compose_config("locator=two_phase"), manifest, "two_phase")
    assert "lexical backend" in run_module.decided_by(lexical) and "cannot judge geometry-only" in run_module.decided_by(lexical)
    assert run_module.decided_by(Job(compose_config("locator=bm25"), manifest, "bm25")) is None
    model = Job(compose_config("locator=two_phase", "system_one=local_llm"), manifest, "two_phase")
    assert run_module.decided_by(model) == "System One: qwen2.5-coder-0.5b-instruct-q4_k_m"


def test_a_job_measures_its_process_peak_rss_and_each_cache_s_hit_rate():
    from locator.system_one.tokens import count_lookups, count_tokens

    text = "a text counted twice by the process-measures test\n"
    hits0, misses0 = count_lookups()
    for _ in range(4):
        count_tokens(text)
    hits, misses = count_lookups()
    assert (hits - hits0, misses - misses0) == (3, 1) and hits != misses  # a rate and its complement differ
    measures = run_module.process_measures()
    assert measures["process_token_counts_cache_hit_rate"] == pytest.approx(hits / (hits + misses), abs=1e-9)
    assert measures["process_peak_rss_mib"] > 10  # this interpreter with pandas and MLflow loaded
