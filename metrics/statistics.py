"""Statistics over tasks: confidence intervals of a mean and paired tests between arms.

The independent unit is the task, and tasks of one repository are not independent of each
other, so every bootstrap here resamples repositories (clusters) whole; with a single repository
it resamples tasks. Repeats of one task are reduced to one value per task before any of this
(`metrics.aggregate.per_task_values`). Tasks are paired across arms, so every test is paired.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

BOOTSTRAP_RESAMPLES = 5000  # the one resample count of the project


@dataclass(frozen=True)
class PairedTest:
    test: str
    statistic: float | None
    p_value: float | None
    n: int


def is_binary(values: np.ndarray) -> bool:
    finite = values[~np.isnan(values)]
    return finite.size > 0 and bool(np.isin(finite, (0.0, 1.0)).all())


class CiUnit(StrEnum):
    REPOSITORY = "repository"
    TASK = "task"


def ci_unit(clusters: np.ndarray) -> CiUnit:
    """What the bootstrap resamples: repositories when there are several, else tasks."""
    return CiUnit.REPOSITORY if len(np.unique(clusters)) >= 2 else CiUnit.TASK


def cluster_bootstrap_ci(values: np.ndarray, clusters: np.ndarray, seed: int = 0,
                         resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float | None, float | None]:
    """Percentile 95 % CI of the mean of per-task values (or of paired differences), resampling
    whole repositories; tasks when there is only one repository. Exact for constant data."""
    if len(values) < 2:
        return None, None
    if np.all(values == values[0]):
        return float(values[0]), float(values[0])
    if ci_unit(clusters) == CiUnit.TASK:
        clusters = np.arange(len(values))
    labels = np.unique(clusters)
    groups = [values[clusters == label] for label in labels]
    sums = np.array([g.sum() for g in groups])
    counts = np.array([len(g) for g in groups])
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(groups), size=(resamples, len(groups)))
    means = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def wilcoxon_signed_rank(a: np.ndarray, b: np.ndarray) -> PairedTest:
    diffs = a - b
    if len(diffs) == 0:
        return PairedTest("wilcoxon", None, None, 0)
    if np.all(diffs == 0):
        return PairedTest("wilcoxon", 0.0, 1.0, len(diffs))
    from scipy import stats  # here, not at the top: every job imports this module and only comparisons test

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = stats.wilcoxon(a, b, zero_method="pratt")
    return PairedTest("wilcoxon", float(result.statistic), float(result.pvalue), len(diffs))


def mcnemar_exact(a: np.ndarray, b: np.ndarray) -> PairedTest:
    """Exact McNemar: a two-sided binomial test on the discordant pairs."""
    only_a = int(np.sum((a == 1) & (b == 0)))
    only_b = int(np.sum((a == 0) & (b == 1)))
    if only_a + only_b == 0:
        return PairedTest("mcnemar", 0.0, 1.0, len(a))
    from scipy import stats

    result = stats.binomtest(only_a, only_a + only_b, 0.5)
    return PairedTest("mcnemar", float(min(only_a, only_b)), float(result.pvalue), len(a))


def paired_test(a: np.ndarray, b: np.ndarray) -> PairedTest:
    return mcnemar_exact(a, b) if is_binary(a) and is_binary(b) else wilcoxon_signed_rank(a, b)


def holm(p_values: list[float | None]) -> list[float | None]:
    """Holm–Bonferroni adjusted p-values (step-down, monotone), None passed through."""
    indexed = [(p, i) for i, p in enumerate(p_values) if p is not None]
    m = len(indexed)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(indexed)):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted
