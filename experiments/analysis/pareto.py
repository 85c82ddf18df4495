"""`python -m experiments.analysis.pareto`: the non-dominated job runs of an experiment on one quality
metric (higher is better) against one cost metric (lower is better)."""

from __future__ import annotations

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from experiments.analysis.runs import (  # noqa: E402
    AnalysisError, analysis_parser, describe_reduction, find_runs, latest_per_setting, load_arm, open_store, print_table,
    same_task_set, shared_tasks, write_report,
)
from experiments.tracking.metric_keys import logged_value, metric_key  # noqa: E402
from experiments.tracking.vocabulary import ReportKind, Tag
from metrics.pareto import pareto_front  # noqa: E402


_VARIED = ("file_threshold", "directory_threshold", "recall_guard_fraction", "max_files", "batch_size", "epoch_width",
           "soft_rounds", "hard_rounds", "action_threshold", "observation_threshold", "top_files")


def describe_setting(arm) -> str:
    """Locator name, discovery kind and the values of the commonly swept parameters."""
    params = arm.params
    kind = params.get("locator.discovery._target_", "").rsplit(".", 1)[-1].replace("Discovery", "").lower()
    schedule = params.get("locator.reader.schedule._target_", "").rsplit(".", 1)[-1].replace("Schedule", "").lower()
    values = " ".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in sorted(params.items())
                      if k.startswith("locator.") and k.rsplit(".", 1)[-1] in _VARIED)
    return " ".join(filter(None, [arm.tags.get(Tag.LOCATOR), kind, schedule, values]))


def run_table(arms, quality: str, cost: str, shared: pd.Index, split: str | None = None, describe=None) -> pd.DataFrame:
    """Per run, the mean over the shared tasks (repeats reduced first) of the quality and cost metric."""
    rows = []
    for arm in arms:
        tasks = arm.task_values.loc[shared]
        if split is not None:
            tasks = tasks[tasks["split"] == split]
        missing = [m for m in (quality, cost) if m not in tasks]
        if missing:
            numeric = sorted(c for c in tasks.columns if pd.api.types.is_numeric_dtype(tasks[c]))
            raise AnalysisError(f"{arm.label}: no per-task metric {', '.join(missing)} (a job scored before it existed is "
                                f"re-scored with experiments.score); its metrics: {', '.join(numeric)}")
        rows.append({"run": arm.label, "setting": describe(arm) if describe else arm.tags.get(Tag.LOCATOR),
                     "n": len(tasks), quality: tasks[quality].mean(), cost: tasks[cost].mean()})
    frame = pd.DataFrame(rows).set_index("run")
    known = frame.dropna(subset=[quality, cost])
    frame["pareto"] = pareto_front(known, quality, cost).reindex(frame.index).fillna(False)
    return frame.sort_values(cost)


def scatter(frame: pd.DataFrame, quality: str, cost: str, title: str):
    figure, axis = plt.subplots(figsize=(7, 4.5))
    known = frame.dropna(subset=[quality, cost])
    axis.scatter(known[cost], known[quality], color="tab:gray", label="dominated")
    front = known[known.pareto].sort_values(cost)
    axis.plot(front[cost], front[quality], "o-", color="tab:red", label="Pareto frontier")
    for _, row in known.iterrows():
        axis.annotate(str(row.setting)[:40], (row[cost], row[quality]), fontsize=7, xytext=(3, 3), textcoords="offset points")
    axis.set_xscale("symlog")
    axis.set_xlabel(f"{cost} (mean per task, lower is better)")
    axis.set_ylabel(f"{quality} (mean, higher is better)")
    axis.set_title(title)
    axis.legend()
    return figure


def main(argv: list[str] | None = None) -> int:
    parser = analysis_parser("pareto", __doc__)
    parser.add_argument("--runs", nargs="+", default=["filter:attributes.status = 'FINISHED'"],
                        help="run ids / names / 'filter:<MLflow filter>' (default: every finished job)")
    parser.add_argument("--quality", default="file_acc_all@5",
                        help="any per-task quality metric (higher is better), e.g. SWE-Explore's recall_at_300 (core lines "
                             "within a 300-line budget) or context_efficiency (useful lines / lines given)")
    parser.add_argument("--cost", default="input_tokens")
    parser.add_argument("--split", help="only tasks of this split")
    args = parser.parse_args(argv)
    try:
        client = open_store(args)
        runs = latest_per_setting([run for selector in args.runs for run in find_runs(client, args.experiment, selector)])
    except AnalysisError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    arms = []
    for run in runs:
        try:
            arms.append(load_arm(client, run))
        except AnalysisError as exc:
            print(f"skipped: {exc}", file=sys.stderr)
    try:
        if not arms:
            raise AnalysisError("no run could be read")
        if len(arms) < 2:  # one point is on its own front: exit 0 with it "pareto" said nothing
            raise AnalysisError(f"a Pareto front compares settings, and 1 run was read ({arms[0].label}): name at "
                                "least two runs (--runs), or run a sweep")
        manifest = same_task_set(arms)
        shared = shared_tasks(arms)
        frame = run_table(arms, args.quality, args.cost, shared, args.split, describe_setting)
    except AnalysisError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    reduction = describe_reduction(arms, shared)
    print(reduction)
    print_table(f"Pareto: {args.quality} vs {args.cost} ({len(frame)} runs)", frame, args.format)
    figure = scatter(frame, args.quality, args.cost, f"{args.experiment}: {args.quality} vs {args.cost}")
    front = frame[frame.pareto] if "pareto" in frame else frame.iloc[:0]
    metrics = {metric_key("sweep.settings"): float(len(frame)), metric_key("sweep.pareto_front"): float(len(front))}
    known = frame.dropna(subset=[args.quality])
    if len(known):
        metrics[f"{metric_key(args.quality)}_best"] = logged_value(float(known[args.quality].max()))
    folder = write_report(ReportKind.PARETO, args.experiment, {"pareto": frame}, {"pareto": figure},
                          {Tag.QUALITY: args.quality, Tag.COST: args.cost, Tag.MANIFEST_HASH: manifest,
                           Tag.REDUCTION: reduction}, args.out, reported=[a.run_id for a in arms],
                          metrics=metrics, title=f"{args.quality} vs {args.cost}, {len(front)} of {len(frame)} on the front")
    print(f"report: {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
