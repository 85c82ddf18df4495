"""Per-file and per-job reading telemetry from saved results: how each file ended, and for the job
the counts per termination reason, reconciliation kind and selection mode, and the model_stop rate."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from locator.result import LocalizationResult


def file_telemetry(results: list[tuple[str, int, LocalizationResult]]) -> pd.DataFrame:
    """One row per (task, repeat, stage, file) a stage reported on."""
    rows = [{"task_id": task, "repeat": repeat, "stage": stage.name, **f.model_dump(mode="json")}
            for task, repeat, result in results for stage in result.cost.stages for f in stage.files]
    return pd.DataFrame(rows)


def job_telemetry(results: list[tuple[str, int, LocalizationResult]]) -> dict[str, float]:
    """`<stage>.<count>` summed over tasks; `<stage>.task_termination_<reason>` for a stage that ends
    as a whole (the range runtime); `<stage>.model_stop_rate` over every file the stage ended."""
    counts: Counter = Counter()
    for _, _, result in results:
        for stage in result.cost.stages:
            for key in stage.counted:  # declared as counts where they were recorded
                counts[f"{stage.name}.{key}"] += stage.details[key]
            termination = stage.details.get("termination")
            if isinstance(termination, str):
                counts[f"{stage.name}.task_termination_{termination}"] += 1
    metrics = {k: float(v) for k, v in sorted(counts.items())}
    for stage in {k.split(".")[0] for k in counts}:
        ended = sum(v for k, v in counts.items() if k.startswith(f"{stage}.terminated_"))
        if ended:
            metrics[f"{stage}.model_stop_rate"] = counts[f"{stage}.terminated_model_stop"] / ended
    return metrics
