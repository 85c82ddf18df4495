"""`python -m experiments.analysis.compare RUN_A RUN_B [RUN_C …]`: paired comparison of runs on one task set.

Each later arm is compared with the first (the baseline) on the tasks every arm completed: per
metric, the mean of each arm, the paired difference with a 95 % bootstrap CI that resamples
repositories, and a paired test that respects the same clustering (a sign-flip permutation test
over repositories: tasks of one repository are not independent), with the number of clusters
both rest on; Holm's correction across every quality comparison the report makes (every arm
against the baseline, over distinct metrics: a metric whose per-task values equal another's is
tested once), with the family size printed; cost differences beside them; a per-task
win/loss/tie table. A metric without values for a pair is reported untested.
"""

from __future__ import annotations

import argparse
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from mlflow.tracking import MlflowClient  # noqa: E402

from experiments.analysis.runs import (  # noqa: E402
    AnalysisError, analysis_parser, describe_reduction, find_runs, load_arm, open_store, print_table, same_task_set,
    shared_tasks, write_report,
)
from experiments.tracking.metric_keys import logged_value, metric_key  # noqa: E402
from experiments.analysis.reference import reference_values  # noqa: E402
from experiments.tracking.sweep_summary import BEST_BY  # noqa: E402
from experiments.tracking.vocabulary import ReportKind, Tag
from metrics.definitions import METRICS, MetricKind  # noqa: E402
from metrics.paired import compare_frames  # noqa: E402
from metrics.reference import REFERENCE_METRICS  # noqa: E402
from metrics.statistics import (  # noqa: E402
    MIN_CLUSTERS_FOR_CI, PERMUTATION_TEST, holm,
)

QUALITY = ("file_acc_all@1", "file_acc_all@5", "file_hit_any@5", "file_recall", "file_precision", "file_mrr", "file_map",
           "function_acc_all@5", "innermost_entity_acc_all@5", "line_recall", "line_precision", "gold_region_recall", "selected_labeled_files",
           "selected_file_recall", "generated_labeled_files", "pack_line_recall", "false_complete_claims")
COST = ("model_calls", "input_tokens", "output_tokens", "source_lines_read", "index_lines", "elapsed_ms", "source_tokens",
        "response_json_tokens", "dead_end_source_tokens", "two_turn_json_tokens", "exact_hash_resends", "rendered_tokens")
FUNNEL = tuple(name for name, spec in METRICS.items() if spec.kind is MetricKind.FUNNEL)
# what Holm corrects: the quality metrics and the pack's defects (a false claim of completeness is a quality
# failure seed 002 counts); costs are reported, not tested
TESTED_KINDS = (MetricKind.QUALITY.value, MetricKind.PACK.value, MetricKind.REFERENCE.value)


def funnel_frame(arms: list, shared: pd.Index) -> pd.DataFrame:
    """Each arm's stage funnel side by side: mean over the shared tasks where the metric is defined,
    with that count (a gold file never handed off leaves the reader's metrics undefined)."""
    rows = []
    for metric in FUNNEL:
        row = {"metric": metric}
        for arm in arms:
            values = arm.task_values.loc[shared].get(metric, pd.Series(dtype=float)).dropna()
            row[arm.label] = values.mean() if len(values) else np.nan
            row[f"n {arm.label}"] = len(values)
        rows.append(row)
    return pd.DataFrame(rows).set_index("metric")




def duplicate_metrics(frames: list[pd.DataFrame], metrics: list[str]) -> dict[str, str]:
    """metric -> the earlier metric whose per-task values it equals in every arm (tested once)."""
    seen: dict[tuple, str] = {}
    duplicates = {}
    for metric in metrics:
        if any(metric not in f for f in frames):
            continue
        key = tuple(tuple(pd.to_numeric(f[metric], errors="coerce").round(12).fillna(-1e300)) for f in frames)
        if key in seen:
            duplicates[metric] = seen[key]
        else:
            seen[key] = metric
    return duplicates


