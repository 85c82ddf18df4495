"""Reading jobs back from MLflow, and writing analysis reports to MLflow and a folder.

Every analysis command is a pure function of the per-task tables the jobs logged (their
`per_task.csv` artifacts); the report is logged as its own MLflow run (`loclab.kind=report`).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any

import mlflow
import pandas as pd
from mlflow.entities import Run
from mlflow.tracking import MlflowClient
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from experiments.job.config import compose_config
from experiments.tracking.store import sqlite_uri, tracking_uri
from experiments.tracking.links import run_page
from experiments.tracking.vocabulary import MlflowTag, ReportKind, RunKind, Tag, tag_is
from metrics.aggregate import REPEAT_REDUCTION, per_task_values

os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
_RUN_ID = re.compile(r"^[0-9a-f]{32}$")
_SHORT_ID = re.compile(r"^[0-9a-f]{6,31}$")
REQUIRED_COLUMNS = ("task_id", "repository", "split", "repeat", "status")


class AnalysisError(ValueError):
    """The runs asked for cannot be analysed as asked (missing, mismatched task sets, …)."""


@dataclass(frozen=True)
class Arm:
    run_id: str
    label: str
    params: dict[str, str]
    tags: dict[str, str]
    per_task: pd.DataFrame

    @property
    def manifest_hash(self) -> str | None:
        return self.tags.get(Tag.MANIFEST_HASH)

    @cached_property
    def task_values(self) -> pd.DataFrame:
        """One row per completed task (index task_id), repeats reduced by their mean; computed once,
        since a report reads it per metric and per stage (30 reductions for a 4-arm compare, half its time).
        Read it, never modify it: every reader shares the one frame."""
        return per_task_values(self.per_task)


def analysis_parser(module: str, doc: str) -> argparse.ArgumentParser:
    """The options every analysis command shares: where the runs are and where the report goes."""
    parser = argparse.ArgumentParser(prog=f"python -m experiments.analysis.{module}", description=doc.split("\n")[0])
    parser.add_argument("--dataset", help="dataset whose experiment holds the runs (default: the runner's default)")
    parser.add_argument("--experiment", help="MLflow experiment of the runs (default: loclab-<dataset>, as the runner)")
    parser.add_argument("--db", help="MLflow SQLite file (default: as the runner: MLFLOW_TRACKING_URI, "
                                     "LOCLAB_MLFLOW_DB, else runs/mlflow.db)")
    parser.add_argument("--out", help="report folder (default paths.reports_dir/<command>-<time>: runs/reports, "
                                      "or LOCLAB_RUNS_DIR/reports)")
    parser.add_argument("--format", type=TableFormat, choices=list(TableFormat), default=TableFormat.TABLE,
                        help="how tables print: table (terminal), markdown or latex")
    return parser


def open_store(args: argparse.Namespace) -> MlflowClient:
    """The runner's store and experiment, resolved from the same config (`conf/tracking/`):
    --db, else MLFLOW_TRACKING_URI, else LOCLAB_MLFLOW_DB, else runs/mlflow.db; the experiment
    --experiment, else loclab-<--dataset or the default dataset>. Sets args.experiment."""
    cfg = compose_config(*([f"dataset={args.dataset}"] if args.dataset else []))
    uri = sqlite_uri(args.db) if args.db else tracking_uri(cfg.tracking)
    local = Path(uri.removeprefix("sqlite:///")) if uri.startswith("sqlite:///") else None
    if local is not None and not local.is_file():  # opening it would create an empty store and find no runs
        setting = ("--db" if args.db else "tracking.uri (MLFLOW_TRACKING_URI)" if cfg.tracking.get("uri")
                   else "tracking.db_path (LOCLAB_MLFLOW_DB; default runs/mlflow.db)")
        raise AnalysisError(f"no MLflow store at {local} (from {setting}): check the path, or run a job first")
    if args.experiment is None:
        args.experiment = cfg.tracking.experiment
    mlflow.set_tracking_uri(uri)
    return MlflowClient(tracking_uri=uri)


def experiment_id(client: MlflowClient, name: str) -> str:
    experiment = client.get_experiment_by_name(name)
    if experiment is None:
        known = [e.name for e in client.search_experiments()]
        raise AnalysisError(f"no MLflow experiment {name!r}; known: {known}")
    return experiment.experiment_id


def find_runs(client: MlflowClient, experiment: str, selector: str, kind: RunKind = RunKind.JOB) -> list[Run]:
    """A run id, a short id (its first 6+ characters), a run name, or an MLflow filter string
    (`filter:params.x = '1'`); finished runs of `kind` (job, or sweep for a sweep's parent) only."""
    exp_id = experiment_id(client, experiment)
    if _RUN_ID.match(selector):
        try:
            return [client.get_run(selector)]
        except mlflow.exceptions.MlflowException:
            raise AnalysisError(f"no run with id {selector} in {experiment!r}'s store") from None
    of_kind = f"{tag_is(Tag.KIND, kind)} and attributes.status = 'FINISHED'"
    if _SHORT_ID.match(selector):
        prefixed = [r for r in client.search_runs([exp_id], filter_string=of_kind, max_results=50000)
                    if r.info.run_id.startswith(selector)]
        if len(prefixed) > 1:
            raise AnalysisError(f"the short id {selector!r} matches {len(prefixed)} {kind} runs "
                                f"({', '.join(r.info.run_id for r in prefixed[:4])}, …): give more characters")
        if prefixed:
            return prefixed
    if selector.startswith("filter:"):
        query = f"{of_kind} and {selector[len('filter:'):]}"
    else:
        query = f"{of_kind} and attributes.run_name = '{selector}'"
    runs = client.search_runs([exp_id], filter_string=query, max_results=5000, order_by=["attributes.start_time DESC"])
    if not runs:
        raise AnalysisError(f"no finished {kind} run matches {selector!r} in {experiment!r}")
    if selector.startswith("filter:"):
        return runs
    if len(runs) > 1:
        others = ", ".join(r.info.run_id for r in runs[1:6]) + (", …" if len(runs) > 6 else "")
        print(f"warning: the name {selector!r} matches {len(runs)} finished {kind} runs; using the latest "
              f"({runs[0].info.run_id}); pass a run id to choose another ({others})", file=sys.stderr)
    return runs[:1]


def latest_per_setting(runs):
    """One run per (results content address, task selection): reruns and re-scorings collapse."""
    seen, kept = set(), []
    for run in sorted(runs, key=lambda r: -r.info.start_time):
        key = (run.data.tags.get(Tag.RUN_KEY), run.data.params.get("split"), run.data.params.get("limit"),
               run.data.params.get("tasks"))
        if key not in seen:
            seen.add(key)
            kept.append(run)
    return kept


def children(client: MlflowClient, parent_run_id: str) -> list[Run]:
    parent = client.get_run(parent_run_id)
    return client.search_runs([parent.info.experiment_id],
                              filter_string=f"{tag_is(MlflowTag.PARENT_RUN_ID, parent_run_id)} and {tag_is(Tag.KIND, RunKind.JOB)}",
                              max_results=5000)


def load_arm(client: MlflowClient, run: Run, label: str | None = None) -> Arm:
    with tempfile.TemporaryDirectory() as tmp:
        try:
            path = client.download_artifacts(run.info.run_id, "per_task.csv", tmp)
        except Exception as exc:  # noqa: BLE001 - MLflow raises several types for a missing artifact
            raise AnalysisError(f"run {run.info.run_id} has no per_task.csv artifact: {exc}") from None
        frame = pd.read_csv(path)
    missing = [c for c in REQUIRED_COLUMNS if c not in frame]
    if missing:
        raise AnalysisError(f"run {run.info.run_id}: per_task.csv lacks {missing} (written by an older loclab); "
                            "re-score its saved results with `python -m experiments.score <the run's overrides>`")
    name = label or f"{run.info.run_name}#{run.info.run_id[:6]}"
    return Arm(run.info.run_id, name, dict(run.data.params), dict(run.data.tags), frame)


def same_task_set(arms: list[Arm]) -> str:
    hashes = {arm.manifest_hash for arm in arms}
    if len(hashes) != 1 or None in hashes:
        detail = ", ".join(f"{a.label}: {a.manifest_hash}" for a in arms)
        raise AnalysisError(f"runs are on different task sets (manifest hashes differ): {detail}")
    return hashes.pop()


def shared_tasks(arms: list[Arm]) -> pd.Index:
    """The tasks every arm completed; refuses when there are none."""
    frames = [arm.task_values for arm in arms]
    shared = frames[0].index
    for frame in frames[1:]:
        shared = shared.intersection(frame.index)
    if len(shared) == 0:
        raise AnalysisError("the runs share no completed task: " + ", ".join(
            f"{arm.label}: {len(frame)} tasks" for arm, frame in zip(arms, frames))
            + "; name runs of the same task set (run ids, or --runs NAME ... with the names the MLflow UI shows)")
    return shared.sort_values()


def describe_reduction(arms: list[Arm], shared: pd.Index) -> str:
    """What the tables are computed over, said once per report."""
    values = {arm.label: arm.task_values for arm in arms}
    dropped = [f"{label} −{len(frame.index.difference(shared))}" for label, frame in values.items()
               if len(frame.index.difference(shared))]
    repeats = sorted({int(r) for frame in values.values() for r in frame.repeats})
    text = f"{len(shared)} tasks every run completed; per-task values: {REPEAT_REDUCTION} (repeats: {repeats})"
    return text + (f"; tasks not shared by every run left out ({', '.join(dropped)})" if dropped else "")


class TableFormat(StrEnum):
    TABLE = "table"  # rich, for the terminal
    MARKDOWN = "markdown"
    LATEX = "latex"


def _cell(value: Any, floatfmt: str) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "—"
    return floatfmt.format(value) if isinstance(value, float) else str(value)


def table_text(title: str, frame: pd.DataFrame, fmt: TableFormat, floatfmt: str = "{:.4g}") -> str:
    """A table as Markdown (a PR or a note) or LaTeX (booktabs, for a paper), with its title."""
    frame = frame.reset_index() if any(name is not None for name in frame.index.names) else frame
    cells = [[_cell(v, floatfmt) for v in row] for _, row in frame.iterrows()]
    columns = [str(c) for c in frame.columns]
    if fmt == TableFormat.MARKDOWN:
        lines = [f"**{title}**", "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells]
        return "\n".join(lines) + "\n"

    def tex(text: str) -> str:
        return re.sub(r"([&%$#_{}])", r"\\\1", text).replace("—", "--")

    lines = [f"% {title}", f"\\begin{{tabular}}{{l{'r' * (len(columns) - 1)}}}", "\\toprule",
             " & ".join(tex(c) for c in columns) + " \\\\", "\\midrule"]
    lines += [" & ".join(tex(c) for c in row) + " \\\\" for row in cells]
    return "\n".join(lines + ["\\bottomrule", "\\end{tabular}"]) + "\n"


def print_table(title: str, frame: pd.DataFrame, fmt: TableFormat = TableFormat.TABLE, console: Console | None = None,
                floatfmt: str = "{:.4g}") -> None:
    """A table on stdout: rich for the terminal, or Markdown / LaTeX to paste (`--format`)."""
    if fmt != TableFormat.TABLE:
        print("\n" + table_text(title, frame, fmt, floatfmt))
        return
    flat = frame.reset_index() if any(name is not None for name in frame.index.names) else frame
    table = Table(title=escape(title))
    for column in flat.columns:
        table.add_column(escape(str(column)))
    for _, row in flat.iterrows():
        table.add_row(*[escape(_cell(v, floatfmt)) for v in row])
    (console or Console(width=200)).print(table)


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def artifact_name(name: str) -> str:
    """A file name the MLflow UI can serve: it answers HTTP 400 "Invalid path" for `@`, `#`, spaces
    and the like, so every other character becomes `_` (`difference_bm25@demo#6bd9d8` ->
    `difference_bm25_demo_6bd9d8`)."""
    return _UNSAFE.sub("_", name).strip("_") or "unnamed"


REPORTS_SUFFIX = "-reports"  # report runs live in their own experiment: `loclab-demo-reports`


def reports_experiment(experiment: str) -> str:
    """The experiment a report on `experiment`'s runs is logged to. MLflow's charts plot the first
    visible rows of the runs table, newest first, so a report run among the jobs (even nested under
    their sweep) pushes jobs out of them; in an experiment of their own they never do."""
    return experiment + REPORTS_SUFFIX


def _reports_experiment_id(client: MlflowClient, experiment: str) -> str:
    """The reports experiment, created beside `experiment` with its artifact location (else MLflow
    would put its artifacts in ./mlruns of whatever folder the command ran in)."""
    name = reports_experiment(experiment)
    if (existing := client.get_experiment_by_name(name)) is not None:
        return existing.experiment_id
    source = client.get_experiment_by_name(experiment)
    try:
        return client.create_experiment(name, artifact_location=source.artifact_location if source else None)
    except mlflow.exceptions.MlflowException:  # another report created it between the lookup and here
        return client.get_experiment_by_name(name).experiment_id


def report_links(client: MlflowClient, reported: list[str]) -> dict[str, str]:
    """A report run's links to the runs it reports on: their ids (`loclab.reported_runs`), their
    sweep when they share one (`loclab.reported_sweep`), and a description linking each."""
    runs = [client.get_run(run_id) for run_id in reported]
    parents = {r.data.tags.get(MlflowTag.PARENT_RUN_ID) for r in runs}
    links = ", ".join(f"[{r.info.run_name or r.info.run_id}]({run_page(r.info.experiment_id, r.info.run_id)})"
                      for r in runs)
    description = f"Reports on {len(runs)} run(s): {links}."
    tags = {Tag.REPORTED_RUNS: ",".join(reported)[:4000]}
    if len(parents) == 1 and None not in parents:
        tags[Tag.REPORTED_SWEEP] = parents.pop()
        sweep = client.get_run(tags[Tag.REPORTED_SWEEP])
        description += f" They are jobs of the sweep [{sweep.info.run_name}]({run_page(sweep.info.experiment_id, sweep.info.run_id)})."
    tags[MlflowTag.DESCRIPTION] = description
    return tags


def write_report(kind: ReportKind, experiment: str, tables: dict[str, pd.DataFrame], figures: dict[str, Any],
                 tags: dict[str, str], out_dir: str | Path | None, params: dict[str, Any] | None = None,
                 reported: list[str] | None = None, metrics: dict[str, float] | None = None,
                 title: str | None = None, legend: str = "") -> Path:
    """Tables (CSV, Markdown, LaTeX) and figures (PNG) to a folder and to an MLflow report run in
    `reports_experiment(experiment)`, linked to the runs it reports on (`reported`, run ids), named
    `title` (what it reports on: "compare report" alone said nothing in a list of them) and with its
    headline numbers as `metrics` (MLflow keys), so the report run charts them; `legend`, a line under
    the description's links, says what those numbers' names mean."""
    folder = (Path(out_dir) if out_dir else
              Path(compose_config().paths.reports_dir) / f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}")
    folder.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.items():
        frame.to_csv(folder / f"{artifact_name(name)}.csv")
        for fmt, suffix in ((TableFormat.MARKDOWN, "md"), (TableFormat.LATEX, "tex")):
            (folder / f"{artifact_name(name)}.{suffix}").write_text(table_text(name, frame, fmt), encoding="utf-8")
    for name, figure in figures.items():
        figure.savefig(folder / f"{artifact_name(name)}.png", dpi=120, bbox_inches="tight")
    client = MlflowClient()
    links = report_links(client, reported) if reported else {}
    if legend:
        links[MlflowTag.DESCRIPTION] = (links.get(MlflowTag.DESCRIPTION, "") + "\n\n" + legend).strip()
    name = f"{kind} · {title}"[:250] if title else f"{kind} report"
    with mlflow.start_run(experiment_id=_reports_experiment_id(client, experiment), run_name=name,
                          tags={Tag.KIND: RunKind.REPORT, Tag.REPORT: kind, Tag.REPORTED_EXPERIMENT: experiment,
                                **links, **tags}) as run:
        if params:
            mlflow.log_params(params)
        if metrics:
            mlflow.log_metrics(metrics)
        mlflow.log_artifacts(str(folder))
    print(f"report run: {run.info.run_id} in experiment {reports_experiment(experiment)}")
    return folder
