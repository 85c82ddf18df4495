"""`python -m experiments.compare RUN_A RUN_B [RUN_C …]`: paired comparison of runs on one task set.

Each later arm is compared with the first (the baseline) on the tasks every arm completed: per
metric, the mean of each arm, the paired difference with a 95 % bootstrap CI that resamples
repositories, a paired test (McNemar for per-task hits, Wilcoxon signed-rank otherwise) and Holm's
correction across the quality metrics; cost differences beside them; a per-task win/loss/tie table.
"""

from __future__ import annotations

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from experiments.analysis import (  # noqa: E402
    AnalysisError, analysis_parser, describe_reduction, find_runs, load_arm, open_store, print_table, same_task_set,
    shared_tasks, task_values, write_report,
)
from metrics.definitions import METRICS, MetricKind  # noqa: E402
from metrics.statistics import cluster_bootstrap_ci, holm, paired_test  # noqa: E402

QUALITY = ("file_acc_all@1", "file_acc_all@5", "file_hit_any@5", "file_recall", "file_precision", "file_mrr", "file_map",
           "entity_acc_all@5", "line_recall", "line_precision", "gold_region_recall", "selected_labeled_files",
           "selected_file_recall", "generated_labeled_files", "pack_line_recall", "false_complete_claims")
COST = ("model_calls", "input_tokens", "output_tokens", "source_lines_read", "index_lines", "elapsed_ms", "source_tokens",
        "response_json_tokens", "dead_end_source_tokens", "two_turn_json_tokens", "exact_hash_resends", "rendered_tokens")
FUNNEL = tuple(name for name, spec in METRICS.items() if spec.kind is MetricKind.FUNNEL)


def funnel_frame(arms: list, shared: pd.Index) -> pd.DataFrame:
    """Each arm's stage funnel side by side: mean over the shared tasks where the metric is defined,
    with that count (a gold file never handed off leaves the reader's metrics undefined)."""
    rows = []
    for metric in FUNNEL:
        row = {"metric": metric}
        for arm in arms:
            values = task_values(arm).loc[shared].get(metric, pd.Series(dtype=float)).dropna()
            row[arm.label] = values.mean() if len(values) else np.nan
            row[f"n {arm.label}"] = len(values)
        rows.append(row)
    return pd.DataFrame(rows).set_index("metric")


def compare_frames(base: pd.DataFrame, other: pd.DataFrame, metrics: list[str], seed: int = 0) -> pd.DataFrame:
    """One row per metric: means, paired difference (other - base), CI, test, p, Holm-adjusted p."""
    shared = base.index.intersection(other.index)
    rows = []
    for metric in metrics:
        pair = pd.DataFrame({"a": base.loc[shared, metric], "b": other.loc[shared, metric],
                             "repo": base.loc[shared, "repository"]}).dropna()
        a, b = pair.a.to_numpy(float), pair.b.to_numpy(float)
        if len(pair) == 0:
            rows.append({"metric": metric, "kind": METRICS[metric].kind.value, "n": 0})
            continue
        low, high = cluster_bootstrap_ci(b - a, pair.repo.to_numpy(), seed=seed)
        test = paired_test(b, a)
        rows.append({"metric": metric, "kind": METRICS[metric].kind.value, "n": len(pair), "mean_base": a.mean(),
                     "mean_other": b.mean(), "diff": (b - a).mean(), "ci95_low": low, "ci95_high": high,
                     "test": test.test, "p": test.p_value})
    table = pd.DataFrame(rows).set_index("metric")
    quality = table.kind == MetricKind.QUALITY.value
    table["p_holm"] = np.nan
    if "p" in table:
        table.loc[quality, "p_holm"] = holm([None if pd.isna(p) else float(p) for p in table.loc[quality, "p"]])
    return table


def win_loss_tie(base: pd.DataFrame, other: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    shared = base.index.intersection(other.index)
    table = pd.DataFrame(index=shared)
    for metric in metrics:
        diff = other.loc[shared, metric] - base.loc[shared, metric]
        table[metric] = np.select([diff > 0, diff < 0, diff == 0], ["win", "loss", "tie"], default="n/a")
    return table


def _difference_plot(base: pd.DataFrame, other: pd.DataFrame, metric: str, title: str):
    shared = base.index.intersection(other.index)
    diff = (other.loc[shared, metric] - base.loc[shared, metric]).dropna().sort_values()
    figure, axis = plt.subplots(figsize=(8, 3.5))
    axis.bar(range(len(diff)), diff.to_numpy(), color=["tab:red" if d < 0 else "tab:green" for d in diff])
    axis.axhline(0, color="black", linewidth=0.8)
    axis.set_xlabel("task (sorted by difference)")
    axis.set_ylabel(f"Δ {metric}")
    axis.set_title(title)
    return figure


def main(argv: list[str] | None = None) -> int:
    parser = analysis_parser("compare", __doc__)
    parser.add_argument("runs", nargs="+", help="run ids, run names, or 'filter:<MLflow filter>' (first = baseline)")
    parser.add_argument("--primary", default="file_recall", help="metric of the per-task difference plot")
    args = parser.parse_args(argv)
    try:
        client = open_store(args)
        runs = [run for selector in args.runs for run in find_runs(client, args.experiment, selector)]
        if len(runs) < 2:
            raise AnalysisError("compare needs at least two runs")
        arms = [load_arm(client, run) for run in runs]
        manifest = same_task_set(arms)
        shared = shared_tasks(arms)
    except AnalysisError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(describe_reduction(arms, shared))
    base = arms[0]
    base_tasks = task_values(base).loc[shared]
    tables, figures = {}, {}
    funnel = funnel_frame(arms, shared)
    print_table(f"stage funnel — {len(shared)} shared tasks (mean where defined, n = tasks)", funnel, args.format)
    tables["funnel"] = funnel
    for other in arms[1:]:
        other_tasks = task_values(other).loc[shared]
        name = f"{base.label} vs {other.label}"
        table = compare_frames(base_tasks, other_tasks, list(QUALITY + COST))
        print_table(f"{name} — {len(shared)} shared tasks (diff = other − base; CI clusters repositories)", table, args.format)
        wlt = win_loss_tie(base_tasks, other_tasks, list(QUALITY[:6]))
        counts = wlt.apply(lambda col: col.value_counts()).fillna(0).astype(int).T
        counts.index.name = "metric"
        print_table(f"{name} — per-task win/loss/tie of {other.label}", counts, args.format)
        key = other.label.replace("/", "_")
        tables[f"compare_{key}"] = table
        tables[f"per_task_{key}"] = wlt
        figures[f"difference_{key}"] = _difference_plot(base_tasks, other_tasks, args.primary, f"{name}: Δ {args.primary}")
    folder = write_report("compare", args.experiment, tables, figures,
                          {"loclab.manifest_blake3": manifest, "loclab.arms": ",".join(a.run_id for a in arms),
                           "loclab.reduction": describe_reduction(arms, shared)},
                          args.out, params={"baseline": base.label, "arms": ", ".join(a.label for a in arms[1:])})
    print(f"report: {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
