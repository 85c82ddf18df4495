"""A sweep's compare report, made when the sweep ends and linked from its parent's page.

The parent's table ranks the jobs against the best; the compare report is the full analysis of the
same jobs against job 0, the preset's baseline (`experiments.analysis.compare`: every metric, paired
CIs clustered by repository, Holm across the family, per-task win/loss/tie, difference plots). A Hydra
callback listed before `SweepParentRun` in `conf/config.yaml` (Hydra calls the end of a multirun in
reverse order), so the parent is recorded when it runs; `tracking.sweep_compare_report: false` turns
it off.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from mlflow.entities import Run
from mlflow.tracking import MlflowClient
from omegaconf import DictConfig

from experiments.analysis import compare
from experiments.analysis.runs import AnalysisError, reports_experiment
from experiments.tracking.links import run_page
from experiments.tracking.store import ui_address
from experiments.tracking.sweep_record import link_compare_report
from experiments.tracking.sweep_summary import launch_order
from experiments.tracking.vocabulary import MlflowTag, ReportKind, RunKind, Tag, tag_is


def sweep_parent(client: MlflowClient, experiment: str, sweep_dir: str) -> Run | None:
    """The latest parent run of the sweep that wrote `sweep_dir`."""
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return None
    runs = client.search_runs([found.experiment_id], f"{tag_is(Tag.KIND, RunKind.SWEEP)} and {tag_is(Tag.SWEEP_DIR, sweep_dir)}",
                              order_by=["attributes.start_time DESC"], max_results=1)
    return runs[0] if runs else None


def finished_jobs(client: MlflowClient, parent: Run) -> list[Run]:
    """The parent's FINISHED jobs in launch order, the latest run of each job (a resumed sweep holds a killed one too)."""
    children = client.search_runs([parent.info.experiment_id],
                                  f"{tag_is(MlflowTag.PARENT_RUN_ID, parent.info.run_id)} and {tag_is(Tag.KIND, RunKind.JOB)}",
                                  order_by=["attributes.start_time DESC"], max_results=5000)
    latest: dict[str, Run] = {}
    for child in children:
        latest.setdefault(child.data.tags.get(Tag.JOB_KEY, child.info.run_id), child)
    return launch_order([r for r in latest.values() if r.info.status == "FINISHED"])


def latest_compare_report(client: MlflowClient, experiment: str, parent_id: str, after_ms: int) -> Run | None:
    found = client.get_experiment_by_name(reports_experiment(experiment))
    if found is None:
        return None
    runs = client.search_runs([found.experiment_id], f"{tag_is(Tag.REPORT, ReportKind.COMPARE)} and "
                                                     f"{tag_is(Tag.REPORTED_SWEEP, parent_id)} and attributes.start_time >= {after_ms}",
                              order_by=["attributes.start_time DESC"], max_results=1)
    return runs[0] if runs else None


def report_on_sweep(client: MlflowClient, experiment: str, parent: Run, out: Path, ui: str = "") -> str:
    """Compares the parent's finished jobs (job 0 first), links the report run from the parent's page,
    and says what it did in one line."""
    jobs = finished_jobs(client, parent)
    if len(jobs) < 2:
        return f"no compare report: {len(jobs)} finished job(s), compare needs two"
    args = compare.parser().parse_args([*(j.info.run_id for j in jobs), "--experiment", experiment, "--out", str(out)])
    started = client.get_run(parent.info.run_id).info.end_time or 0
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):  # the sweep's summary was printed; the report's tables are in its run
            compare.compare(client, args)
    except AnalysisError as exc:
        return f"no compare report: {exc}"
    report = latest_compare_report(client, experiment, parent.info.run_id, started)
    if report is None:
        return "no compare report: its run was not found"
    link_compare_report(client, parent.info.run_id, report)
    numbers = [j.data.tags.get(Tag.SWEEP_JOB, "?") for j in jobs]  # a failed job is left out: name the ones compared
    others = f"job {numbers[1]}" if len(numbers) == 2 else "jobs " + ", ".join(numbers[1:])
    return (f"compare report: {ui}/{run_page(report.info.experiment_id, report.info.run_id)} ({others} against "
            f"job {numbers[0]}, linked from the parent's page; tables in {out})")


class SweepCompareReport(Callback):
    """Hydra's end of a multirun: the sweep's compare report, linked from its parent."""

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        if not config.tracking.sweep_compare_report:  # a tracking option without it is an error, not a silent "off"
            return
        client = MlflowClient()
        experiment = str(config.tracking.experiment)
        parent = sweep_parent(client, experiment, str(config.hydra.sweep.dir))
        if parent is None:
            return
        out = Path(config.paths.reports_dir) / f"compare-sweep-{parent.info.run_id[:12]}"
        print(report_on_sweep(client, experiment, parent, out, ui_address(config.tracking)), flush=True)
