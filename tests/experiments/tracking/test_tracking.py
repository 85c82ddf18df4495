from __future__ import annotations

import json
import sys

import mlflow
from mlflow.tracking import MlflowClient
import numpy as np
import pandas as pd
import pytest

from experiments.job import runner as run_module
from experiments.tracking.metric_keys import ci_bounds, ci_tag, metric_key
from experiments.tracking.store import flatten, job_run_name, short_overrides, swept_keys, swept_params
from experiments.tracking.vocabulary import Tag


def test_metric_keys_are_grouped_for_the_ui_and_replace_the_at_sign():
    assert metric_key("file_acc_all@5") == "1 quality/file_acc_all_at_05"
    assert metric_key("input_tokens") == "2 cost/input_tokens"
    assert metric_key("reading.terminated_model_stop") == "3 reading/terminated_model_stop"
    assert metric_key("tasks.ok") == "6 tasks/ok"
    tags = {Tag.CI95: ci_tag({"file_acc_all@5": (0.25, 0.75, 3)})}
    assert ci_bounds(tags, "file_acc_all@5") == (0.25, 0.75) and ci_bounds(tags, "line_recall") is None


def test_metric_keys_sort_as_read():
    """MLflow sorts a section's charts by key (issue 49, point 7): Acc@k in the order of k, and the pack's
    claims about itself (0 on most jobs) in their own section, not before the headline quality."""
    from metrics.definitions import METRICS

    names = ["file_acc_all@1", "file_acc_all@3", "file_acc_all@5", "file_acc_all@10"]
    keys = [metric_key(n) for n in names]
    assert sorted(keys) == keys and keys[2] == "1 quality/file_acc_all_at_05"
    assert metric_key("repeats.file_acc_all@5_std") == "6 repeats/file_acc_all_at_05_std"
    quality = sorted(k for k in map(metric_key, METRICS) if k.startswith("1 quality/"))
    assert quality[0].startswith("1 quality/file_acc_all_at_01"), quality[:3]
    assert metric_key("claims_complete").startswith("4 pack/") and metric_key("false_complete_claims").startswith("4 pack/")


def test_a_sweep_jobs_swept_values_are_short_params_of_their_own():
    """MLflow's Compare opens on the first three params, sorted, that differ among its runs, and a
    scatter of the first logged: the swept values under `0 swept/` sort first, named short so the
    axis titles fit side by side (issue 49, point 3)."""
    overrides = ["locator=two_phase", "locator.reader.action_threshold=0.05",
                 "locator.reader.evidence.observation_threshold=0.55", "limit=3"]
    swept = ("locator", "locator.reader.action_threshold", "locator.reader.evidence.observation_threshold")
    params = swept_params(overrides, swept)
    assert params == {"0 swept/locator": "two_phase", "0 swept/action_threshold": "0.05",
                      "0 swept/observation_threshold": "0.55"}
    assert sorted([*params, "dataset.name", "limit", "locator.name"])[:3] == sorted(params)
    assert swept_params(overrides, ()) == {}


def test_jobs_are_named_by_the_overrides_that_tell_them_apart():
    overrides = ["locator=two_phase", "locator.reader.evidence.observation_threshold=0.6", "limit=3",
                 "hydra.run.dir=/tmp/x", "dataset=demo"]
    assert job_run_name("two_phase", "demo", overrides) == "two_phase@demo limit=3 observation_threshold=0.6"
    assert job_run_name("bm25", "demo", ["locator=bm25"]) == "bm25@demo"
    assert job_run_name("bm25", "demo", ["locator=bm25", "sweep=slurm"]) == "bm25@demo"  # where it ran is no name
    # a shared last part is lengthened until the labels differ
    assert short_overrides(["locator.discovery.max_files=4", "locator.reader.max_files=2"]) == \
        ["discovery.max_files=4", "reader.max_files=2"]


