"""compare / calibrate / pareto / repeatability end to end: real jobs into a real MLflow store,
then the analysis commands read them back."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from types import SimpleNamespace

import pandas as pd
import pytest
from omegaconf import OmegaConf

from dataset.manifest import Gold, GoldSpan, LocalSubject, ManifestRow, build_manifest, write_manifest
from experiments.analysis import calibrate, compare, pareto, repeatability
from metrics import paired
from metrics.statistics import PERMUTATION_TEST
from experiments.analysis.runs import AnalysisError, Arm, TableFormat, load_arm, same_task_set, table_text
from experiments.job.paths import PROJECT_ROOT
from experiments.tracking.metric_keys import metric_key
from locator.task import SubjectIdentity, Task
from tests.conftest import write_tree
from tests.experiments.cli import Workspace

FILLER = "".join(f"def unrelated_{i}(value):\n    return value * {i}\n\n" for i in range(40))


def _manifest(tmp_path, distinct_texts: bool = False):
    """Four tasks over two repositories. `distinct_texts`: each task's text names its case, so no two
    tasks send System One the same request (identical tasks share every decision, and so every draw)."""
    rows = []
    for n, (repo, split) in enumerate([("org/a", "dev"), ("org/a", "test"), ("org/b", "dev"), ("org/b", "test")]):
        root = write_tree(tmp_path / f"subject{n}", {
            "pkg/config_loader.py": FILLER + "def parse_config(path, section):\n    return load(path)\n",
            "pkg/section_parser.py": FILLER + "def read_section(text):\n    return text\n",
            **{f"pkg/mod{i}.py": FILLER for i in range(4)},
        })
        rows.append(ManifestRow(
            task=Task(id=f"task-{n}", text="parse_config ignores the section argument when reading a section"
                      + (f" (case {n})" if distinct_texts else ""),
                      subject=SubjectIdentity(repository=repo, revision="1"), metadata={"split": split}),
            subject=LocalSubject(path=str(root)),
            gold=Gold(files=["pkg/config_loader.py"], spans=[GoldSpan(path="pkg/config_loader.py", start_line=121,
                                                                      end_line=122, region=0)], rule="t"),
        ))
    path = tmp_path / "manifest.jsonl"
    write_manifest(build_manifest("local", "1", "d", "t", rows, str(path)), path)
    return path


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("analysis")
    ws = Workspace(root / "ws", root / "cache")
    data = (f"dataset.loader.path={_manifest(root)}", "dataset.name=local")
    for proc in (
        ws.run("experiments.run", "locator=bm25", "locator.top_files=1,2,5", *data,
               "tracking.sweep_compare_report=false", multirun=True),  # its own report: tests/experiments/test_run.py
        ws.run("experiments.run", "locator=two_phase", *data, "repeats=2"),
    ):
        assert proc.returncode == 0, proc.stderr[-3000:]
    return ws


def _args(ws, *rest):
    return ["--experiment", "loclab-local", "--db", str(ws.db), "--out", str(ws.root / "report"), *rest]


def test_compare_paired_report(store, capsys):
    jobs = store.jobs("loclab-local")
    bm25 = next(j for j in jobs if j.data.params.get("locator.top_files") == "5")
    two_phase = next(j for j in jobs if j.data.tags["loclab.locator"] == "two_phase")
    assert compare.main(_args(store, bm25.info.run_id, two_phase.info.run_id)) == 0
    out = capsys.readouterr().out
    table = pd.read_csv(next((store.root / "report").glob("compare_*.csv")), index_col=0)
    assert table.loc["file_precision", "n"] == 4 and table.loc["file_precision", "clusters"] == 2
    for column, job in (("mean_base", bm25), ("mean_other", two_phase)):  # each arm's own tasks, as its job logged them
        for metric in ("file_precision", "line_recall", "input_tokens"):
            assert table.loc[metric, column] == pytest.approx(job.data.metrics[metric_key(metric)]), (column, metric)
    assert set(table["test"].dropna()) <= {PERMUTATION_TEST, paired.UNTESTED}
    assert "p_holm" in table and "Holm across" in out and "2 repositories are too few" in out
    assert re.search(r"Holm across (\d+) comparisons", out).group(1) == str((table.holm_family == "in").sum())
    funnel = pd.read_csv(store.root / "report" / "funnel.csv", index_col=0)  # the stage funnel, side by side
    counts = [c for c in funnel.columns if c.startswith("n ")]
    assert len(counts) == 2 and (funnel.loc["discovery_recall", counts] == 4).all()  # both arms, every shared task
    assert funnel.loc["discovery_recall"].drop(counts).notna().all()
    [plot] = list((store.root / "report").glob("difference_*.png"))
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 5000
    assert not store.runs("loclab-local", "tags.`loclab.kind` = 'report'")  # never among the jobs it reports on
    reports = store.runs("loclab-local-reports", "tags.`loclab.kind` = 'report'")
    [report] = [r for r in reports if r.data.tags["loclab.report"] == "compare"]
    assert "loclab.reported_sweep" not in report.data.tags  # its runs share no sweep
    jobs_artifacts = store.client().get_experiment_by_name("loclab-local").artifact_location
    assert report.info.artifact_uri.startswith(jobs_artifacts)  # beside the jobs' artifacts, not in ./mlruns
    assert report.data.tags["loclab.reported_runs"] == f"{bm25.info.run_id},{two_phase.info.run_id}"
    names = [a.path for a in store.client().list_artifacts(report.info.run_id)]
    assert names and all(re.fullmatch(r"[A-Za-z0-9._-]+", n) for n in names)  # the MLflow UI serves only these
    # named for its arms, its headline numbers as metrics: the difference in file Acc@5, what sweeps rank by
    assert report.info.run_name.startswith("compare · ") and " vs " in report.info.run_name
    diff = table.loc["file_acc_all@5", "diff"]
    assert report.data.metrics["1 quality/file_acc_all_at_05_diff_arm1"] == pytest.approx(diff, abs=1e-4)
    assert "1 quality/file_acc_all_at_05_diff_arm1_ci95_low" in report.data.metrics


def test_a_compare_of_many_arms_prints_one_row_per_arm_and_keeps_every_table_in_the_report(store, capsys, tmp_path):
    jobs = store.jobs("loclab-local")
    ids = [j.info.run_id for j in sorted(jobs, key=lambda j: j.info.start_time)]
    out_dir = tmp_path / "many"
    args = ["--experiment", "loclab-local", "--db", str(store.db), "--out", str(out_dir), *ids]
    assert compare.main(args) == 0
    short = capsys.readouterr().out
    assert "each arm against" in short and "--full prints them" in short
    assert len(list(out_dir.glob("compare_*.csv"))) == len(ids) - 1  # nothing left out of the report
    assert "win/loss/tie of" not in short  # no per-arm tables in the terminal
    assert compare.main([*args[:5], str(tmp_path / "full"), *ids, "--full"]) == 0
    full = capsys.readouterr().out
    assert "each arm against" not in full and full.count("win/loss/tie of") == len(ids) - 1


def test_compare_judges_runs_against_a_reference_run_instead_of_gold(store, capsys, tmp_path):
    """Seed 000's accuracy study: each run against a reference localization of the same tasks."""
    jobs = store.jobs("loclab-local")
    by_top = {j.data.params.get("locator.top_files"): j for j in jobs if j.data.tags["loclab.locator"] == "bm25"}
    two_phase = next(j for j in jobs if j.data.tags["loclab.locator"] == "two_phase")
    out = tmp_path / "reference"
    args = ["--experiment", "loclab-local", "--db", str(store.db), "--out", str(out)]
    assert compare.main([*args, by_top["1"].info.run_id, two_phase.info.run_id, "--reference", by_top["5"].info.run_id]) == 0
    means = pd.read_csv(out / "reference_means.csv", index_col=0)
    assert list(means.columns) == ["ref_primary_file_recall", "ref_primary_region_recall", "ref_primary_line_coverage",
                                   "ref_precision_proxy"] and len(means) == 2
    assert means.stack().dropna().between(0, 1).all()  # undefined (no evidence shown) is no number, not 0
    # one file where the reference names five: the reference, not the run itself, is what it is judged by
    assert means["ref_primary_file_recall"].iloc[0] < 1
    report = max(store.runs("loclab-local-reports", "tags.`loclab.report` = 'compare'"), key=lambda r: r.info.start_time)
    assert report.data.tags["loclab.reference_run"] == by_top["5"].info.run_id and "against the reference" in report.info.run_name
    assert report.data.metrics["1 reference/ref_primary_file_recall_arm0"] == pytest.approx(means.iloc[0, 0], abs=1e-4)
    # a run judged against itself agrees with it perfectly
    assert compare.main([*args[:-1], str(tmp_path / "self"), by_top["5"].info.run_id, "--reference", by_top["5"].info.run_id]) == 0
    assert (pd.read_csv(tmp_path / "self" / "reference_means.csv", index_col=0).iloc[0] == 1.0).all()


