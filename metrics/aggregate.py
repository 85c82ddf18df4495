"""Across tasks: one value per task (repeats reduced first), then the mean and a 95 % bootstrap
CI that resamples repositories (`metrics.statistics`)."""

from __future__ import annotations

import pandas as pd

from metrics.definitions import METRICS
from metrics.statistics import BOOTSTRAP_RESAMPLES, ci_unit, cluster_bootstrap_ci

REPEAT_REDUCTION = "mean over repeats per task"
CI_METHOD = f"percentile bootstrap ({BOOTSTRAP_RESAMPLES} resamples) of the task mean, resampling repositories"


def per_task_values(per_task: pd.DataFrame) -> pd.DataFrame:
    """One row per task (index: task_id): each metric's mean over the task's ok repeats, with its
    repository, split and the number of repeats reduced. Repeats of a task are not independent
    observations; the task is the unit every statistic is computed over."""
    ok = per_task[per_task.status == "ok"]
    metrics = [m for m in METRICS if m in ok]
    values = ok[metrics].apply(pd.to_numeric, errors="coerce").groupby(ok["task_id"]).mean()
    keys = ok.groupby("task_id").agg(repository=("repository", "first"), split=("split", "first"),
                                     repeats=("repeat", "nunique"))
    return keys.join(values)


def aggregate(per_task: pd.DataFrame) -> pd.DataFrame:
    """One row per metric: n (tasks where it is defined), clusters (repositories among them), the
    CI's resampling unit, mean, ci95_low, ci95_high."""
    tasks = per_task_values(per_task)
    rows = []
    for name, spec in METRICS.items():
        if name not in tasks:
            continue
        defined = tasks[name].notna()
        values = tasks.loc[defined, name].to_numpy(dtype=float)
        clusters = tasks.loc[defined, "repository"].astype(str).to_numpy()
        low, high = cluster_bootstrap_ci(values, clusters)
        rows.append(
            {"metric": name, "kind": spec.kind.value, "n": len(values), "clusters": len(set(clusters)),
             "ci_unit": ci_unit(clusters).value if len(values) else None,
             "mean": float(values.mean()) if len(values) else None, "ci95_low": low, "ci95_high": high}
        )
    return pd.DataFrame(rows).set_index("metric")