def test_a_sweeps_jobs_are_named_by_what_differs_first():
    overrides = ["locator=two_phase", "locator.reader.evidence.observation_threshold=0.6",
                 "locator.reader.action_threshold=0.1", "limit=3", "dataset=demo"]
    swept = ("locator.reader.action_threshold", "locator.reader.evidence.observation_threshold")
    assert job_run_name("two_phase", "demo", overrides, swept) == \
        "0.1, 0.6 · action_threshold, observation_threshold · two_phase@demo limit=3"
    follow = ["locator=file_runtime", "locator/follow=references", "experiment=followfile_study"]
    assert job_run_name("file_runtime", "demo", follow, ("locator", "locator/follow")) == \
        "file_runtime, references · locator, follow · @demo"


def test_swept_keys_are_the_overrides_with_several_values_and_the_preset_params():
    assert swept_keys(["locator=two_phase,bm25", "limit=3", "tasks=[a,b]", "x=range(1,4)"], {"locator.k": "1,2"}) == \
        ["locator", "locator.k", "x"]


def test_flatten_takes_only_the_named_groups():
    from omegaconf import OmegaConf

    cfg = OmegaConf.create({"locator": {"reader": {"x": 1}}, "paths": {"root": "/r"}, "repeats": 2})
    assert flatten(cfg, ("locator", "repeats")) == {"locator.reader.x": 1, "repeats": 2}


@pytest.mark.parametrize("message", [
    "(sqlite3.IntegrityError) UNIQUE constraint failed: datasets.experiment_id",
    # PostgreSQL behind an `mlflow server` (seen in the team-server test before this was matched)
    '(psycopg2.errors.UniqueViolation) duplicate key value violates unique constraint "dataset_pk"'])
def test_a_lost_dataset_insert_race_is_retried(monkeypatch, message):
    # Two parallel jobs registering one dataset: the loser's insert fails on the unique key (measured:
    # 15 of 30 racing pairs without a retry, 0 with it); the retry finds the row and links it.
    calls = []

    def log_input(dataset, context):
        calls.append(context)
        if len(calls) == 1:
            raise mlflow.exceptions.MlflowException(message)

    monkeypatch.setattr(run_module.mlflow, "log_input", log_input)
    monkeypatch.setattr(run_module.time, "sleep", lambda s: None)
    run_module._log_input(object())
    assert calls == ["evaluation", "evaluation"]


def test_other_mlflow_errors_are_not_retried(monkeypatch):
    def log_input(dataset, context):
        raise mlflow.exceptions.MlflowException("disk I/O error")

    monkeypatch.setattr(run_module.mlflow, "log_input", log_input)
    with pytest.raises(mlflow.exceptions.MlflowException, match="disk I/O"):
        run_module._log_input(object())


def test_a_stopped_sweep_exits_as_stopped_even_when_its_signal_was_swallowed():
    # Python drops an exception raised inside a finalizer, so the handler's SystemExit can vanish and
    # the sweep run on to its end; its exit status must still say it was stopped
    import signal

    from experiments.tracking.store import SweepParentRun

    parent = SweepParentRun()
    try:
        parent._stop(signal.SIGTERM, None)
    except SystemExit:
        pass  # swallowed, as in a finalizer
    with pytest.raises(SystemExit) as stopped:
        parent.on_multirun_end(config=None)
    assert stopped.value.code == 128 + signal.SIGTERM


def _job_run(run_id: str, name: str, job: int):
    from mlflow.entities import Metric, Param, Run, RunData, RunInfo, RunTag

    info = RunInfo(run_id=run_id, experiment_id="1", user_id="u", status="FINISHED", start_time=0, end_time=1,
                   lifecycle_stage="active", run_name=name)
    tags = [RunTag("loclab.sweep_job", str(job)), RunTag("mlflow.runName", name), RunTag("loclab.splits", "dev,test"),
            RunTag(Tag.CI95, ci_tag({"file_acc_all@5": (0.25, 0.75, 3)}))]
    return Run(info, RunData(metrics=[Metric("1 quality/file_acc_all_at_05", 0.5, 0, 0)], params=[Param("limit", "1")], tags=tags))


