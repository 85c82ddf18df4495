"""The MLflow keys loclab logs its metrics under: one naming, read by the runner that logs them and
the summaries that read them back."""

from __future__ import annotations

from metrics.definitions import METRICS


def metric_key(name: str) -> str:
    """The MLflow key of a loclab metric, grouped so the UI's chart view sections them: `quality/…`,
    `cost/…` and `funnel/…` by the registry's kind, `reading/…` for reading telemetry (`reading.terminated_x`),
    `tasks/…` for the job's task counts. MLflow keys cannot hold `@`: `file_acc_all@5` is logged as
    `quality/file_acc_all_at_5`."""
    flat = name.replace("@", "_at_")
    spec = METRICS.get(name)
    if spec is not None:
        return f"{spec.kind.value}/{flat}"
    group, dot, rest = flat.partition(".")
    return f"{group}/{rest}" if dot else flat


def ci_key(name: str, bound: str) -> str:
    """`ci95/file_acc_all_at_5_low`: every CI bound in one chart section, away from the means."""
    return f"ci95/{name.replace('@', '_at_')}_{bound}"
