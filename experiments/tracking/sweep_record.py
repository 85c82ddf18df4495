"""What a sweep's parent run carries when the sweep ends, so the answer to "which setting wins?" is on
its page: the jobs side by side (an MLflow table artifact and the run's description), the swept
parameters as params (each with the values the jobs took), the best job's headline metrics, and a
quality-vs-cost figure of every job with its 95 % CIs; and a view of its jobs in the runs table,
best first, with the headline columns (`Tag.SWEEP_VIEW`), which no other run pushes out of the charts."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from mlflow.entities import Run
from mlflow.tracking import MlflowClient

from experiments.tracking.metric_keys import ci_bounds, ci_clusters, metric_key
from experiments.tracking.links import EXPERIMENT_VIEW_KEY, run_page, runs_view, saved_view
from metrics.paired import compare_frames
from metrics.pareto import pareto_front
from metrics.statistics import holm, smallest_p
from experiments.tracking.sweep_summary import (COLUMNS, PYTHON, BEST_BY, fmt_value, launch_order)
from experiments.tracking.vocabulary import SHARED_VIEW_PREFIX, MlflowTag, RunKind, Tag, tag_is

TABLE_ARTIFACT = "sweep_jobs.json"
FIGURE_ARTIFACT = "sweep_quality_vs_cost.png"
QUALITY = ("file_acc_all@5", "line_recall")
COST = ("input_tokens", "source_lines_read")
RANK_METRIC = "sweep.rank"  # a sweep job's place in its sweep's table: 1 is the best
# file_acc_all@1 is on the job page: beside @5 both headers read "1 quality/file_ac" in the table's width
VIEW_COLUMNS = ("file_acc_all@5", "line_recall", "line_precision", "model_calls", "input_tokens",
                "source_lines_read")


def _value(run: Run, name: str, bound: str | None = None) -> float | None:
    if bound is None:
        return run.data.metrics.get(metric_key(name))
    bounds = ci_bounds(run.data.tags, name)
    return None if bounds is None else bounds[0 if bound == "low" else 1]


# a config group's option, named by a tag of each job (the group has no param of its own)
GROUP_TAGS = {"locator": Tag.LOCATOR, "dataset": Tag.DATASET}


def _view_column(jobs: list[Run], key: str) -> str | None:
    """The jobs view's column for a swept key: its param, or for a config group (`locator=bm25,hybrid`:
    no param named `locator`) the tag that names the option each job ran (`loclab.locator`)."""
    if jobs and all(key in j.data.params for j in jobs):
        return f"params.`{key}`"
    tag = GROUP_TAGS.get(key)
    if tag and jobs and all(tag in j.data.tags for j in jobs):
        return f"tags.`{tag}`"
    return None


def swept_value(job: Run, key: str) -> str | None:
    """The value a job took for a swept key, as its override said (a config group such as `locator`
    is no param), else its param."""
    for override in job.data.tags.get(Tag.OVERRIDES, "").split():
        name, _, value = override.partition("=")
        if name.lstrip("+~") == key:
            return value
    return job.data.params.get(key)


@dataclass(frozen=True)
class Best:
    """The best job, chosen on the tasks every candidate completed (`shared_tasks` of them): a job that
    failed tasks is not compared on the easy rest (0.414 on 29 tasks is not better than 0.405 on 37)."""

    run: Run
    shared_tasks: int
    candidates: int  # FINISHED jobs with the headline metric that were compared


def versus_best(best: Run, jobs: list[Run], per_task: dict[str, pd.DataFrame]) -> dict[str, dict]:
    """Each other finished job's paired difference to the best in BEST_BY[0] over the tasks both
    completed (job − best), as `experiments.analysis.compare` computes it (`metrics.paired`) (cluster-bootstrap CI, permutation p
    over repositories), Holm-adjusted across the jobs compared; by run id."""
    metric, found = BEST_BY[0], {}
    base = per_task.get(best.info.run_id)
    for job in jobs:
        values = per_task.get(job.info.run_id)
        if job.info.run_id == best.info.run_id or base is None or values is None:
            continue
        row = compare_frames(base, values, [metric]).loc[metric]
        if not row["n"]:
            continue
        shared = base.index.intersection(values.index)
        found[job.info.run_id] = {"diff": float(row["diff"]), "low": row["ci95_low"], "high": row["ci95_high"],
                                  "p": row["p"], "units": int(row["clusters"]),
                                  "repositories": int(base.loc[shared, "repository"].nunique())}
    for row, adjusted in zip(found.values(), holm([row["p"] for row in found.values()])):
        row["p_holm"] = adjusted
    return found


def parent_table(jobs: list[Run], rows: list[dict], swept: list[str], best: Run | None,
                 per_task: dict[str, pd.DataFrame]) -> list[str]:
    """The parent page's table, in Markdown: one row per job, best first (then by BEST_BY, launch order
    on ties), the swept values as columns, n and failed tasks, the headline metric with its CI, the
    difference to the best with its paired CI and Holm-adjusted p, quality and cost beside; under it,
    the number of repositories and the smallest p they allow."""
    versus = versus_best(best, jobs, per_task) if best is not None else {}
    by_id = {row["run_id"]: row for row in rows}
    best_id = best.info.run_id if best is not None else None
    keys = [k for k in swept if any(swept_value(j, k) is not None for j in jobs)]
    header = ["", "job", *keys, "status", "n", "failed", f"{BEST_BY[0]} [95% CI]", "Δ to best [paired 95% CI]", "p (Holm)",
              *[c for c in COLUMNS if c != BEST_BY[0]]]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for job in ranked(jobs, best):
        row, vs = by_id[job.info.run_id], versus.get(job.info.run_id)
        won = job.info.run_id == best_id
        cells = ["★" if won else "", str(row["job"]), *[str(swept_value(job, k) or "—").replace("|", "\\|") for k in keys],
                 row["status"], _fmt_count(row["n"]), _fmt_count(row["failed"]),
                 fmt_value(row[BEST_BY[0]]) + (f" {row[BEST_BY[0] + ' ci95']}" if row[BEST_BY[0] + " ci95"] else ""),
                 "best" if won else "—" if vs is None else
                 f"{vs['diff']:+.3f}" + (f" [{vs['low']:+.3f}, {vs['high']:+.3f}]" if vs["low"] == vs["low"] and vs["low"] is not None else ""),
                 "" if won or vs is None or vs.get("p_holm") is None else f"{vs['p_holm']:.3f}"]
        cells += [fmt_value(row[name]) for name in COLUMNS if name != BEST_BY[0]]
        lines.append("| " + " | ".join(cells) + " |")
    if versus:
        compared = max(versus.values(), key=lambda vs: vs["units"])
        units = (f"{compared['repositories']} repositories" if compared["units"] == compared["repositories"] else
                 f"{compared['units']} tasks of one repository")  # one repository: the tasks are the test's units
        lines += ["", f"Paired over the tasks each job shares with the best, clustered by repository: {units}, "
                      f"so no p can be below {smallest_p(compared['units']):.3g}; Holm across {len(versus)} jobs."]
    return lines


def ranked(jobs: list[Run], best: Run | None) -> list[Run]:
    """The jobs best first: the best job (chosen on the tasks every finished job completed), then by
    BEST_BY's means, launch order on ties."""
    best_id = best.info.run_id if best is not None else None

    def order(job: Run) -> tuple:
        return (job.info.run_id != best_id, *(-(_value(job, m) if _value(job, m) is not None else float("-inf")) for m in BEST_BY),
                int(job.data.tags.get(Tag.SWEEP_JOB, "0")))

    return sorted(jobs, key=order)