def test_compare_refuses_different_task_sets(store):
    arm = load_arm(store.client(), store.jobs("loclab-local")[0])
    other = Arm(arm.run_id, "other", arm.params, arm.tags | {"loclab.manifest_blake3": "0" * 64}, arm.per_task)
    with pytest.raises(AnalysisError, match="different task sets"):
        same_task_set([arm, other])


def test_calibrate_chooses_on_dev_and_reports_on_test(store, capsys):
    [parent] = store.runs("loclab-local", "tags.`loclab.kind` = 'sweep'")
    code = calibrate.main(_args(store, "--sweep", parent.info.run_id, "--param", "locator.top_files",
                                "--quality", "file_precision", "--cost", "source_lines_read"))
    out = capsys.readouterr().out
    assert code == 0
    # precision falls as more files are returned, cost (bm25 reads everything) is equal: top_files=1 wins
    assert "recommended (max file_precision on dev" in out and "{'locator.top_files': '1'}" in out
    table = pd.read_csv(store.root / "report" / "calibration.csv")
    assert set(table["n[dev]"]) == {2} and set(table["n[test]"]) == {2}
    assert (store.root / "report" / "calibration_curves.png").is_file()
    # the report run is out of the jobs' runs table (and charts), and links the sweep and its jobs
    report = max(store.runs("loclab-local-reports", "tags.`loclab.report` = 'calibrate'"), key=lambda r: r.info.start_time)
    assert report.data.tags["loclab.reported_sweep"] == parent.info.run_id
    jobs = [j.info.run_id for j in store.jobs("loclab-local") if j.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert set(report.data.tags["loclab.reported_runs"].split(",")) == set(jobs)
    assert all(f"/runs/{j}?workflowType=machine_learning)" in report.data.tags["mlflow.note.content"] for j in jobs)
    # named for what it weighed, its recommendation's numbers on both splits as metrics
    assert report.info.run_name == "calibrate · top_files over 3 settings (chosen on dev)"
    chosen = table[table.recommended].iloc[0]
    assert report.data.metrics["1 quality/file_precision_dev"] == pytest.approx(chosen["file_precision[dev]"], abs=1e-4)
    assert report.data.metrics["1 quality/file_precision_test"] == pytest.approx(chosen["file_precision[test]"], abs=1e-4)
    assert report.data.metrics["8 sweep/settings"] == 3


def test_pareto_over_all_jobs(store, capsys):
    assert pareto.main(_args(store, "--quality", "file_precision", "--cost", "source_lines_read")) == 0
    table = pd.read_csv(store.root / "report" / "pareto.csv", index_col=0)
    assert table.pareto.any() and len(table) == 4
    best = table.loc[table.pareto]
    assert (best.source_lines_read == table.source_lines_read.min()).any()
    report = max(store.runs("loclab-local-reports", "tags.`loclab.report` = 'pareto'"), key=lambda r: r.info.start_time)
    assert report.info.run_name == f"pareto · file_precision vs source_lines_read, {len(best)} of 4 on the front"
    assert report.data.metrics["8 sweep/pareto_front"] == len(best) and report.data.metrics["8 sweep/settings"] == 4
    assert report.data.metrics["1 quality/file_precision_best"] == pytest.approx(table.file_precision.max(), abs=1e-4)


def test_pareto_speaks_swe_explore_s_budget_metrics(store, capsys):
    """The field's axes: core lines within a 300-line budget, and useful lines per line given."""
    for quality in ("recall_at_300", "context_efficiency"):
        assert pareto.main(_args(store, "--quality", quality, "--cost", "input_tokens")) == 0
        table = pd.read_csv(store.root / "report" / "pareto.csv", index_col=0)
        assert quality in table and table[quality].between(0, 1).all() and table.pareto.any()
    assert pareto.main(_args(store, "--quality", "recall_at_301")) == 2
    assert "no per-task metric recall_at_301" in capsys.readouterr().err


def test_repeatability_of_a_deterministic_config(store, capsys):
    two_phase = next(j for j in store.jobs("loclab-local") if j.data.tags["loclab.locator"] == "two_phase")
    assert repeatability.main(_args(store, two_phase.info.run_id)) == 0
    out = capsys.readouterr().out
    assert "byte-identical results (clock and physical-cost fields aside): 4/4 tasks" in out
    summary = pd.read_csv(store.root / "report" / "summary.csv", index_col=0)
    assert summary.loc["file_recall", "std"] == 0 and summary.loc["file_recall", "repeats"] == 2
    # the spread and the agreement are on the job itself, charted, and its description counts tasks, not task runs
    assert two_phase.data.metrics["6 repeats/file_acc_all_at_05_std"] == 0 and two_phase.data.metrics["6 repeats/identical_tasks"] == 1
    assert "4 tasks × 2 repeats, task runs: 8 total" in two_phase.data.tags["mlflow.note.content"]
    # and on the report run, named for what it reports on
    [report] = store.client().search_runs([store.client().get_experiment_by_name("loclab-local-reports").experiment_id],
                                          "tags.`loclab.report` = 'repeatability'")
    assert report.data.metrics["6 repeats/file_recall_std"] == 0 and report.data.metrics["6 repeats/identical_tasks"] == 1
    assert report.info.run_name.startswith("repeatability · ") and "(2 repeats)" in report.info.run_name


def test_unknown_runs_and_experiments_are_clear_errors(store, capsys):
    assert compare.main(_args(store, "0" * 32, "1" * 32)) == 2
    assert "no run with id 00000000" in capsys.readouterr().err
    assert compare.main(["--experiment", "nope", "--db", str(store.db), "a", "b"]) == 2
    assert "no MLflow experiment 'nope'" in capsys.readouterr().err
    assert pareto.main(_args(store, "--runs", "no-such-run-name")) == 2


def test_pareto_of_a_single_run_is_a_clear_error(store, capsys):
    bm25 = next(j for j in store.jobs("loclab-local") if j.data.tags["loclab.locator"] == "bm25")
    assert pareto.main(_args(store, "--runs", bm25.info.run_id)) == 2
    assert "a Pareto front compares settings, and 1 run was read" in capsys.readouterr().err


def test_repeatability_needs_repeats(store, capsys):
    bm25 = next(j for j in store.jobs("loclab-local") if j.data.tags["loclab.locator"] == "bm25")
    assert repeatability.main(_args(store, bm25.info.run_id)) == 2
    assert "single repeat" in capsys.readouterr().err


def test_stability_detects_a_changed_localization_but_not_a_changed_clock_or_checkout():
    code = {"source_blake3": "c" * 64, "git_revision": "abc", "dirty": False}
    base = {"files": [{"path": "a.py", "evidence": [{"start_line": 1, "end_line": 4}]}],
            "cost": {"elapsed_ms": 5.0, "model_calls": 2, "physical": {"model_calls": 2}},
            "provenance": {"code": code, "run_key": "k"}}
    slower = base | {"cost": {"elapsed_ms": 9.0, "model_calls": 2, "physical": {"model_calls": 0}}}
    committed = base | {"provenance": {"code": code | {"git_revision": "def", "dirty": True}, "run_key": "k"}}
    moved = base | {"files": [{"path": "a.py", "evidence": [{"start_line": 2, "end_line": 4}]}]}
    other_code = base | {"provenance": {"code": code | {"source_blake3": "d" * 64}, "run_key": "k"}}
    assert repeatability.stability([base, slower, committed])["identical"] == 1.0
    assert repeatability.stability([base, other_code])["identical"] == 0.0
    changed = repeatability.stability([base, moved])
    assert changed["identical"] == 0.0 and changed["file_jaccard"] == 1.0
    assert changed["evidence_line_jaccard"] == pytest.approx(3 / 4)


def _job(store, *overrides):
    data = (f"dataset.loader.path={store.root.parent / 'manifest.jsonl'}", "dataset.name=local")
    proc = store.run("experiments.run", *overrides, *data)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return max(store.jobs("loclab-local"), key=lambda r: r.info.start_time)


def test_compare_reduces_repeats_per_task_and_says_so(store, capsys):
    two_phase = next(j for j in store.jobs("loclab-local") if j.data.tags["loclab.locator"] == "two_phase")
    bm25 = next(j for j in store.jobs("loclab-local") if j.data.params.get("locator.top_files") == "5")
    assert compare.main(_args(store, bm25.info.run_id, two_phase.info.run_id)) == 0
    out = capsys.readouterr().out
    assert "4 tasks every run completed; per-task values: mean over repeats per task (repeats: [1, 2])" in out
    table = pd.read_csv(next((store.root / "report").glob("compare_*.csv")), index_col=0)
    assert table.loc["file_recall", "n"] == 4  # tasks, not task x repeat rows


def test_pareto_restricts_to_the_tasks_every_run_completed(store, capsys):
    few = _job(store, "locator=bm25", "locator.top_files=3", "tasks=[task-0,task-1]")
    full = next(j for j in store.jobs("loclab-local") if j.data.params.get("locator.top_files") == "5")
    assert pareto.main(_args(store, "--runs", few.info.run_id, full.info.run_id, "--quality", "file_precision",
                             "--cost", "source_lines_read")) == 0
    assert "2 tasks every run completed" in capsys.readouterr().out
    table = pd.read_csv(store.root / "report" / "pareto.csv", index_col=0)
    assert set(table.n) == {2}


def test_pareto_refuses_runs_that_share_no_task(store, capsys):
    first = _job(store, "locator=bm25", "locator.top_files=4", "tasks=[task-0]")
    other = _job(store, "locator=bm25", "locator.top_files=4", "tasks=[task-3]")
    assert pareto.main(_args(store, "--runs", first.info.run_id, other.info.run_id)) == 2
    assert "share no completed task" in capsys.readouterr().err


def test_a_name_matching_several_runs_is_said(store, capsys):
    for _ in range(2):  # the same job twice: one name, two runs
        _job(store, "locator=bm25", "locator.top_files=2", "limit=1")
    name = "bm25@local limit=1 top_files=2"  # the dataset's path is not part of a name
    assert len([j for j in store.jobs("loclab-local") if j.info.run_name == name]) == 2
    from experiments.analysis.runs import find_runs

    [picked] = find_runs(store.client(), "loclab-local", name)
    err = capsys.readouterr().err
    assert f"the name {name!r} matches" in err and "using the latest" in err and picked.info.run_name == name
    [by_short_id] = find_runs(store.client(), "loclab-local", picked.info.run_id[:8])  # a short id names a run too
    assert by_short_id.info.run_id == picked.info.run_id


def test_analysis_finds_the_runner_store_and_experiment(store, monkeypatch):
    import argparse

    from experiments.analysis.runs import open_store

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("LOCLAB_MLFLOW_DB", str(store.db))
    args = argparse.Namespace(db=None, experiment=None, dataset=None)
    client = open_store(args)
    assert args.experiment == "loclab-demo"  # the runner's default dataset
    assert client.get_experiment_by_name("loclab-local") is not None  # the store named by LOCLAB_MLFLOW_DB
    args = argparse.Namespace(db=None, experiment=None, dataset="swebench_lite_pypi")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{store.db}")
    monkeypatch.setenv("LOCLAB_MLFLOW_DB", str(store.root / "elsewhere.db"))
    client = open_store(args)  # MLFLOW_TRACKING_URI wins, as in the runner
    assert args.experiment == "loclab-swebench_lite_pypi" and client.get_experiment_by_name("loclab-local") is not None


def test_tables_export_as_markdown_and_latex():
    frame = pd.DataFrame({"mean": [0.5, float("nan")], "n": [3, 4]},
                         index=pd.Index(["file_acc_all@5", "a_b|c"], name="metric"))
    markdown = table_text("t", frame, TableFormat.MARKDOWN)
    assert markdown.splitlines()[2:] == ["| metric | mean | n |", "|---|---|---|", "| file_acc_all@5 | 0.5 | 3 |",
                                         "| a_b\\|c | — | 4 |"]
    latex = table_text("t", frame, TableFormat.LATEX)
    assert "\\begin{tabular}{lrr}" in latex and "file\\_acc\\_all@5 & 0.5 & 3 \\\\" in latex
    assert "a\\_b|c & -- & 4 \\\\" in latex and latex.rstrip().endswith("\\end{tabular}")


def _tasks(values: dict[str, list[float]], repos: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(values, index=[f"t{i}" for i in range(len(repos))])
    frame["repository"] = repos
    return frame


def test_compare_clusters_its_ci_and_corrects_across_arms_over_distinct_metrics():
    repos = ["a"] * 10 + ["b"] * 10 + ["c"] * 10
    base = _tasks({"line_recall": [0.0] * 30, "pack_line_recall": [0.0] * 30, "file_recall": [0.0] * 30}, repos)
    # the other arm: +1 on every task of a and b, -0.5 on every task of c
    gain = [1.0] * 20 + [-0.5] * 10
    other = _tasks({"line_recall": gain, "pack_line_recall": gain, "file_recall": gain}, repos)
    metrics = ["line_recall", "pack_line_recall", "file_recall"]
    table = paired.compare_frames(base, other, metrics)
    # a resample of three repositories can be c, c, c: the clustered CI reaches c's -0.5 (tasks alone: ~0.5)
    assert table.loc["line_recall", "ci95_low"] == pytest.approx(-0.5)
    assert table.loc["line_recall", "clusters"] == 3 and table.loc["line_recall", "p"] == pytest.approx(4 / 8)
    duplicates = compare.duplicate_metrics([base, other], metrics)
    assert duplicates == {"pack_line_recall": "line_recall", "file_recall": "line_recall"}
    second = paired.compare_frames(base, other, metrics)
    family = compare.correct_across([table, second], duplicates)
    assert family == 2  # line_recall, in each of two arm comparisons
    assert table.loc["line_recall", "p_holm"] == pytest.approx(min(1.0, 2 * table.loc["line_recall", "p"]))
    assert pd.isna(table.loc["pack_line_recall", "p_holm"]) and table.loc["pack_line_recall", "holm_family"] == "= line_recall"


def test_holm_adjusts_a_family_of_small_p_values():
    repos = [f"r{i}" for i in range(12) for _ in range(2)]
    base = _tasks({"file_recall": [0.0] * 24, "line_recall": [0.0] * 24}, repos)
    other = _tasks({"file_recall": [1.0] * 24, "line_recall": [0.5, 0.0] * 12}, repos)
    table = paired.compare_frames(base, other, ["file_recall", "line_recall"])
    compare.correct_across([table], {})
    p = table.loc["file_recall", "p"]
    assert p < 0.01 and table.loc["file_recall", "p_holm"] == pytest.approx(min(1.0, 2 * p))


def test_a_metric_constant_over_every_run_stays_out_of_the_holm_family():
    """`false_complete_claims` at 0 in every task of every arm has nothing to test: in the family it only
    made every other p larger (m 11 where 10 were tested)."""
    repos = [f"r{i}" for i in range(12) for _ in range(2)]
    base = _tasks({"file_recall": [0.0] * 24, "false_complete_claims": [0.0] * 24}, repos)
    other = _tasks({"file_recall": [1.0] * 24, "false_complete_claims": [0.0] * 24}, repos)
    metrics = ["file_recall", "false_complete_claims"]
    constant = compare.constant_metrics([base, other], metrics)
    assert constant == ["false_complete_claims"]
    table = paired.compare_frames(base, other, metrics)
    assert compare.correct_across([table], {}, constant) == 1
    assert table.loc["file_recall", "p_holm"] == pytest.approx(table.loc["file_recall", "p"])  # a family of one
    assert table.loc["false_complete_claims", "holm_family"] == "constant: not tested"
    assert pd.isna(table.loc["false_complete_claims", "p_holm"])


def test_a_metric_without_values_is_untested_not_a_crash():
    repos = ["a", "a", "b", "b"]
    native = _tasks({"file_recall": [1.0, 0.0, 1.0, 1.0], "model_calls": [3.0, 4.0, 5.0, 6.0]}, repos)
    imported = _tasks({"file_recall": [1.0, 1.0, 0.0, 1.0], "model_calls": [None] * 4}, repos)  # a peer's cost: null
    table = paired.compare_frames(native, imported, ["file_recall", "model_calls", "line_recall"])
    assert table.loc["model_calls", "test"] == paired.UNTESTED and table.loc["line_recall", "n"] == 0
    assert compare.correct_across([table], {}) == 1
    assert table.loc["model_calls", "holm_family"] == "cost: not corrected"


def test_repeatability_with_sampled_decisions_sees_the_noise(tmp_path, capsys):
    """Each task draws its own decisions: with four identical tasks every task drew the same samples, so
    one chance in ~9 (per code version: the backend's code is in the decision key) showed no noise at all."""
    ws = Workspace(tmp_path / "ws", tmp_path / "cache")
    data = (f"dataset.loader.path={_manifest(tmp_path, distinct_texts=True)}", "dataset.name=local")
    proc = ws.run("experiments.run", "locator=two_phase", *data, "repeats=3", "sampling.seed=0")
    assert proc.returncode == 0, proc.stderr[-3000:]
    [job] = ws.jobs("loclab-local")
    assert job.data.tags["loclab.system_one_identity"].endswith("|sampled(seed=0)")
    args = ["--experiment", "loclab-local", "--db", str(ws.db), "--out", str(ws.root / "report")]
    assert repeatability.main([*args, job.info.run_id]) == 0  # no violation: sampled repeats may differ
    out = capsys.readouterr().out
    assert "decisions are sampled" in out and "VIOLATION" not in out
    per_task = pd.read_csv(ws.root / "report" / "per_task.csv", index_col=0)
    assert per_task.identical.sum() < len(per_task)  # the model's noise is seen
    assert job.data.metrics["6 repeats/identical_tasks"] == per_task.identical.mean() < 1  # on the job, charted


def test_calibrate_refuses_a_split_the_tasks_do_not_have(store, capsys):
    """The demo set has no split: n[dev]=0 made every setting 'pareto' and still named a recommendation."""
    [parent] = store.runs("loclab-local", "tags.`loclab.kind` = 'sweep'")
    code = calibrate.main(_args(store, "--sweep", parent.info.run_id, "--param", "locator.top_files",
                                "--choose-split", "validation"))
    assert code == 2
    err = capsys.readouterr().err
    assert "no task of the shared set is in split 'validation' (--choose-split); splits present: ['dev', 'test']" in err


def test_model_arms_tables_each_arm_and_backend_from_the_store(store):
    """benchmarks/model_arms.py, the script behind benchmarks/README's model tables, over real jobs."""
    def model_arms(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "benchmarks/model_arms.py", "--db", str(store.db),
                               "--experiment", "loclab-local", *args],
                              cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)

    def table(*args: str) -> list[list[str]]:
        proc = model_arms(*args)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return [[cell.strip() for cell in line.strip("|").split("|")] for line in proc.stdout.splitlines()[2:]]

    rows = {(row[0], row[1]): row for row in table()}
    two_phase = rows[("two_phase, 2 sampled repeats", "lexical")]
    job = next(j for j in store.jobs("loclab-local") if j.data.tags["loclab.locator"] == "two_phase")
    assert two_phase[2] == "8"  # 4 tasks x 2 repeats
    assert two_phase[4] == f"{job.data.metrics['1 quality/file_acc_all_at_05']:.3f}"
    assert two_phase[8] == f"{job.data.metrics['2 cost/input_tokens']:,.0f}"
    hits, calls = job.data.metrics["2 cost/cache_hits"], job.data.metrics["2 cost/model_calls"]
    assert 0 < hits < calls and two_phase[13] == f"{hits / calls:.2f}"  # the repeats' shared decisions, cached
    cpu = job.data.metrics["7 harness/job_cpu_s"]
    assert cpu > 0 and two_phase[12] == f"{cpu / 8:.1f}"  # the job's CPU time over its 8 tasks
    assert two_phase[14] == "0.00"  # word overlap encodes nothing: no prefix to reuse
    assert ("bm25", "no model (the locator asks no System One)") in rows  # the job's own loclab.decided_by
    unmatched = model_arms("--split", "dev")  # every job here ran on both splits: an error, not an empty table
    assert unmatched.returncode == 2 and unmatched.stdout == ""
    assert "no finished job in 'loclab-local' matches --tasks None --split dev" in unmatched.stderr
    assert "splits present: ['None']" in unmatched.stderr and "task sets present: ['all'" in unmatched.stderr
    _job(store, "locator=bm25", "locator.top_files=2", "tasks=[task-0]")
    # only jobs run on exactly [task-0] (other tests here may add bm25 ones too): never the four-task two_phase
    one_task = table("--tasks", "task-0")
    assert one_task and all(row[0] == "bm25" and row[2] == "1" for row in one_task)


def test_model_arms_names_a_local_llm_setting_only_where_a_job_changed_it_from_the_yaml():
    """The arm's name reads the defaults from conf/system_one/local_llm.yaml, the one source of truth; a
    job from before `prefix_cache_slots` existed ran with one prefix cache, and is named so."""
    spec = importlib.util.spec_from_file_location("model_arms", PROJECT_ROOT / "benchmarks/model_arms.py")
    model_arms = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(model_arms)
    backend = OmegaConf.load(PROJECT_ROOT / "conf/system_one/local_llm.yaml").backend
    default, slots = backend.max_prompt_tokens, backend.prefix_cache_slots

    def job(max_prompt_tokens: int, prefix_cache_slots: int | None = slots) -> SimpleNamespace:  # what the name reads
        params = {"system_one.backend._target_": "locator.system_one.local_llm.LocalLLMBackend",
                  "system_one.backend.max_prompt_tokens": str(max_prompt_tokens)}
        if prefix_cache_slots is not None:
            params["system_one.backend.prefix_cache_slots"] = str(prefix_cache_slots)
        return SimpleNamespace(data=SimpleNamespace(params=params, tags={"loclab.locator": "two_phase"}))

    assert model_arms._arm(job(default)) == "two_phase"
    assert model_arms._arm(job(2 * default)) == f"two_phase (max_prompt_tokens={2 * default})"
    assert slots != 1 and model_arms._arm(job(default, None)) == "two_phase (prefix_cache_slots=1)"
    assert model_arms._arm(job(2 * default, slots + 2)) == \
        f"two_phase (max_prompt_tokens={2 * default}, prefix_cache_slots={slots + 2})"


def test_model_arms_names_the_global_schedules_when_all_wait_where_a_job_changed_it_or_ran_before_it():
    spec = importlib.util.spec_from_file_location("model_arms", PROJECT_ROOT / "benchmarks/model_arms.py")
    model_arms = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(model_arms)
    default = OmegaConf.load(PROJECT_ROOT / "conf/locator/schedule/global.yaml").reader.schedule.when_all_wait

    def job(when_all_wait: str | None, **params: str) -> SimpleNamespace:
        params = {"locator.reader.schedule._target_": "locator.reading.schedule.GlobalSchedule"} | params
        if when_all_wait is not None:
            params["locator.reader.schedule.when_all_wait"] = when_all_wait
        return SimpleNamespace(data=SimpleNamespace(params=params, tags={"loclab.locator": "two_phase"}))

    assert default != "end" and model_arms._arm(job(default)) == "two_phase global"
    assert model_arms._arm(job("end")) == "two_phase global (when_all_wait=end)"
    assert model_arms._arm(job(None)) == "two_phase global (when_all_wait=end)"  # a job from before the option
    llm = {"system_one.backend._target_": "locator.system_one.local_llm.LocalLLMBackend", "system_one.backend.max_prompt_tokens": "8192",
           "system_one.backend.prefix_cache_slots": str(model_arms._LOCAL_LLM.prefix_cache_slots)}
    assert model_arms._arm(job("end", **llm)) == "two_phase global (when_all_wait=end, max_prompt_tokens=8192)"


def test_model_arms_prefix_reuse_is_the_cached_share_of_the_input_that_reached_the_backend():
    spec = importlib.util.spec_from_file_location("model_arms", PROJECT_ROOT / "benchmarks/model_arms.py")
    model_arms = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(model_arms)
    job = {"2 cost/input_tokens": 5000.0, "2 cost/physical_input_tokens": 4000.0, "2 cost/physical_cached_input_tokens": 3000.0}
    assert model_arms._prefix_reuse(job) == "0.75"  # of the physical input, not of what the decision cache answered too
    assert model_arms._prefix_reuse({"2 cost/physical_input_tokens": 0.0, "2 cost/physical_cached_input_tokens": 0.0}) == "—"
    assert model_arms._prefix_reuse({"2 cost/physical_input_tokens": 10.0}) == "—"  # a job from before the metric


def test_model_arms_divides_cpu_time_by_the_tasks_the_job_localized():
    spec = importlib.util.spec_from_file_location("model_arms", PROJECT_ROOT / "benchmarks/model_arms.py")
    model_arms = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(model_arms)
    job = {"7 harness/job_cpu_s": 30.0, "7 harness/job_s": 90.0, "6 tasks/total": 8, "6 tasks/reused": 2}
    assert model_arms._cpu_per_task(job) == "5.0"  # CPU time, not the wall, over the 6 tasks localized
    assert model_arms._cpu_per_task({"7 harness/job_cpu_s": 3.0, "6 tasks/total": 7, "6 tasks/reused": 7}) == "—"
    assert model_arms._cpu_per_task({"6 tasks/total": 7}) == "—"  # a job from before the metric


def test_the_arms_overview_shows_a_difference_without_a_ci_where_there_is_none():
    """One shared task (or one value) has no interval: the overview says so instead of failing on it
    (a sweep's compare report over `limit=1,2` ended in a TypeError)."""
    arm = SimpleNamespace(label="bm25")
    bounded = pd.DataFrame({"diff": [0.5], "ci95_low": [0.1], "ci95_high": [0.9], "p_holm": [0.25], "n": [3]},
                           index=["file_acc_all@5"])
    unbounded = pd.DataFrame({"diff": [0.0], "ci95_low": [None], "ci95_high": [float("nan")], "p_holm": [None], "n": [1]},
                             index=["file_acc_all@5"])
    overview = compare.arms_overview([arm, SimpleNamespace(label="hybrid")], [bounded, unbounded], "file_acc_all@5")
    assert overview.loc["bm25", "ci95"] == "[0.1, 0.9]" and overview.loc["hybrid", "ci95"] == "—"
    assert overview.loc["hybrid", "Δ file_acc_all@5"] == 0.0 and overview.loc["hybrid", "n"] == 1
