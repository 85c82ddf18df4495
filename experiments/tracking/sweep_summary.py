"""What a sweep prints when it ends: its jobs side by side, and the commands that go on from there."""

from __future__ import annotations

import shlex
import sys

from mlflow.entities import Run
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from experiments.tracking.metric_keys import ci_bounds, ci_clusters, metric_key
from experiments.tracking.vocabulary import Tag

CHOOSE_SPLIT, REPORT_SPLIT = "dev", "test"  # experiments.analysis.calibrate's defaults: choose on one, report on the other
CALIBRATE_SPLITS = {CHOOSE_SPLIT, REPORT_SPLIT}
BEST_BY = ("file_acc_all@5", "line_recall")  # the best job: highest file Acc@5, then line recall
BEST_MARK = "★"  # the best job's row in the terminal table
LOG_WIDTH = 200  # output that is not a terminal (a CI log, a file) is not wrapped by a reader's width
# the interpreter that ran the sweep: a pasted command runs where loclab is installed, venv active or not
PYTHON = shlex.quote(sys.executable)
COLUMNS = ("file_acc_all@5", "file_recall", "line_recall", "pack_line_recall", "discovery_recall", "model_calls",
           "input_tokens", "source_lines_read", "index_lines")


def launch_order(jobs: list[Run]) -> list[Run]:
    """A sweep's jobs in launch order: job 0 takes every swept param's first value, which a preset lists
    as its baseline, so it leads the table and the compare command (compare's first run is its baseline)."""
    return sorted(jobs, key=lambda r: (int(r.data.tags.get(Tag.SWEEP_JOB, "0")), r.info.run_name or ""))


# the terminal's table: the headline with its CI, then quality and cost without (the parent's table
# artifact and page keep every column and CI); fits a 120-column terminal with room for the job names
TERMINAL_COLUMNS = ("file_acc_all@5", "file_recall", "line_recall", "model_calls", "input_tokens", "source_lines_read")


def fmt_value(value: float | None) -> str:
    """A mean as the sweep's tables print it: 3 decimals below 100, whole numbers above, — for none."""
    if value is None:
        return "—"
    return f"{value:,.3f}" if abs(value) < 100 else f"{value:,.0f}"


def _cell(run: Run, name: str, with_ci: bool) -> str:
    mean = run.data.metrics.get(metric_key(name))
    if mean is None:
        return "—"
    low, high = (ci_bounds(run.data.tags, name) or (None, None)) if with_ci else (None, None)
    return fmt_value(mean) + (f" [{fmt_value(low)}, {fmt_value(high)}]" if low is not None and high is not None else "")


def _job_label(job: Run) -> str:
    """The job's number and what tells it from its siblings: its name up to the shared part (` · `)."""
    name = job.info.run_name or job.info.run_id
    status = "" if job.info.status == "FINISHED" else f" ({job.info.status})"
    return f"{job.data.tags.get(Tag.SWEEP_JOB, '?')}  {name.split(' · ')[0]}{status}"


def print_sweep_summary(parent: Run, jobs: list[Run], experiment: str, ui_command: str, swept_params: list[str],
                        ui_address: str, console: Console | None = None) -> None:
    """One table of every job (the headline metric with its 95 % CI, quality and cost beside; the
    parent's best job marked), the parent run, the UI command, the view of the sweep's jobs (at
    `ui_address`, where the UI answers), and ready-to-paste `compare` / `calibrate` commands with the
    real run ids, each on one line however wide (soft_wrap: a command the console cut in two would run
    half when pasted). The table fits the terminal (a log file, not a terminal, gets `LOG_WIDTH`)."""
    console = console or Console(width=None if sys.stdout.isatty() else LOG_WIDTH)
    best = parent.data.tags.get(Tag.BEST_JOB)
    jobs = launch_order(jobs)
    clusters = {c for j in jobs if (c := ci_clusters(j.data.tags, TERMINAL_COLUMNS[0])) is not None}
    notes = [f"{BEST_MARK} best by {TERMINAL_COLUMNS[0]}, on {parent.data.tags.get(Tag.BEST_CHOSEN_ON, 'the shared tasks')}"
             if best else "", "[95 % CI] over " + "/".join(map(str, sorted(clusters)))
             + (" repository" if clusters == {1} else " repositories") if clusters else ""]
    table = Table(title=escape(f"{parent.info.run_name} — parent run {parent.info.run_id}"),
                  caption=escape("; ".join(n for n in notes if n)) or None)
    rows = []
    for job in jobs:
        counts = [job.data.metrics.get(metric_key(f"tasks.{which}")) for which in ("ok", "failed")]
        rows.append((job.info.run_id == best, [("★ " if job.info.run_id == best else "") + _job_label(job),
                     *["—" if c is None else str(int(c)) for c in counts],
                     *[_cell(job, n, with_ci=i == 0) for i, n in enumerate(TERMINAL_COLUMNS)]]))
    table.add_column("job", overflow="fold", ratio=1, min_width=12)
    for i, column in enumerate(("n", "failed", *TERMINAL_COLUMNS), start=1):
        # a number is never cut; in a narrow terminal a long metric name folds in its header instead
        width = max([len(cells[i]) for _, cells in rows] + [6])
        table.add_column(escape(column), justify="right", overflow="fold", min_width=width,
                         max_width=None if console.width >= LOG_WIDTH else width)
    for won, cells in rows:
        table.add_row(*map(escape, cells), style="bold" if won else None)
    console.print(table)
    console.print(f"MLflow UI: {ui_command}", markup=False, highlight=False, soft_wrap=True)
    if view := parent.data.tags.get(Tag.SWEEP_VIEW):
        console.print(f"jobs view: {ui_address.rstrip('/')}/{view}", markup=False, highlight=False, soft_wrap=True)
    finished = [j.info.run_id for j in jobs if j.info.status == "FINISHED"]
    if len(finished) >= 2:
        console.print(f"compare:   {PYTHON} -m experiments.analysis.compare {' '.join(finished)} --experiment {experiment}",
                      markup=False, highlight=False, soft_wrap=True)
    if 1 <= len(swept_params) <= 2 and finished:
        splits = set.intersection(*[set(j.data.tags.get(Tag.SPLITS, "").split(",")) for j in jobs
                                    if j.info.status == "FINISHED"])
        if CALIBRATE_SPLITS <= splits:
            params = " ".join(f"--param {p}" for p in swept_params)
            console.print(f"calibrate: {PYTHON} -m experiments.analysis.calibrate --experiment {experiment} --sweep {parent.info.run_id} "
                          f"{params}", markup=False, highlight=False, soft_wrap=True)
        else:  # it would only refuse: it chooses on dev and reports on test
            console.print("calibrate: not printed: the tasks have no dev and test splits to choose on and report on",
                          markup=False, highlight=False, soft_wrap=True)
