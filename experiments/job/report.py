"""Per-job tables: the per-task frame, its aggregate, and the console summary."""

from __future__ import annotations

import textwrap

import pandas as pd
from rich.console import Console
from rich.table import Table

from experiments.job.pipeline import RESULT_FILE, TaskOutcome
from locator.result import LocalizationResult
from metrics.agent_context import owner_excerpt
from metrics.aggregate import CI_METHOD, REPEAT_REDUCTION, aggregate
from metrics.statistics import MIN_CLUSTERS_FOR_CI

SUMMARY_METRICS = (
    "file_acc_all@1", "file_acc_all@5", "file_hit_any@5", "file_recall", "file_precision", "file_mrr", "file_map",
    "function_acc_all@5", "innermost_entity_acc_all@5", "line_recall", "line_precision", "gold_region_recall", "selected_file_recall",
    "discovery_recall", "discovery_rank_worst", "reader_conversion", "handoff_line_recall", "follow_recall",
    "model_calls", "physical_model_calls", "input_tokens", "output_tokens", "source_lines_read", "index_lines", "elapsed_ms",
    "source_tokens", "response_json_tokens", "two_turn_json_tokens",
    "pack_line_recall", "false_complete_claims", "rendered_tokens",
)


def per_task_frame(outcomes: list[TaskOutcome]) -> pd.DataFrame:
    """One row per task and repeat: status, provenance, the owner excerpt a response reserved
    (`path#symbol`, seed 001's table) and every metric."""
    rows = []
    for o in outcomes:
        result_file = o.result_dir / RESULT_FILE
        result = LocalizationResult.read(result_file) if o.status == "ok" else None
        rows.append({"task_id": o.task_id, "repository": o.repository, "split": o.split, "repeat": o.repeat,
                     "status": o.status, "reused": o.reused, "produced_at": o.produced_at,
                     "code_identity": o.code_identity, "error": o.error, "result_adjustments": o.adjustments,
                     "result": str(result_file) if result else None,
                     "owner_excerpt": owner_excerpt(result) if result else None,
                     # the languages its candidates were of (several for a mixed subject), as localization chose them
                     "languages": ",".join(result.sources.languages) if result and result.sources else None,
                     **o.scores})
    return pd.DataFrame(rows)


def by_language(per_task: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The aggregate (`metrics.aggregate`) over each language's ok tasks: a task of a mixed subject
    counts in each of its languages, so the slices may overlap; a task without recorded languages
    (an imported result) is in none."""
    ok = per_task[per_task.status == "ok"]
    if "languages" not in ok or ok.empty:
        return {}
    found = ok["languages"].dropna().str.split(",")
    names = sorted({name for names in found for name in names if name})
    return {name: aggregate(ok.loc[found[found.apply(lambda names, n=name: n in names)].index]) for name in names}


def _fmt(value: float | None) -> str:
    if value is None or value != value:
        return "—"
    return f"{value:,.3f}" if abs(value) < 100 else f"{value:,.0f}"


def print_summary(title: str, aggregate: pd.DataFrame, counts: dict[str, int], console: Console | None = None) -> None:
    console = console or Console()
    table = Table(title=title, caption=f"{REPEAT_REDUCTION}; 95% CI: {CI_METHOD}")
    for column in ("metric", "mean", "95% CI", "n", "clusters"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for name in SUMMARY_METRICS:
        if name not in aggregate.index:
            continue
        row = aggregate.loc[name]
        ci = f"[{_fmt(row.ci95_low)}, {_fmt(row.ci95_high)}]" if row.ci95_low is not None else "—"
        table.add_row(name, _fmt(row["mean"]), ci, str(int(row.n)), str(int(row.clusters)))
    console.print(table)
    console.print("tasks: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    warning = few_clusters_warning(aggregate)
    if warning:
        console.print(warning)


def few_clusters_warning(aggregate: pd.DataFrame) -> str | None:
    """A warning when the CIs rest on too few repositories to be read as more than coarse."""
    if aggregate.empty or "clusters" not in aggregate:
        return None
    clusters = int(aggregate["clusters"].max())
    if clusters >= MIN_CLUSTERS_FOR_CI:
        return None
    return (f"warning: the 95% CIs rest on {clusters} repositories (fewer than {MIN_CLUSTERS_FOR_CI}): a cluster "
            "bootstrap over so few is coarse (a bound can be one repository's mean); read them as rough")


# What a job's run page leads with: its headline quality (each in [0, 1]) and cost per task.
HEADLINE_QUALITY = ("file_acc_all@1", "file_acc_all@5", "file_recall", "line_recall", "line_precision",
                    "pack_line_recall")
HEADLINE_COST = ("model_calls", "input_tokens", "source_lines_read", "rendered_tokens", "elapsed_ms")


def _headline(aggregate: pd.DataFrame, names: tuple[str, ...]) -> pd.DataFrame:
    return aggregate.loc[[n for n in names if n in aggregate.index and aggregate.loc[n, "mean"] == aggregate.loc[n, "mean"]]]


def headline_figure(title: str, aggregate: pd.DataFrame):
    """Two panels: quality means with their 95 % CIs, and cost per task (log scale) with theirs."""
    from matplotlib.figure import Figure  # here: a job draws one figure, at its end; pyplot's registry is not needed

    figure = Figure(figsize=(11, 3.8))
    quality, cost = figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.2, 1]})
    for axis, frame, label in ((quality, _headline(aggregate, HEADLINE_QUALITY), "mean over tasks (95% CI)"),
                               (cost, _headline(aggregate, HEADLINE_COST), "per task (95% CI, log scale)")):
        means = frame["mean"].astype(float)
        low = (means - frame["ci95_low"].astype(float)).clip(lower=0).fillna(0)
        high = (frame["ci95_high"].astype(float) - means).clip(lower=0).fillna(0)
        axis.barh(range(len(frame)), means, xerr=[low, high], color="#4c72b0", capsize=3)
        axis.set_yticks(range(len(frame)), list(frame.index))
        axis.invert_yaxis()
        axis.set_xlabel(label)
        for i, value in enumerate(means):
            axis.annotate(_fmt(value), (value, i), xytext=(4, -10), textcoords="offset points", fontsize=8)
    quality.set_xlim(0, 1.05)
    if len(_headline(aggregate, HEADLINE_COST)) and (_headline(aggregate, HEADLINE_COST)["mean"] > 0).all():
        cost.set_xscale("log")
    # a job's title (locator, data set, manifest, the backend that decided) outgrew the figure and was cut
    # at both ends: wrapped to the width the figure holds at its font
    figure.suptitle(textwrap.fill(title, width=TITLE_CHARACTERS), fontsize=11)
    figure.tight_layout()
    return figure


TITLE_CHARACTERS = 130  # what an 11-inch figure holds at 11 points (measured: 150, less a margin)


def job_description(title: str, aggregate: pd.DataFrame, counts: dict[str, int], overrides: list[str],
                    run_id: str, repeats: int = 1) -> str:
    """The run's description (`mlflow.note.content`, Markdown): what the job was and what it found.
    `counts` are of task runs (a task × a repeat): with repeats they are said as such."""
    def value(name: str) -> str:
        if name not in aggregate.index:
            return "—"
        row = aggregate.loc[name]
        ci = f" [{_fmt(row.ci95_low)}, {_fmt(row.ci95_high)}]" if row.ci95_low == row.ci95_low else ""
        return f"**{_fmt(row['mean'])}**{ci}"

    clusters = int(aggregate["clusters"].max()) if "clusters" in aggregate and not aggregate.empty else 0
    lines = [f"**{title}**", "",
             f"95% CIs over {clusters} repositories (clusters); " +
             ("tasks: " if repeats == 1 else f"{counts['total'] // repeats} tasks × {repeats} repeats, task runs: ")
             + ", ".join(f"{v} {k}" for k, v in counts.items()) + (
                 f"; overrides `{' '.join(overrides)}`" if overrides else ""), "",
             " · ".join(f"{name} {value(name)}" for name in HEADLINE_QUALITY if name in aggregate.index), "",
             "per task: " + " · ".join(f"{name} {value(name)}" for name in HEADLINE_COST if name in aggregate.index), "",
             f"Per-task rows: the `per_task` table; packs: `context_packs/`; replay: `python -m experiments.analysis.replay {run_id}`."]
    return "\n".join(lines)