def constant_metrics(frames: list[pd.DataFrame], metrics: list[str]) -> list[str]:
    """Metrics with one value over every task of every arm (`false_complete_claims` at 0 everywhere): no
    difference to test, so no place in the Holm family (it would only make the others' p larger)."""
    constant = []
    for metric in metrics:
        values = pd.concat([pd.to_numeric(f[metric], errors="coerce") for f in frames if metric in f]).dropna()
        if len(values) and values.round(12).nunique() == 1:
            constant.append(metric)
    return constant


def correct_across(tables: list[pd.DataFrame], duplicates: dict[str, str], constant: list[str] = ()) -> int:
    """Holm over every quality comparison of the report (each arm against the baseline), each
    distinct metric once, none constant over every run; sets `p_holm` in place, says in
    `holm_family` why a row is outside the family, and returns the family size."""
    family = [(table, metric) for table in tables for metric in table.index
              if table.loc[metric, "kind"] in TESTED_KINDS and metric not in duplicates
              and metric not in constant and not pd.isna(table.loc[metric, "p"])]
    adjusted = holm([float(table.loc[metric, "p"]) for table, metric in family])
    for (table, metric), p in zip(family, adjusted):
        table.loc[metric, "p_holm"] = p
        table.loc[metric, "holm_family"] = "in"
    for table in tables:
        for metric in table.index:
            if metric in constant:
                table.loc[metric, "holm_family"] = "constant: not tested"
            elif metric in duplicates:
                table.loc[metric, "holm_family"] = f"= {duplicates[metric]}"
            elif table.loc[metric, "kind"] not in TESTED_KINDS:
                table.loc[metric, "holm_family"] = "cost: not corrected"
            elif pd.isna(table.loc[metric, "p"]):
                table.loc[metric, "holm_family"] = "untested"
    return len(family)


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


