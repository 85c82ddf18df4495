"""Per-file and per-job reading telemetry from saved results: how each file ended, and for the job
the counts per termination reason, reconciliation kind and selection mode, and the model_stop rate."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from locator.result import LocalizationResult

# Stage details that are counts, summed over a job's tasks (the name says what was counted).
_COUNTED = ("terminated_", "reconciliations_", "selection_", "probes", "converged", "round_budget_exits",
            "final_regions", "evidence_candidates", "evidence_lines")


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
            for key, value in stage.details.items():
                if key.startswith(_COUNTED) and isinstance(value, int):
                    counts[f"{stage.name}.{key}"] += value
                elif key == "termination" and isinstance(value, str):
                    counts[f"{stage.name}.task_termination_{value}"] += 1
    metrics = {k: float(v) for k, v in sorted(counts.items())}
    for stage in {k.split(".")[0] for k in counts}:
        ended = sum(v for k, v in counts.items() if k.startswith(f"{stage}.terminated_"))
        if ended:
            metrics[f"{stage}.model_stop_rate"] = counts[f"{stage}.terminated_model_stop"] / ended
    return metrics
