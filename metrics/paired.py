"""The paired comparison of two arms' per-task values, metric by metric: what `experiments.analysis.compare`
reports and what a sweep's parent table says of each job against the best."""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics.definitions import METRICS
from metrics.statistics import cluster_bootstrap_ci, paired_test

UNTESTED = "untested (no values)"


def compare_frames(base: pd.DataFrame, other: pd.DataFrame, metrics: list[str], seed: int = 0) -> pd.DataFrame:
    """One row per metric: means, paired difference (other - base) with its cluster bootstrap CI,
    the cluster permutation test and its p, the clusters both rest on. Holm comes after, across
    every comparison of a report (`correct_across`)."""
    shared = base.index.intersection(other.index)
    rows = []
    for metric in metrics:
        if metric not in base or metric not in other:
            rows.append({"metric": metric, "kind": METRICS[metric].kind.value, "n": 0, "test": UNTESTED})
            continue
        pair = pd.DataFrame({"a": pd.to_numeric(base.loc[shared, metric], errors="coerce"),
                             "b": pd.to_numeric(other.loc[shared, metric], errors="coerce"),
                             "repo": base.loc[shared, "repository"]}).dropna()
        a, b = pair.a.to_numpy(float), pair.b.to_numpy(float)
        if len(pair) == 0:
            rows.append({"metric": metric, "kind": METRICS[metric].kind.value, "n": 0, "test": UNTESTED})
            continue
        clusters = pair.repo.astype(str).to_numpy()
        low, high = cluster_bootstrap_ci(b - a, clusters, seed=seed)
        test = paired_test(a, b, clusters)
        rows.append({"metric": metric, "kind": METRICS[metric].kind.value, "n": len(pair), "clusters": test.clusters,
                     "mean_base": a.mean(), "mean_other": b.mean(), "diff": (b - a).mean(), "ci95_low": low,
                     "ci95_high": high, "test": test.test, "p": test.p_value})
    table = pd.DataFrame(rows).set_index("metric")
    for column in ("p", "p_holm"):
        table[column] = pd.to_numeric(table.get(column, np.nan), errors="coerce")  # an untested metric: NaN, never None
    table["holm_family"] = ""
    return table