# MLflow draws a run in the colour of its `mlflow.runColor` tag (else one derived from its id, which
# gave the best and the runner-up one colour): the best job green, the runner-up blue, then colours
# none of the first two reuse, in rank order (a sweep of more jobs than colours repeats them from the third on)
BEST_COLOURS = ("#2ca02c", "#1f77b4")
OTHER_COLOURS = ("#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#d62728", "#aec7e8",
                 "#ffbb78", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5")


def run_colours(ranked_jobs: list[Run]) -> dict[str, str]:
    """Each job's colour by its rank: the best and the runner-up a colour of their own."""
    return {job.info.run_id: BEST_COLOURS[i] if i < len(BEST_COLOURS) else OTHER_COLOURS[(i - len(BEST_COLOURS)) % len(OTHER_COLOURS)]
            for i, job in enumerate(ranked_jobs)}


def best_job(jobs: list[Run], per_task: dict[str, pd.DataFrame]) -> Best | None:
    """The FINISHED job with the highest mean of BEST_BY[0] (then BEST_BY[1]) over the tasks every such
    job completed. `per_task`: each job's per-task values (`metrics.aggregate.per_task_values`) by
    run id; a job without them cannot be compared and is left out."""
    finished = [j for j in jobs if j.info.status == "FINISHED" and _value(j, BEST_BY[0]) is not None
                and j.info.run_id in per_task]
    if not finished:
        return None
    shared = per_task[finished[0].info.run_id].index
    for job in finished[1:]:
        shared = shared.intersection(per_task[job.info.run_id].index)
    if len(shared) == 0:
        return None

    def score(job: Run) -> tuple[float, ...]:
        values = per_task[job.info.run_id].loc[shared]
        return tuple(float(values[m].mean()) if m in values and values[m].notna().any() else 0.0 for m in BEST_BY)

    return Best(max(finished, key=score), len(shared), len(finished))


def job_task_values(client: MlflowClient, jobs: list[Run]) -> dict[str, pd.DataFrame]:
    """Each finished job's per-task values, read from its `per_task.csv`; a job whose table cannot be
    read is left out (and so out of the choice of the best)."""
    import tempfile

    from metrics.aggregate import per_task_values

    found = {}
    for job in jobs:
        if job.info.status != "FINISHED":
            continue
        with tempfile.TemporaryDirectory() as tmp:
            try:
                frame = pd.read_csv(client.download_artifacts(job.info.run_id, "per_task.csv", tmp))
            except Exception:  # noqa: BLE001 - MLflow raises several types for a missing artifact
                continue
        if {"task_id", "status", "repository"} <= set(frame.columns):
            found[job.info.run_id] = per_task_values(frame)
    return found


def _count(job: Run, which: str) -> int | None:
    value = job.data.metrics.get(metric_key(f"tasks.{which}"))
    return None if value is None else int(value)


def _fmt_count(value: int | None) -> str:
    return "—" if value is None else str(value)


def ci_text(job: Run, name: str) -> str | None:
    """`[low, high] (k repos)`: a CI with the number of independent units it was resampled over."""
    bounds = ci_bounds(job.data.tags, name)
    if bounds is None:
        return None
    clusters = ci_clusters(job.data.tags, name)
    return f"[{fmt_value(bounds[0])}, {fmt_value(bounds[1])}]" + ("" if clusters is None else f" ({clusters} repos)")


LABEL_OFFSETS = [(dx, dy) for r in (6, 14, 24, 36) for dx, dy in ((r, r), (r, -r), (-r, r), (-r, -r), (r, 0), (0, r),
                                                                     (-r, 0), (0, -r))]  # points, nearest first


def _setting(job: Run) -> str:
    """What a point is: the job's swept values (its name up to the shared part)."""
    return (job.info.run_name or job.info.run_id).split(" · ")[0]


def _place_labels(axis, figure, labelled: list[tuple[str, float, float]]) -> None:
    """Each label beside its point at the nearest offset where its rendered box overlaps no label
    placed before it nor the legend."""
    renderer = figure.canvas.get_renderer()
    legend = axis.get_legend()
    boxes = [legend.get_window_extent(renderer)] if legend else []
    for text, x, y in labelled:
        for dx, dy in LABEL_OFFSETS:
            note = axis.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", fontsize=7,
                                 ha="left" if dx >= 0 else "right", va="bottom" if dy >= 0 else "top",
                                 arrowprops={"arrowstyle": "-", "lw": 0.4, "color": "0.5"} if abs(dx) > 6 else None)
            box = note.get_window_extent(renderer)
            if not any(box.overlaps(other) for other in boxes):
                break
            note.remove()
        else:  # every offset taken: the farthest (tests draw a crowded sweep and find no overlap)
            note = axis.annotate(text, (x, y), xytext=LABEL_OFFSETS[-1], textcoords="offset points", fontsize=7)
            box = note.get_window_extent(renderer)
        boxes.append(box)