def test_the_sweep_summary_lists_jobs_in_launch_order_and_never_cuts_a_command():
    from rich.console import Console

    from experiments.tracking.sweep_summary import print_sweep_summary

    jobs = [_job_run("b" * 32, "a_first_by_name · @demo", 1), _job_run("a" * 32, "z_last_by_name · @demo", 0)]
    console = Console(width=60, record=True)
    print_sweep_summary(_job_run("p" * 32, "sweep", 0), jobs, "loclab-demo", "mlflow ui --backend-store-uri x",
                        ["limit"], "http://127.0.0.1:5000", console=console)
    lines = console.export_text().splitlines()
    compare = next(line for line in lines if line.startswith("compare:"))
    assert compare.split()[4:6] == ["a" * 32, "b" * 32]  # job 0 first: compare's baseline
    assert compare.endswith("--experiment loclab-demo")  # one line, however narrow the console
    assert compare.split()[1] == sys.executable  # not a bare `python`: the venv need not be active
    assert any(line.startswith("calibrate:") and line.endswith("--param limit") for line in lines)
    # tasks without dev and test splits: calibrate would only refuse, so it is not printed (issue 49, point 13)
    for job in jobs:
        job.data._tags["loclab.splits"] = ""
    bare = Console(width=200, record=True)
    print_sweep_summary(_job_run("p" * 32, "sweep", 0), jobs, "loclab-demo", "mlflow ui", ["limit"],
                        "http://127.0.0.1:5000", console=bare)
    assert "calibrate: not printed: the tasks have no dev and test splits" in bare.export_text()
    assert "-m experiments.analysis.calibrate" not in bare.export_text()
    wide = Console(width=200, record=True)
    print_sweep_summary(_job_run("p" * 32, "sweep", 0), jobs, "loclab-demo", "mlflow ui", ["limit"],
                        "http://127.0.0.1:5000", console=wide)
    assert "0.500 [0.250, 0.750]" in wide.export_text()  # the mean with its CI, from the tag


def test_the_sweep_summary_fits_a_120_column_terminal_and_marks_the_best_job():
    """At a fixed width of 220 the table wrapped every line in a 120-column terminal, and nothing said
    which job won (issue 49, point 11)."""
    from mlflow.entities import RunTag
    from rich.console import Console

    from experiments.tracking.sweep_summary import BEST_MARK, print_sweep_summary

    jobs = [_job_run(str(i) * 32, f"0.{i}, 0.75 · locator.reader.action_threshold, … · @demo", i) for i in range(3)]
    parent = _job_run("p" * 32, "sweep", 0)
    parent.data._add_tag(RunTag(Tag.BEST_JOB, "1" * 32))
    console = Console(width=120, record=True)
    print_sweep_summary(parent, jobs, "loclab-demo", "mlflow ui", ["limit"], "http://127.0.0.1:5000", console=console)
    text = console.export_text()
    table = [line for line in text.splitlines() if not line.startswith(("MLflow UI:", "compare:", "calibrate:"))]
    assert max(map(len, table)) <= 120
    assert sum("0.500 [0.250, 0.750]" in line for line in table) == 3  # a number and its CI never cut
    marked = [line for line in table if BEST_MARK in line]
    assert len(marked) == 2 and "0.1, 0.75" in marked[0]  # the best job's row, and the caption saying what it means


def test_the_best_job_has_the_highest_file_acc_at_5_then_line_recall_and_finished():
    from mlflow.entities import Metric, Run, RunData, RunInfo

    from experiments.tracking.sweep_record import best_job

    def job(run_id: str, acc: float, line_recall: float, status: str = "FINISHED") -> Run:
        info = RunInfo(run_id=run_id, experiment_id="1", user_id="u", status=status, start_time=0, end_time=1,
                       lifecycle_stage="active", run_name=run_id)
        metrics = [Metric("1 quality/file_acc_all_at_05", acc, 0, 0), Metric("1 quality/line_recall", line_recall, 0, 0)]
        return Run(info, RunData(metrics=metrics))

    def values(acc: float, line_recall: float, tasks=("a", "b")) -> pd.DataFrame:
        return pd.DataFrame({"file_acc_all@5": acc, "line_recall": line_recall}, index=pd.Index(tasks, name="task_id"))

    jobs = [job("low", 0.2, 0.9), job("tied", 0.6, 0.3), job("best", 0.6, 0.5), job("failed", 0.9, 0.9, "FAILED")]
    per_task = {"low": values(0.2, 0.9), "tied": values(0.6, 0.3), "best": values(0.6, 0.5), "failed": values(0.9, 0.9)}
    chosen = best_job(jobs, per_task)
    assert chosen.run.info.run_id == "best" and chosen.shared_tasks == 2 and chosen.candidates == 3


def test_the_best_job_is_chosen_on_the_tasks_every_job_completed():
    """A job that failed the hard tasks shows a higher mean on the easy rest (0.414 on 29 against 0.405
    on 37): compared on the tasks both completed, the other wins."""
    from mlflow.entities import Metric, Run, RunData, RunInfo

    from experiments.tracking.sweep_record import best_job

    def job(run_id: str, acc: float) -> Run:
        info = RunInfo(run_id=run_id, experiment_id="1", user_id="u", status="FINISHED", start_time=0, end_time=1,
                       lifecycle_stage="active", run_name=run_id)
        return Run(info, RunData(metrics=[Metric("1 quality/file_acc_all_at_05", acc, 0, 0)]))

    index = pd.Index(["easy1", "easy2", "hard1", "hard2"], name="task_id")
    whole = pd.DataFrame({"file_acc_all@5": [1.0, 1.0, 0.0, 0.0]}, index=index)  # mean 0.5 on 4
    partial = pd.DataFrame({"file_acc_all@5": [1.0, 0.0]}, index=index[:2])  # mean 0.5 on 2, failed 2
    partial_mean_higher = pd.DataFrame({"file_acc_all@5": [1.0, 0.5]}, index=index[:2])  # 0.75 on 2 < 1.0 there
    jobs = [job("whole", 0.5), job("partial", 0.75)]
    chosen = best_job(jobs, {"whole": whole, "partial": partial_mean_higher})
    assert chosen.run.info.run_id == "whole" and chosen.shared_tasks == 2
    assert best_job(jobs, {"whole": whole, "partial": partial}).shared_tasks == 2


def test_logged_means_are_rounded_as_the_ui_shows_them():
    from experiments.tracking.metric_keys import logged_value

    assert logged_value(4 / 13) == 0.3077 and logged_value(92585.5) == 92586 and logged_value(38336.0769) == 38336
    assert logged_value(123.456789) == 123.46 and logged_value(0.0) == 0.0 and logged_value(-2 / 3) == -0.6667
    values = sorted(np.random.default_rng(0).lognormal(0, 4, 2000))  # rounding never reorders two values
    assert all(logged_value(a) <= logged_value(b) for a, b in zip(values, values[1:]))
    low, high, clusters = json.loads(ci_tag({"line_recall": (1 / 3, 2 / 3, 3)}))["line_recall"]
    assert (low, high) == (0.3333, 0.6667) and low <= logged_value(1 / 3)  # a mean stays within its bounds


@pytest.fixture
def default_stop_signals():
    """SIGTERM and SIGHUP at their defaults for the test, and pytest's own handlers back after it."""
    import signal

    from experiments.job.sweep_worker import STOP_SIGNALS

    before = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
    yield
    for signum, previous in before.items():
        signal.signal(signum, previous)