def parser() -> argparse.ArgumentParser:
    parser = analysis_parser("compare", __doc__)
    parser.add_argument("runs", nargs="+", help="run ids, run names, or 'filter:<MLflow filter>' (first = baseline)")
    parser.add_argument("--full", action="store_true",
                        help="print every arm's tables (the default for two runs; with more, one row per arm, the tables in the report)")
    parser.add_argument("--reference", metavar="RUN",
                        help="judge every run against this run's results for the same tasks (a canonical localization, an "
                             "imported peer, a stronger model) instead of gold: seed 000's reference-relative metrics")
    parser.add_argument("--primary", default=BEST_BY[0],
                        help=f"metric of the per-task difference plot and the report run's metrics (default {BEST_BY[0]}, "
                             "what the sweeps rank by)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return compare(open_store(args), args)
    except AnalysisError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def compare(client: MlflowClient, args: argparse.Namespace) -> int:
    """The comparison `args` asks for, on `client`'s store: printed, and written as a report run.
    Raises AnalysisError for runs it cannot compare."""
    runs = [run for selector in args.runs for run in find_runs(client, args.experiment, selector)]
    if len(runs) < (1 if args.reference else 2):
        raise AnalysisError("compare needs at least two runs (or one, against --reference)")
    arms = [load_arm(client, run) for run in runs]
    if args.reference:
        [reference] = find_runs(client, args.experiment, args.reference)[:1]
        manifest = same_task_set([*arms, load_arm(client, reference)])
        return compare_to_reference(client, args, arms, runs, reference, shared_tasks(arms), manifest)
    manifest = same_task_set(arms)
    shared = shared_tasks(arms)
    print(describe_reduction(arms, shared))
    base = arms[0]
    base_tasks = base.task_values.loc[shared]
    tables, figures = {}, {}
    funnel = funnel_frame(arms, shared)
    print_table(f"stage funnel — {len(shared)} shared tasks (mean where defined, n = tasks)", funnel, args.format)
    tables["funnel"] = funnel
    metrics = list(QUALITY + COST)
    others = [(other, other.task_values.loc[shared]) for other in arms[1:]]
    comparisons = [compare_frames(base_tasks, other_tasks, metrics) for _, other_tasks in others]
    frames = [base_tasks] + [t for _, t in others]
    constant = constant_metrics(frames, list(QUALITY))
    duplicates = duplicate_metrics(frames, [m for m in QUALITY if m not in constant])
    family = correct_across(comparisons, duplicates, constant)
    clusters = int(base_tasks["repository"].nunique())
    print(f"paired tests: {PERMUTATION_TEST} over {clusters} repositories (the CIs resample the same); Holm across "
          f"{family} comparisons ({len(others)} arm(s) x distinct quality metrics"
          + (f"; {len(duplicates)} duplicate metric(s) tested once: "
             + ", ".join(f"{m} = {d}" for m, d in duplicates.items()) if duplicates else "")
          + (f"; constant over every run, so not tested: {', '.join(constant)}" if constant else "") + ")")
    if clusters < MIN_CLUSTERS_FOR_CI:
        print(f"warning: {clusters} repositories are too few for a reliable cluster CI or test "
              f"(fewer than {MIN_CLUSTERS_FOR_CI}): read the intervals as coarse")
    full = args.full or len(others) == 1
    if not full:
        print_table(f"each arm against {base.label} on {args.primary} and the headline metrics — {len(shared)} shared tasks, "
                    f"{clusters} repositories (diff = arm − base; CI and test cluster repositories; Holm family {family})",
                    arms_overview(arms[1:], comparisons, args.primary), args.format)
    for (other, other_tasks), table in zip(others, comparisons):
        name = f"{base.label} vs {other.label}"
        wlt = win_loss_tie(base_tasks, other_tasks, list(QUALITY[:6]))
        counts = wlt.apply(lambda col: col.value_counts()).fillna(0).astype(int).T
        counts.index.name = "metric"
        if full:
            print_table(f"{name} — {len(shared)} shared tasks, {clusters} repositories (diff = other − base; CI and test "
                        f"cluster repositories; Holm family {family})", table, args.format)
            print_table(f"{name} — per-task win/loss/tie of {other.label}", counts, args.format)
        key = other.label.replace("/", "_")
        tables[f"compare_{key}"] = table
        tables[f"per_task_{key}"] = wlt
        figures[f"difference_{key}"] = _difference_plot(base_tasks, other_tasks, args.primary, f"{name}: Δ {args.primary}")
    # the report run's numbers: per arm (by its position, 1 = the first after the baseline) the paired
    # difference in the primary metric, its CI and its Holm-adjusted p; arm labels are no MLflow keys
    primary = metric_key(args.primary)
    report_metrics = {f"{primary}_base": float(base_tasks[args.primary].mean())} if args.primary in base_tasks else {}
    for i, table in enumerate(comparisons, start=1):
        if args.primary in table.index and table.loc[args.primary, "n"]:
            row = table.loc[args.primary]
            report_metrics |= {f"{primary}_diff_arm{i}": row["diff"], f"{primary}_diff_arm{i}_ci95_low": row["ci95_low"],
                               f"{primary}_diff_arm{i}_ci95_high": row["ci95_high"]}
            if row.get("p_holm") == row.get("p_holm"):
                report_metrics[f"{primary}_p_holm_arm{i}"] = row["p_holm"]
    folder = write_report(ReportKind.COMPARE, args.experiment, tables, figures,
                          {Tag.MANIFEST_HASH: manifest, Tag.ARMS: ",".join(a.run_id for a in arms),
                           Tag.REDUCTION: describe_reduction(arms, shared)},
                          args.out, params={"baseline": base.label, "arms": ", ".join(a.label for a in arms[1:])},
                          reported=[a.run_id for a in arms],
                          metrics={k: logged_value(v) for k, v in report_metrics.items() if v == v and v is not None},
                          title=f"{base.label} vs " + (arms[1].label if len(arms) == 2 else f"{len(arms) - 1} arms"),
                          legend=f"Metrics `…_base`: `{base.label}`, the baseline; `…_armN` its paired difference to arm N (95 % CI, "
                                 "Holm-adjusted p): " + "; ".join(f"arm {i} = `{arm.label}`" for i, arm in enumerate(arms[1:], start=1)) + ".")
    if not full:
        print(f"every metric of each arm, and its per-task win/loss/tie: {folder}/compare_*.csv, per_task_*.csv "
              "(--full prints them here)")
    print(f"report: {folder}")
    return 0


def compare_to_reference(client, args, arms, runs, reference, shared: pd.Index, manifest: str) -> int:
    """Every arm scored against the reference run's results (seed 000's reference-relative metrics), their
    means side by side, and each arm after the first against the first, paired over the tasks, clustered
    by repository, Holm across the arms and metrics; a report run named for what it compared."""
    frames = reference_values(client, arms, runs, reference, shared)
    tasks = sorted(set.intersection(*(set(f.index) for f in frames.values())))
    frames = {run_id: frame.loc[tasks] for run_id, frame in frames.items()}
    label = f"{reference.info.run_name}#{reference.info.run_id[:6]}"
    means = pd.DataFrame({arm.label: frames[arm.run_id][list(REFERENCE_METRICS)].mean() for arm in arms}).T
    means.index.name = "run"
    clusters = int(frames[arms[0].run_id]["repository"].nunique())
    print_table(f"against the reference {label} — {len(tasks)} tasks, {clusters} repositories (mean per task)", means, args.format)
    tables = {"reference_means": means}
    comparisons = [compare_frames(frames[arms[0].run_id], frames[arm.run_id], list(REFERENCE_METRICS)) for arm in arms[1:]]
    family = correct_across(comparisons, {})
    for arm, table in zip(arms[1:], comparisons):
        print_table(f"{arms[0].label} vs {arm.label}, judged by the reference (diff = arm − {arms[0].label}; Holm family "
                    f"{family})", table, args.format)
        tables[f"reference_compare_{arm.label.replace('/', '_')}"] = table
    metrics = {f"{metric_key(m)}_arm{i}": logged_value(v) for i, arm in enumerate(arms)
               for m, v in means.loc[arm.label].items() if v == v}
    folder = write_report(ReportKind.COMPARE, args.experiment, tables, {},
                          {Tag.MANIFEST_HASH: manifest, Tag.ARMS: ",".join(a.run_id for a in arms),
                           Tag.REFERENCE_RUN: reference.info.run_id},
                          args.out, params={"reference": label, "arms": ", ".join(a.label for a in arms)},
                          reported=[a.run_id for a in arms] + [reference.info.run_id], metrics=metrics,
                          title=" vs ".join(a.label for a in arms[:2]) + (f" +{len(arms) - 2}" if len(arms) > 2 else "")
                                + f" against the reference {label}")
    print(f"report: {folder}")
    return 0


OVERVIEW_METRICS = ("file_acc_all@5", "line_recall", "input_tokens", "source_lines_read")  # beside the primary


def arms_overview(arms, comparisons: list[pd.DataFrame], primary: str) -> pd.DataFrame:
    """One row per arm: its paired difference to the baseline in `primary` with the CI and Holm p, and
    the difference in each headline metric (what sweeps rank by and their cost), for a compare of many arms
    that printed two tables per arm (461 lines for nine runs)."""
    rows = []
    for arm, table in zip(arms, comparisons):
        row = {"arm": arm.label}
        if primary in table.index and table.loc[primary, "n"]:
            found = table.loc[primary]
            bounded = all(found[b] is not None and found[b] == found[b] for b in ("ci95_low", "ci95_high"))
            row |= {f"Δ {primary}": found["diff"],
                    "ci95": f"[{found['ci95_low']:.3g}, {found['ci95_high']:.3g}]" if bounded else "—",  # one task, or one value
                    "p_holm": found.get("p_holm"), "n": int(found["n"])}
        for metric in (m for m in OVERVIEW_METRICS if m != primary):
            if metric in table.index and table.loc[metric, "n"]:
                row[f"Δ {metric}"] = table.loc[metric, "diff"]
        rows.append(row)
    return pd.DataFrame(rows).set_index("arm")


if __name__ == "__main__":
    sys.exit(main())
