"""The MLflow keys loclab logs its metrics under: one naming, read by the runner that logs them and
the summaries that read them back. Means are metrics; their 95 % CI bounds are one tag per job
(`loclab.ci95`) and the aggregate table artifact, so MLflow's chart and compare views lead with
the means instead of a section of 126 bounds."""

from __future__ import annotations

import json
import math
import re

from experiments.tracking.vocabulary import Section, Tag
from metrics.definitions import METRICS

ROUND_TO = 4  # decimal places of a logged mean: what the runs table shows; the artifacts keep every digit


_GROUPS = {section.value.split(" ", 1)[1]: section for section in Section}



def metric_key(name: str) -> str:
    """The MLflow key of a loclab metric: `1 quality/…`, `2 cost/…`, `4 funnel/…` and `5 review/…` by the
    registry's kind; a dotted name by its group (`reading.terminated_x` -> `3 reading/terminated_x`,
    `tasks.ok` -> `6 tasks/ok`, `harness.job_s`, `sweep.jobs_total`). MLflow keys cannot hold `@`:
    `file_acc_all@5` is logged as `1 quality/file_acc_all_at_05`, its k in two digits, because the UI
    sorts a section's charts by key (`at_10` came before `at_3`)."""
    flat = flat_name(name)
    spec = METRICS.get(name)
    if spec is not None:
        return f"{_GROUPS[spec.kind.value].value}/{flat}"
    group, dot, rest = flat.partition(".")
    if not dot:
        return flat
    section = _GROUPS.get(group)
    return f"{section.value if section else group}/{rest}"


def language_metric_key(language: str, name: str) -> str:
    """The MLflow key of a metric's mean over one language's tasks: `9 language/rust/file_acc_all_at_05`."""
    return f"{Section.LANGUAGE.value}/{language}/{flat_name(name)}"


def flat_name(name: str) -> str:
    """A metric name as an MLflow key can hold it: `@k` as `_at_` and k in two digits (every k is under
    100), also inside a derived name (`file_acc_all@5_std` -> `file_acc_all_at_05_std`)."""
    return re.sub(r"@(\d+)", lambda k: f"_at_{int(k.group(1)):02d}", name)


def logged_value(value: float) -> float:
    """A mean as logged: rounded where MLflow shows it (the runs table prints every digit it has):
    ROUND_TO decimals below 10, one fewer per digit before the point, none from 10,000 (a mean of
    38,336.0769 input tokens read 38336.0769 in the jobs view). Non-decreasing, so a mean rounded
    this way stays within its bounds rounded the same way."""
    value = float(value)
    if not math.isfinite(value):
        return value
    digits = max(0, ROUND_TO - max(0, math.floor(math.log10(abs(value))) if value else 0))
    return round(value, digits)




def ci_tag(bounds: dict[str, tuple[float, float, int]]) -> str:
    """The tag value of a job's CI bounds, rounded as the means are (so a mean stays within its bounds),
    each with the number of independent units (repositories) it was resampled over."""
    return json.dumps({name: [logged_value(low), logged_value(high), int(clusters)]
                       for name, (low, high, clusters) in bounds.items()}, separators=(",", ":"))


def ci_bounds(tags: dict[str, str], name: str) -> tuple[float, float] | None:
    """A metric's CI bounds from a job's tags, or None."""
    bounds = json.loads(tags.get(Tag.CI95, "{}")).get(name)
    return (bounds[0], bounds[1]) if bounds else None


def ci_clusters(tags: dict[str, str], name: str) -> int | None:
    """The number of repositories a metric's CI resampled (None for a tag written before it was kept)."""
    bounds = json.loads(tags.get(Tag.CI95, "{}")).get(name)
    return int(bounds[2]) if bounds and len(bounds) > 2 else None