def test_stop_signals_are_handled_where_nothing_else_handles_them(default_stop_signals):
    # a job run under `nohup` ignores SIGHUP so that it runs on after its terminal closes: kept so
    import signal

    from experiments.job.sweep_worker import STOP_SIGNALS, on_stop_signals

    def handler(signum, frame):
        raise AssertionError("not sent")

    assert on_stop_signals(handler) == (signal.SIGTERM, signal.SIGHUP)
    assert all(signal.getsignal(s) is handler for s in STOP_SIGNALS)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    assert on_stop_signals(handler) == (signal.SIGTERM,)
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN

    def other(signum, frame):
        raise AssertionError("not sent")

    signal.signal(signal.SIGTERM, other)  # a job in a sweep's main process keeps the sweep's handler
    assert on_stop_signals(handler) == ()
    assert on_stop_signals(handler, keep_set=False) == (signal.SIGTERM,)  # a sweep takes over
    assert signal.getsignal(signal.SIGTERM) is handler and signal.getsignal(signal.SIGHUP) is signal.SIG_IGN


def test_a_finished_sweep_gives_its_stop_signals_back(default_stop_signals):
    # else a second sweep in the same process (a notebook, a test) would be stopped as the first
    import signal

    from experiments.job.sweep_worker import STOP_SIGNALS, on_stop_signals
    from experiments.tracking.store import SweepParentRun

    parent = SweepParentRun()
    parent.handled = on_stop_signals(parent._stop)
    parent.on_multirun_end(config=None)
    assert all(signal.getsignal(s) is signal.SIG_DFL for s in STOP_SIGNALS)


def test_the_sweep_figure_labels_settings_draws_the_front_and_overprints_nothing():
    """Labels were job numbers, 6, 7 and 8 overprinted into one and the front was not drawn (issue 49,
    point 5): checked on the rendered text's bounding boxes of a crowded nine-job sweep."""
    from mlflow.entities import Metric, Run, RunData, RunInfo, RunTag

    from experiments.tracking.sweep_record import _figure

    def job(i: int, acc: float, tokens: float, lines: float) -> Run:
        info = RunInfo(run_id=f"{i:032d}", experiment_id="1", user_id="u", status="FINISHED", start_time=0,
                       end_time=1, lifecycle_stage="active", run_name=f"0.{i}, 0.75 · action_threshold · two_phase@demo")
        metrics = [Metric("1 quality/file_acc_all_at_05", acc, 0, 0), Metric("2 cost/input_tokens", tokens, 0, 0),
                   Metric("2 cost/source_lines_read", lines, 0, 0)]
        return Run(info, RunData(metrics=metrics, tags=[RunTag(Tag.CI95, ci_tag({"file_acc_all@5": (0.0, 1.0, 3)}))]))

    # three jobs at one point, four a hair apart, two apart
    jobs = [job(i, 0.5, 9000, 700) for i in range(3)] + [job(3 + i, 0.52 + 0.01 * i, 9100 + 40 * i, 705 + i) for i in range(4)]
    jobs += [job(7, 1.0, 4000, 300), job(8, 0.0, 20000, 1500)]
    figure = _figure(jobs, "file_acc_all@5")
    renderer = figure.canvas.get_renderer()
    for axis in figure.axes:
        texts = [t for t in axis.texts]
        boxes = [t.get_window_extent(renderer) for t in texts] + [axis.get_legend().get_window_extent(renderer)]
        assert all(not a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:]), [t.get_text() for t in texts]
        assert "0.0, 0.75; 0.1, 0.75; 0.2, 0.75" in [t.get_text() for t in texts]  # one label for jobs at one point
        assert len(texts) == 7 and all(t.get_text().startswith("0.") for t in texts)  # settings, not job numbers
        [front] = [line for line in axis.get_lines() if line.get_label().startswith("Pareto front")]
        assert list(front.get_xdata())[0] in (4000, 300) and list(front.get_ydata())[0] == 1.0  # cheapest and best


