"""`python -m experiments.analysis.calibrate`: pick a threshold setting on one split, report it on another.

`--search NAME` runs an ask-and-tell Optuna search over the knobs of `conf/search/NAME.yaml` instead
(experiments.analysis.search): four or more knobs, where a grid would be too many jobs.

Over the jobs of a sweep of one or two parameters: quality and cost per setting on the choosing
split (`--choose-split`, default dev) and the reporting split (`--report-split`, default test), the
quality–cost Pareto frontier on the choosing split, and the recommended setting under the rule
"highest quality whose mean cost is within the budget" (ties: lower cost). The recommendation is
never tuned on the tasks it is judged on.
"""

from __future__ import annotations

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from experiments.tracking.sweep_summary import CHOOSE_SPLIT, REPORT_SPLIT  # noqa: E402
from experiments.analysis.runs import (  # noqa: E402
    AnalysisError, analysis_parser, children, describe_reduction, find_runs, latest_per_setting, load_arm, open_store,
    print_table, same_task_set, shared_tasks, write_report,
)
from experiments.tracking.metric_keys import logged_value, metric_key  # noqa: E402
from experiments.tracking.vocabulary import ReportKind, RunKind, Tag
from metrics.pareto import best_within_budget, pareto_front  # noqa: E402


def settings_table(arms, params: list[str], quality: str, cost: str, choose: str, report: str,
                   shared: pd.Index) -> pd.DataFrame:
    """Per setting, means over the tasks every setting completed (repeats reduced first), per split."""
    rows = []
    for arm in arms:
        tasks = arm.task_values.loc[shared]
        if "split" not in tasks:
            raise AnalysisError(f"{arm.label}: its per-task table has no split column (re-score it with experiments.score)")
        present = sorted(tasks["split"].dropna().astype(str).unique())
        for split, option in ((choose, "--choose-split"), (report, "--report-split")):
            if split not in present:  # an empty split would make every setting "pareto" and recommend a NaN
                raise AnalysisError(
                    f"{arm.label}: no task of the shared set is in split {split!r} ({option}); splits present: "
                    f"{present or 'none'}. Calibrate chooses on one split and reports on another: run the sweep on a "
                    "dataset whose tasks carry metadata.split (dataset=swebench_lite_pypi), or name splits it has")
        missing = [p for p in params if p not in arm.params]
        if missing:
            raise AnalysisError(f"{arm.label}: parameters {missing} were not logged by this run")
        row = {p: arm.params[p] for p in params} | {"run": arm.label}
        for split in (choose, report):
            part = tasks[tasks["split"] == split]
            row |= {f"{quality}[{split}]": part[quality].mean(), f"{cost}[{split}]": part[cost].mean(), f"n[{split}]": len(part)}
        rows.append(row)
    frame = pd.DataFrame(rows).set_index(params).sort_index()
    frame[f"pareto[{choose}]"] = pareto_front(frame, f"{quality}[{choose}]", f"{cost}[{choose}]")
    return frame


def recommend(frame: pd.DataFrame, quality: str, cost: str, split: str, budget: float | None):
    return best_within_budget(frame, f"{quality}[{split}]", f"{cost}[{split}]", budget)


def curves(frame: pd.DataFrame, params: list[str], quality: str, cost: str, splits: tuple[str, str]):
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    flat = frame.reset_index()
    x = params[0]
    groups = flat.groupby(params[1]) if len(params) > 1 else [(None, flat)]
    for key, group in groups:
        group = group.assign(_x=pd.to_numeric(group[x], errors="coerce")).sort_values("_x")
        suffix = f" ({params[1].split('.')[-1]}={key})" if key is not None else ""
        for split, style in zip(splits, ("o-", "s--")):
            left.plot(group["_x"], group[f"{quality}[{split}]"], style, label=f"{split}{suffix}")
            right.plot(group["_x"], group[f"{cost}[{split}]"], style, label=f"{split}{suffix}")
    for axis, metric in ((left, quality), (right, cost)):
        axis.set_xlabel(x.split(".")[-1])
        axis.set_ylabel(metric)
        axis.legend(fontsize=7)
    figure.suptitle("calibration curves")
    return figure


