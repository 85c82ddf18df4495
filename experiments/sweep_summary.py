"""What a sweep prints when it ends: its jobs side by side, and the commands that go on from there."""

from __future__ import annotations

import shlex
import sys

from mlflow.entities import Run
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from experiments.metric_keys import ci_bounds, ci_clusters, metric_key

SWEEP_JOB_TAG = "loclab.sweep_job"  # a job's number in its sweep, in launch order
SWEEP_VIEW_TAG = "loclab.sweep_view"  # a sweep parent's link (a URL fragment) to the view of its jobs
# the interpreter that ran the sweep: a pasted command runs where loclab is installed, venv active or not
PYTHON = shlex.quote(sys.executable)
COLUMNS = ("file_acc_all@5", "file_recall", "line_recall", "pack_line_recall", "discovery_recall", "model_calls",
           "input_tokens", "source_lines_read", "index_lines")


def launch_order(jobs: list[Run]) -> list[Run]:
    """A sweep's jobs in launch order: job 0 takes every swept param's first value, which a preset lists
    as its baseline, so it leads the table and the compare command (compare's first run is its baseline)."""
    return sorted(jobs, key=lambda r: (int(r.data.tags.get(SWEEP_JOB_TAG, "0")), r.info.run_name or ""))


def _cell(run: Run, name: str) -> str:
    metrics = run.data.metrics
    mean = metrics.get(metric_key(name))
    if mean is None:
        return "—"
    low, high = ci_bounds(run.data.tags, name) or (None, None)
    clusters = ci_clusters(run.data.tags, name)

    def fmt(value: float) -> str:
        return f"{value:,.3f}" if abs(value) < 100 else f"{value:,.0f}"
    return fmt(mean) + (f" [{fmt(low)}, {fmt(high)}]" if low is not None and high is not None else "") + (
        f" ({clusters} repos)" if clusters is not None and low is not None else "")


def print_sweep_summary(parent: Run, jobs: list[Run], experiment: str, ui_command: str, swept_params: list[str],
                        console: Console | None = None, ui_address: str = "http://127.0.0.1:5000") -> None:
    """One table of every job (headline metrics with 95 % CIs), the parent run, the UI command, the
    view of the sweep's jobs (at `ui_address`, where the UI answers), and
    ready-to-paste `compare` / `calibrate` commands with the real run ids, each on one line however
    wide (soft_wrap: a command the console cut in two would run half when pasted)."""
    console = console or Console(width=220)
    table = Table(title=escape(f"{parent.info.run_name} — parent run {parent.info.run_id}"))
    for column in ("job", "status", "n", "failed", *COLUMNS):
        table.add_column(escape(column), justify="left" if column in ("job", "status") else "right")
    jobs = launch_order(jobs)
    for job in jobs:
        counts = [job.data.metrics.get(metric_key(f"tasks.{which}")) for which in ("ok", "failed")]
        table.add_row(escape(job.info.run_name or job.info.run_id), job.info.status,
                      *["—" if c is None else str(int(c)) for c in counts], *[_cell(job, n) for n in COLUMNS])
    console.print(table)
    console.print(f"MLflow UI: {ui_command}", markup=False, highlight=False, soft_wrap=True)
    if view := parent.data.tags.get(SWEEP_VIEW_TAG):
        console.print(f"jobs view: {ui_address.rstrip('/')}/{view}", markup=False, highlight=False, soft_wrap=True)
    finished = [j.info.run_id for j in jobs if j.info.status == "FINISHED"]
    if len(finished) >= 2:
        console.print(f"compare:   {PYTHON} -m experiments.compare {' '.join(finished)} --experiment {experiment}",
                      markup=False, highlight=False, soft_wrap=True)
    if 1 <= len(swept_params) <= 2 and finished:
        params = " ".join(f"--param {p}" for p in swept_params)
        console.print(f"calibrate: {PYTHON} -m experiments.calibrate --experiment {experiment} --sweep {parent.info.run_id} "
                      f"{params}", markup=False, highlight=False, soft_wrap=True)
