"""Across tasks: mean and a bootstrap 95% confidence interval of each metric."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats

from metrics.definitions import METRICS

BOOTSTRAP_RESAMPLES = 2000


def bootstrap_ci(values: np.ndarray, seed: int = 0) -> tuple[float | None, float | None]:
    """Percentile bootstrap of the mean; None below two observations, exact for constant data."""
    if len(values) < 2:
        return None, None
    if np.all(values == values[0]):
        return float(values[0]), float(values[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = stats.bootstrap(
            (values,), np.mean, confidence_level=0.95, n_resamples=BOOTSTRAP_RESAMPLES,
            method="percentile", rng=np.random.default_rng(seed),
        )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def aggregate(per_task: pd.DataFrame) -> pd.DataFrame:
    """One row per metric: n (tasks where it is defined), mean, ci95_low, ci95_high."""
    rows = []
    for name, spec in METRICS.items():
        if name not in per_task:
            continue
        values = pd.to_numeric(per_task[name], errors="coerce").dropna().to_numpy(dtype=float)
        low, high = bootstrap_ci(values)
        rows.append(
            {"metric": name, "kind": spec.kind.value, "n": len(values),
             "mean": float(values.mean()) if len(values) else None, "ci95_low": low, "ci95_high": high}
        )
    return pd.DataFrame(rows).set_index("metric")