def recommended_metrics(frame: pd.DataFrame, chosen, args) -> dict[str, float]:
    """The report run's numbers: the recommended setting's quality and cost on the split it was chosen
    on and on the split it is reported on (`1 quality/file_recall_dev`, `…_test`), and how many settings
    were weighed; none but the count when no setting met the rule."""
    metrics = {metric_key("sweep.settings"): float(len(frame))}
    if chosen is None:
        return metrics
    row = frame.loc[chosen]
    for name in (args.quality, args.cost):
        for split in (args.choose_split, args.report_split):
            value = pd.to_numeric(row.get(f"{name}[{split}]"), errors="coerce")
            if value == value:
                metrics[f"{metric_key(name)}_{split}"] = logged_value(value)
    return metrics


def main(argv: list[str] | None = None) -> int:
    parser = analysis_parser("calibrate", __doc__)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--sweep", help="a multirun sweep's parent run: id, short id or name")
    source.add_argument("--runs", nargs="+", help="run ids / names / 'filter:<MLflow filter>'")
    source.add_argument("--search", metavar="NAME",
                        help="run (or resume) the Optuna search conf/search/NAME.yaml instead: each trial a job, "
                             "chosen on its choose_split, reported on its report_split")
    parser.add_argument("--param", action="append", help="swept parameter (once or twice; with --sweep or --runs)")
    parser.add_argument("--trials", type=int, help="with --search: completed trials to reach (default: the YAML's)")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="search.KEY=VALUE",
                        help="with --search: override the search's YAML, e.g. --set search.seed=1")
    parser.add_argument("--quality", default="file_recall")
    parser.add_argument("--cost", default="input_tokens")
    parser.add_argument("--budget", type=float, help="max mean cost per task (on the choosing split)")
    parser.add_argument("--choose-split", default=CHOOSE_SPLIT)
    parser.add_argument("--report-split", default=REPORT_SPLIT)
    args = parser.parse_args(argv)
    if args.search:
        from experiments.analysis.search import main_search

        if args.param or args.budget is not None:
            parser.error("--search takes its knobs, quality, cost and budget from its YAML (--set search.budget=…), "
                         "not --param or --budget")
        if args.experiment or args.out or args.dataset:
            parser.error("--search logs to its job's experiment and its parent run: --experiment, --dataset and --out "
                         "belong to --sweep and --runs (set the job's dataset in the search's YAML)")
        return main_search(args.search, args.settings, args.trials, args.db)
    if not args.param or len(args.param) > 2:
        parser.error("calibrate over a sweep or runs takes one or two --param")
    try:
        client = open_store(args)
        runs = (children(client, find_runs(client, args.experiment, args.sweep, kind=RunKind.SWEEP)[0].info.run_id) if args.sweep
                else [r for s in args.runs for r in find_runs(client, args.experiment, s)])
        runs = latest_per_setting(runs)
        if not runs:
            raise AnalysisError("no job runs to calibrate over")
        arms = [load_arm(client, run) for run in runs]
        manifest = same_task_set(arms)
        shared = shared_tasks(arms)
        frame = settings_table(arms, args.param, args.quality, args.cost, args.choose_split, args.report_split, shared)
    except AnalysisError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(describe_reduction(arms, shared))
    chosen = recommend(frame, args.quality, args.cost, args.choose_split, args.budget)
    frame["recommended"] = [index == chosen for index in frame.index]
    print_table(f"calibration over {', '.join(args.param)} (choose on {args.choose_split}, report on {args.report_split})", frame, args.format)
    rule = f"max {args.quality} on {args.choose_split} subject to mean {args.cost} <= {args.budget}" if args.budget \
        else f"max {args.quality} on {args.choose_split}"
    if chosen is None:
        print(f"no setting satisfies: {rule}")
    else:
        row = frame.loc[chosen]
        print(f"recommended ({rule}): {dict(zip(args.param, chosen if isinstance(chosen, tuple) else (chosen,)))}")
        print(f"  on {args.report_split}: {args.quality} = {row[f'{args.quality}[{args.report_split}]']:.4f}, "
              f"{args.cost} = {row[f'{args.cost}[{args.report_split}]']:.1f}")
    figure = curves(frame, args.param, args.quality, args.cost, (args.choose_split, args.report_split))
    folder = write_report(ReportKind.CALIBRATE, args.experiment, {"calibration": frame}, {"calibration_curves": figure},
                          {Tag.MANIFEST_HASH: manifest, Tag.RULE: rule}, args.out,
                          params={"params": ",".join(args.param), "recommended": str(chosen)},
                          reported=[a.run_id for a in arms], metrics=recommended_metrics(frame, chosen, args),
                          title=f"{', '.join(p.split('.')[-1] for p in args.param)} over {len(frame)} settings "
                                f"(chosen on {args.choose_split})")
    print(f"report: {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