def test_the_sweep_figure_plots_the_quality_it_is_set_to():
    """The field's budget terms on the parent's figure (issue 50): recall_at_300 against the costs."""
    from mlflow.entities import Metric, Run, RunData, RunInfo

    from experiments.job.config import compose_config
    from experiments.tracking.sweep_record import _figure

    def job(i: int, recall: float) -> Run:
        info = RunInfo(run_id=f"{i:032d}", experiment_id="1", user_id="u", status="FINISHED", start_time=0,
                       end_time=1, lifecycle_stage="active", run_name=f"{i} · top_files · bm25@demo")
        return Run(info, RunData(metrics=[Metric("1 swe_explore/recall_at_300", recall, 0, 0),
                                          Metric("1 quality/file_acc_all_at_05", 1.0, 0, 0),
                                          Metric("2 cost/input_tokens", 100.0 * (i + 1), 0, 0),
                                          Metric("2 cost/source_lines_read", 10.0 * (i + 1), 0, 0)]))

    assert compose_config().tracking.sweep_figure_quality == "file_acc_all@5"  # the YAML's default, what sweeps rank by
    figure = _figure([job(0, 0.2), job(1, 0.6)], "recall_at_300")
    assert figure.axes[0].get_ylabel() == "recall_at_300 (mean per task)"  # no CI is kept for it: none claimed
    [front] = [line for line in figure.axes[0].get_lines() if line.get_label().startswith("Pareto front")]
    assert sorted(front.get_ydata()) == [0.2, 0.6]  # both on the front: the dearer one recalls more


def test_a_sweep_parent_draws_the_quality_it_is_set_to(monkeypatch):
    """record_sweep_parent hands the configured quality to the figure it logs."""
    from experiments.tracking import sweep_record

    drawn = []
    monkeypatch.setattr(sweep_record, "_figure", lambda jobs, quality: drawn.append(quality) or object())

    class Client:  # records what the parent would get; MLflow itself is exercised by the sweep tests
        def __getattr__(self, name):
            return lambda *a, **k: type("R", (), {"info": type("I", (), {"experiment_id": "1", "run_name": "s"})(),
                                                  "data": type("D", (), {"params": {}})()})()

    from mlflow.entities import Metric, Run, RunData, RunInfo, RunTag
    info = RunInfo(run_id="0" * 32, experiment_id="1", user_id="u", status="FINISHED", start_time=0, end_time=1,
                   lifecycle_stage="active", run_name="a")
    job = Run(info, RunData(metrics=[Metric("1 swe_explore/recall_at_300", 0.5, 0, 0)], tags=[RunTag("loclab.sweep_job", "0")]))
    monkeypatch.setattr(sweep_record, "job_task_values", lambda client, jobs: {})
    monkeypatch.setattr(sweep_record, "parent_table", lambda *a, **k: [])
    sweep_record.record_sweep_parent(Client(), "p" * 32, [job], [], "recall_at_300")
    assert drawn == ["recall_at_300"]


def test_the_parent_table_is_best_first_with_paired_differences_to_the_best():
    """It was in launch order under the words "best first" (the best, hybrid 0.900, was row 2), with no
    difference to the best, no test and no word on what three repositories allow (issue 49, point 4)."""
    from mlflow.entities import Metric, Run, RunData, RunInfo, RunTag

    from experiments.tracking.sweep_record import COLUMNS, parent_table

    accs = {0: [0.0, 0.0, 1.0, 0.0, 0.0, 1.0], 1: [1.0, 1.0, 1.0, 1.0, 1.0, 1.0], 2: [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]}
    repos = ["a", "a", "b", "b", "c", "c"]

    def job(i: int) -> Run:
        info = RunInfo(run_id=f"{i:032d}", experiment_id="1", user_id="u", status="FINISHED", start_time=0, end_time=1,
                       lifecycle_stage="active", run_name=f"arm{i} · locator · @demo")
        tags = [RunTag("loclab.sweep_job", str(i)), RunTag("loclab.overrides", f"locator=arm{i}")]
        return Run(info, RunData(metrics=[Metric("1 quality/file_acc_all_at_05", float(np.mean(accs[i])), 0, 0)], tags=tags))

    jobs = [job(i) for i in range(3)]
    per_task = {j.info.run_id: pd.DataFrame({"file_acc_all@5": accs[i], "line_recall": accs[i], "repository": repos},
                                            index=pd.Index([f"t{k}" for k in range(6)], name="task_id"))
                for i, j in enumerate(jobs)}
    rows = [{"job": str(i), "run_id": j.info.run_id, "status": "FINISHED", "n": 6, "failed": 0,
             **{c: (float(np.mean(accs[i])) if c == "file_acc_all@5" else None) for c in COLUMNS},
             **{f"{c} ci95": None for c in COLUMNS}} for i, j in enumerate(jobs)]
    lines = parent_table(jobs, rows, ["locator"], jobs[1], per_task)
    table = [line.removeprefix("| ").removesuffix(" |").split(" | ") for line in lines if line.startswith("| ")][1:]
    assert [row[1] for row in table] == ["1", "2", "0"] and table[0][0] == "★"  # best first, then by file Acc@5
    assert [row[2] for row in table] == ["arm1", "arm2", "arm0"]  # the swept value as a column
    assert table[1][7].startswith("-0.333 [") and table[2][7].startswith("-0.667 [")  # job − best, paired CI
    from metrics.statistics import cluster_permutation_test, holm

    raw = [cluster_permutation_test(np.array(accs[i]) - np.array(accs[1]), np.array(repos)).p_value for i in (2, 0)]
    assert holm(raw) != raw  # the adjustment changes something here, so the table shows which it took
    assert [float(row[8]) for row in table[1:]] == pytest.approx(holm(raw), abs=5e-4)
    assert lines[-1].endswith("3 repositories, so no p can be below 0.25; Holm across 2 jobs.")


