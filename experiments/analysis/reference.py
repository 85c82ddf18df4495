"""Each task of a job run scored against a reference run's result for the same task (seed 000's
reference-relative metrics, `metrics.reference`): what `experiments.analysis.compare --reference` compares.

The reference is any job run of the same task set: a canonical localization, an imported peer's
outputs (`locator=imported`: LocAgent, Agentless, SWE-Explore agent output), a stronger model's run.
Its first repeat of a task is the reference for that task; an arm's repeats are each scored and
reduced by their mean, as every per-task value is.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
from mlflow.entities import Run
from mlflow.tracking import MlflowClient

from experiments.analysis.runs import AnalysisError, Arm
from experiments.job.record import RecordError, open_record
from locator.result import LocalizationResult
from metrics.reference import REFERENCE_METRICS, ReferenceError, reference_metrics


def saved_results(client: MlflowClient, run: Run, work: Path) -> dict[str, list[LocalizationResult]]:
    """A job run's saved results by task, its repeats in order."""
    try:
        return open_record(client, run, work / run.info.run_id).results_by_task()
    except RecordError as exc:
        raise AnalysisError(str(exc)) from None


def reference_values(client: MlflowClient, arms: list[Arm], runs: list[Run], reference: Run,
                     shared: pd.Index) -> dict[str, pd.DataFrame]:
    """Per arm (by run id), one row per shared task the reference has a result for: the reference
    metrics (repeats reduced by their mean) and the task's repository."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        truth = {task: results[0] for task, results in saved_results(client, reference, work).items()}
        frames = {}
        for arm, run in zip(arms, runs):
            rows = {}
            for task, results in saved_results(client, run, work).items():
                if task not in truth or task not in shared:
                    continue
                try:
                    scored = pd.DataFrame([reference_metrics(r, truth[task]) for r in results])
                except ReferenceError as exc:
                    raise AnalysisError(f"{arm.label}, task {task}: {exc}") from None
                rows[task] = scored.apply(pd.to_numeric, errors="coerce").mean()
            frame = pd.DataFrame.from_dict(rows, orient="index")[list(REFERENCE_METRICS)] if rows else pd.DataFrame()
            if frame.empty:
                raise AnalysisError(f"{arm.label} and the reference share no task with a saved result")
            frame["repository"] = arm.task_values.loc[frame.index, "repository"]
            frames[arm.run_id] = frame.sort_index()
    return frames