def _figure(jobs: list[Run], quality: str):
    """`quality` (`tracking.sweep_figure_quality`: file Acc@5, or SWE-Explore's recall_at_300 or
    context_efficiency, quality at a line budget) of every job against each cost, with its 95 % CI where
    the job has one, labelled by setting (jobs at the same point share one label), and the Pareto front
    drawn: what the parent's page shows."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # drawn once, when a sweep ends
    from matplotlib.figure import Figure

    figure = Figure(figsize=(12, 5))
    FigureCanvasAgg(figure)
    axes = figure.subplots(1, len(COST))
    labels = []
    for axis, cost in zip(axes, COST):
        points = [(j, _value(j, cost), _value(j, quality)) for j in jobs]
        points = [(j, x, y) for j, x, y in points if x is not None and y is not None]
        for j, x, y in points:
            low, high = _value(j, quality, "low"), _value(j, quality, "high")
            axis.errorbar([x], [y], yerr=[[max(y - (low if low is not None else y), 0)], [max((high if high is not None else y) - y, 0)]],
                          fmt="o", color="tab:blue", ecolor="0.75", elinewidth=0.8, capsize=2, markersize=5, zorder=3)
        if points:
            known = pd.DataFrame([(x, y) for _, x, y in points], columns=["cost", "quality"]).drop_duplicates()
            front = known[pareto_front(known, "quality", "cost")].sort_values("cost")
            axis.step(front["cost"], front["quality"], where="post", color="tab:red", lw=1.2,
                      marker="o", mfc="none", mec="tab:red", ms=10, label="Pareto front (no job cheaper and better)",
                      zorder=2)  # ringed points: a front of one job is a point
            axis.legend(fontsize=8, loc="lower right")
        at: dict[tuple[float, float], list[str]] = {}
        for j, x, y in points:
            at.setdefault((x, y), []).append(_setting(j))
        labels.append([("; ".join(names), x, y) for (x, y), names in sorted(at.items(), key=lambda i: -i[0][1])])
        axis.set_xlabel(f"{cost} per task")
        with_ci = any(_value(j, quality, "low") is not None for j, _, _ in points)  # CIs are kept for the headline metrics
        axis.set_ylabel(f"{quality}" + (" (95% CI)" if with_ci else " (mean per task)"))
        axis.set_ylim(-0.05, 1.1)
        axis.margins(x=0.2)
    figure.suptitle(f"{quality} against cost, every job labelled by its setting")
    figure.tight_layout()
    for axis, labelled in zip(axes, labels):  # after the layout: a label's place is where it is drawn
        _place_labels(axis, figure, labelled)
    return figure


def sweep_view(parent_id: str, swept_columns: list[str]) -> dict:
    """The shared view of a sweep's jobs: only them (report runs and other sweeps out), best file Acc@5
    first, the swept params and headline metrics as columns, every job plotted (MLflow plots the first
    10 rows by default)."""
    return {"searchFilter": f"{tag_is(MlflowTag.PARENT_RUN_ID, parent_id)} and {tag_is(Tag.KIND, RunKind.JOB)}",
            "orderByKey": f"metrics.`{metric_key(BEST_BY[0])}`", "orderByAsc": False, "runsHiddenMode": "SHOW_ALL",
            "selectedColumns": swept_columns + [f"metrics.`{metric_key(m)}`" for m in VIEW_COLUMNS]}


def experiment_view() -> dict:
    """The experiment's own view, where `mlflow ui --app-name loclab` opens it (experiments.tracking.ui):
    jobs only (no parents, so no sweep folds its jobs away, and no report run), every sweep's best
    first, then every runner-up, … (`8 sweep/rank`; MLflow puts runs without it, single jobs, after),
    so the chart view, which plots the first 10 rows, shows each sweep's best on the headline metric."""
    return {"searchFilter": tag_is(Tag.KIND, RunKind.JOB), "orderByKey": f"metrics.`{metric_key(RANK_METRIC)}`",
            "orderByAsc": True, "runsHiddenMode": "FIRST_10_RUNS",
            "selectedColumns": [f"tags.`{Tag.LOCATOR}`"] + [f"metrics.`{metric_key(m)}`" for m in (RANK_METRIC, *VIEW_COLUMNS)]}