def test_the_best_job_and_the_runner_up_get_colours_of_their_own():
    """MLflow colours a run by its id unless `mlflow.runColor` says otherwise: the best and the runner-up
    shared one (issue 49, point 6). Colours go by rank, and no two of the first ranks share one."""
    from mlflow.entities import Metric, Run, RunData, RunInfo, RunTag

    from experiments.tracking.sweep_record import BEST_COLOURS, OTHER_COLOURS, ranked, run_colours

    def job(i: int, acc: float) -> Run:
        info = RunInfo(run_id=f"{i:032d}", experiment_id="1", user_id="u", status="FINISHED", start_time=0, end_time=1,
                       lifecycle_stage="active", run_name=f"arm{i}")
        return Run(info, RunData(metrics=[Metric("1 quality/file_acc_all_at_05", acc, 0, 0)],
                                 tags=[RunTag("loclab.sweep_job", str(i))]))

    jobs = [job(i, acc) for i, acc in enumerate([0.2, 0.9, 0.5, 0.7, 0.1])]
    order = ranked(jobs, jobs[1])
    assert [j.info.run_name for j in order] == ["arm1", "arm3", "arm2", "arm0", "arm4"]
    colours = run_colours(order)
    assert colours[jobs[1].info.run_id] == BEST_COLOURS[0] and colours[jobs[3].info.run_id] == BEST_COLOURS[1]
    assert len(set(colours.values())) == len(jobs) and not set(BEST_COLOURS) & set(OTHER_COLOURS)


def test_a_relinked_compare_report_replaces_the_earlier_link(tmp_path):
    from experiments.tracking.sweep_record import COMPARE_REPORT_LINE, link_compare_report
    from experiments.tracking.vocabulary import MlflowTag, Tag

    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = client.create_experiment("sweeps", artifact_location=str(tmp_path / "artifacts"))
    parent = client.create_run(experiment, tags={MlflowTag.DESCRIPTION: "**2 jobs**. Swept: `locator`.\n\n| table |"}).info.run_id
    for name in ("first", "second"):
        report = client.create_run(experiment, run_name=f"compare · {name}")
        link_compare_report(client, parent, client.get_run(report.info.run_id))
    tags = client.get_run(parent).data.tags
    assert tags[Tag.COMPARE_REPORT] == report.info.run_id
    paragraphs = tags[MlflowTag.DESCRIPTION].split("\n\n")
    assert paragraphs[0] == "**2 jobs**. Swept: `locator`." and paragraphs[2] == "| table |" and len(paragraphs) == 3
    assert paragraphs[1].startswith(f"{COMPARE_REPORT_LINE}: [compare · second](#/experiments/{experiment}/runs/{report.info.run_id}")

