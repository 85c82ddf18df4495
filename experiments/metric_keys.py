"""The MLflow keys loclab logs its metrics under: one naming, read by the runner that logs them and
the summaries that read them back. Means are metrics; their 95 % CI bounds are one tag per job
(`loclab.ci95`) and the aggregate table artifact, so MLflow's chart and compare views lead with
the means instead of a section of 126 bounds."""

from __future__ import annotations

import json

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


CI_TAG = "loclab.ci95"  # a job's 95 % CI bounds, {metric: [low, high]}: a tag, so the chart view opens on means


def ci_tag(bounds: dict[str, tuple[float, float]]) -> str:
    """The tag value of a job's CI bounds (rounded to 6 places: a bound is shown at 3)."""
    return json.dumps({name: [round(low, 6), round(high, 6)] for name, (low, high) in bounds.items()},
                      separators=(",", ":"))


def ci_bounds(tags: dict[str, str], name: str) -> tuple[float, float] | None:
    """A metric's CI bounds from a job's tags, or None."""
    bounds = json.loads(tags.get(CI_TAG, "{}")).get(name)
    return (bounds[0], bounds[1]) if bounds else None
