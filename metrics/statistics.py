"""Statistics over tasks: confidence intervals of a mean and paired tests between arms.

The unit is the task, and tasks of one repository are not independent of each other, so every
bootstrap here resamples repositories (clusters) whole and every test flips repositories whole;
with a single repository the tasks are the units. Repeats of one task are reduced to one value
per task before any of this (`metrics.aggregate.per_task_values`). Tasks are paired across arms,
so every test is paired.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

BOOTSTRAP_RESAMPLES = 5000  # the one resample count of the project


PERMUTATION_DRAWS = 20000  # random sign patterns when exact enumeration is too large
EXACT_CLUSTERS = 16  # up to 2**16 sign patterns are enumerated: an exact p-value
PERMUTATION_TEST = "cluster sign-flip permutation"
# A percentile bootstrap over few repositories is coarse: with 3, one resample in 27 is a single
# repository three times, so a bound lands on one repository's mean. Cluster-robust intervals are
# known to undercover below about ten clusters (Cameron, Gelbach & Miller 2008): beside every CI
# loclab reports how many clusters it rests on, and warns below this count.
MIN_CLUSTERS_FOR_CI = 10


@dataclass(frozen=True)
class PairedTest:
    test: str
    statistic: float | None  # the mean paired difference (other - base)
    p_value: float | None
    n: int  # tasks
    clusters: int  # independent units the test flipped (repositories; tasks with one repository)


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


def cluster_permutation_test(diffs: np.ndarray, clusters: np.ndarray, seed: int = 0,
                             draws: int = PERMUTATION_DRAWS) -> PairedTest:
    """Two-sided sign-flip permutation test of the mean paired difference that flips whole
    repositories: under H0 (no difference) each repository's summed difference is as likely
    positive as negative, and tasks of one repository move together — the clustering the CIs
    resample. Exact (every sign pattern) up to EXACT_CLUSTERS repositories, else `draws` random
    patterns with a fixed seed, counting the observed one (p = (1 + hits) / (1 + draws)). With a
    single repository the tasks are the units. Works the same for 0/1 hits and for continuous values."""
    if len(diffs) == 0:
        return PairedTest(PERMUTATION_TEST, None, None, 0, 0)
    if ci_unit(clusters) == CiUnit.TASK:
        clusters = np.arange(len(diffs))
    labels = np.unique(clusters)
    sums = np.array([diffs[clusters == label].sum() for label in labels])
    observed = abs(sums.sum())
    if np.allclose(sums, 0):
        return PairedTest(PERMUTATION_TEST, 0.0, 1.0, len(diffs), len(labels))
    tolerance = 1e-9 * max(1.0, float(np.abs(sums).sum()))  # equal statistics must count as equal
    if len(labels) <= EXACT_CLUSTERS:
        patterns = ((np.arange(2 ** len(labels))[:, None] >> np.arange(len(labels))) & 1) * 2 - 1
        p = float(np.mean(np.abs(patterns @ sums) >= observed - tolerance))
    else:
        patterns = np.random.default_rng(seed).choice((-1.0, 1.0), size=(draws, len(labels)))
        p = float((1 + np.sum(np.abs(patterns @ sums) >= observed - tolerance)) / (1 + draws))
    return PairedTest(PERMUTATION_TEST, float(sums.sum() / len(diffs)), p, len(diffs), len(labels))


def smallest_p(units: int) -> float:
    """The smallest two-sided p the cluster permutation test can give over this many independent units
    (repositories): 2 of 2**k sign patterns when enumerated (3 repositories: 0.25), else 1 / (1 + draws)."""
    if units <= EXACT_CLUSTERS:
        return min(1.0, 2.0 / 2 ** units)
    return 1.0 / (1 + PERMUTATION_DRAWS)


def paired_test(a: np.ndarray, b: np.ndarray, clusters: np.ndarray) -> PairedTest:
    """The paired test of every comparison: the cluster permutation test of b - a."""
    return cluster_permutation_test(b - a, clusters)


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