def record_sweep_parent(client: MlflowClient, parent_id: str, jobs: list[Run], swept: list[str],
                        figure_quality: str) -> None:
    jobs = launch_order(jobs)
    rows = []
    for job in jobs:
        row = {"job": job.data.tags.get(Tag.SWEEP_JOB), "name": job.info.run_name, "status": job.info.status,
               "run_id": job.info.run_id, "n": _count(job, "ok"), "failed": _count(job, "failed")}
        for name in COLUMNS:
            row[name] = _value(job, name)
            row[f"{name} ci95"] = ci_text(job, name)
        rows.append(row)
    frame = pd.DataFrame(rows)
    client.log_table(parent_id, data=frame, artifact_file=TABLE_ARTIFACT)
    logged = client.get_run(parent_id).data.params  # a resumed sweep's parent has them from its first end
    for key in swept:
        values = ",".join(dict.fromkeys(v for j in jobs if (v := swept_value(j, key)) is not None))[:6000]
        if values and key not in logged:  # MLflow params are written once
            client.log_param(parent_id, key, values)
    task_values = job_task_values(client, jobs)
    chosen = best_job(jobs, task_values)
    best = chosen.run if chosen is not None else None
    if chosen is not None:
        client.set_tag(parent_id, Tag.BEST_JOB, best.info.run_id)
        client.set_tag(parent_id, Tag.BEST_CHOSEN_ON, f"{chosen.shared_tasks} tasks every one of "
                                                              f"{chosen.candidates} finished jobs completed")
        for name in (*QUALITY, *COST, "model_calls"):
            if (value := _value(best, name)) is not None:
                client.log_metric(parent_id, metric_key(f"sweep.best_{name}"), value)
    order = ranked(jobs, best)
    for run_id, colour in run_colours(order).items():
        client.set_tag(run_id, MlflowTag.RUN_COLOR, colour)
    for rank, job in enumerate(order, start=1):  # what the experiment's view sorts by: every sweep's best first
        client.log_metric(job.info.run_id, metric_key(RANK_METRIC), rank)
    if any(_value(j, figure_quality) is not None for j in jobs):
        client.log_figure(parent_id, _figure(jobs, figure_quality), FIGURE_ARTIFACT)
    experiment_id = client.get_run(parent_id).info.experiment_id
    columns = [column for k in swept if (column := _view_column(jobs, k))]
    sweep_name = client.get_run(parent_id).info.run_name
    client.set_experiment_tag(experiment_id, SHARED_VIEW_PREFIX + parent_id,
                              saved_view(f"{sweep_name}: its jobs, best first", sweep_view(parent_id, columns)))
    client.set_experiment_tag(experiment_id, SHARED_VIEW_PREFIX + EXPERIMENT_VIEW_KEY,
                              saved_view("loclab: every sweep's best first", experiment_view()))
    view = runs_view(experiment_id, viewStateShareKey=parent_id)
    client.set_tag(parent_id, Tag.SWEEP_VIEW, view)
    lines = parent_table(jobs, rows, swept, best, task_values)
    best_line = (f"Best by {' then '.join(BEST_BY)} on the {chosen.shared_tasks} tasks every finished job completed: "
                 f"job {best.data.tags.get(Tag.SWEEP_JOB)} `{best.info.run_name}` (run {best.info.run_id})."
                 if chosen is not None else "No job finished with quality metrics on a task every job completed.")
    swept_line = "Swept: " + (", ".join(f"`{k}`" for k in swept) if swept else "nothing") + "."
    description = "\n".join([f"**{len(jobs)} jobs**. {swept_line} {best_line} [The jobs, best first]({view}).", "", *lines, "",
                             f"The table: `{TABLE_ARTIFACT}`; the figure: `{FIGURE_ARTIFACT}`. Job 0 takes every "
                             "swept value's first (a preset's baseline) and is `compare`'s baseline: "
                             f"`{PYTHON} -m experiments.analysis.compare` with the run ids compares any of them on every metric."])
    client.set_tag(parent_id, MlflowTag.DESCRIPTION, description)


COMPARE_REPORT_LINE = "**Compare report**"  # the parent description's line that links its compare report


def link_compare_report(client: MlflowClient, parent_id: str, report: Run) -> None:
    """The parent's page links its sweep's compare report (experiments.analysis.sweep_report): a tag
    naming the run, and a line under the description's first, replacing an earlier report's."""
    client.set_tag(parent_id, Tag.COMPARE_REPORT, report.info.run_id)
    description = client.get_run(parent_id).data.tags.get(MlflowTag.DESCRIPTION, "")
    head, *rest = [line for line in description.split("\n") if not line.startswith(COMPARE_REPORT_LINE)] or [""]
    link = (f"{COMPARE_REPORT_LINE}: [{report.info.run_name}]({run_page(report.info.experiment_id, report.info.run_id)}): "
            "every finished job against the first, its baseline, on every metric, paired CIs over repositories, Holm-adjusted, per-task wins and losses.")
    while rest and not rest[0]:  # the blank lines that follow the head, put back around the link
        rest.pop(0)
    client.set_tag(parent_id, MlflowTag.DESCRIPTION, "\n".join([head, "", link, "", *rest]))

