from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metrics.pareto import pareto_front
from metrics.statistics import (
    BOOTSTRAP_RESAMPLES, PERMUTATION_TEST, cluster_bootstrap_ci, cluster_permutation_test, holm, paired_test,
)


def test_the_permutation_test_flips_repositories_not_tasks():
    # 5 repositories, 4 tasks each, every repository better by a little: all 32 sign patterns of the
    # repositories' sums, 2 as extreme as the observed one -> p = 2/32, however many tasks there are
    diffs = np.array([0.1, 0.2, 0.0, 0.1] * 5)
    clusters = np.repeat([f"r{i}" for i in range(5)], 4)
    test = cluster_permutation_test(diffs, clusters)
    assert test.p_value == pytest.approx(2 / 32) and test.clusters == 5 and test.n == 20
    assert test.test == PERMUTATION_TEST and test.statistic == pytest.approx(diffs.mean())
    tasks_alone = cluster_permutation_test(diffs, np.zeros(20))  # one repository: the tasks are the units
    assert tasks_alone.clusters == 20 and tasks_alone.p_value < 0.001


def test_the_observed_pattern_counts_and_the_test_is_two_sided():
    three = np.repeat(["a", "b", "c"], 2)
    assert cluster_permutation_test(np.ones(6), three).p_value == pytest.approx(2 / 8)  # + + + and - - -
    assert cluster_permutation_test(-np.ones(6), three).p_value == pytest.approx(2 / 8)
    assert cluster_permutation_test(np.zeros(6), three).p_value == 1.0


def test_many_repositories_are_sampled_with_the_observed_pattern_counted():
    rng = np.random.default_rng(1)
    clusters = np.repeat(np.arange(30), 3)
    null = cluster_permutation_test(rng.normal(0, 1, 90), clusters)
    assert 0.05 < null.p_value <= 1.0 and null.clusters == 30
    shifted = cluster_permutation_test(rng.normal(0.8, 1, 90), clusters)
    assert shifted.p_value < 0.001


def test_a_paired_effect_an_unpaired_test_misses_is_detected():
    # 20 repositories; tasks differ a lot from each other, the other arm is better on every task by 0.05
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 1, 60)
    b = a + 0.05
    clusters = np.repeat(np.arange(20), 3)
    assert paired_test(a, b, clusters).p_value < 0.001
    assert stats.mannwhitneyu(a, b).pvalue > 0.3  # what an unpaired test says of the same numbers


def test_the_ci_is_a_95_percent_interval():
    # 400 tasks, one repository: the percentile interval of the mean is about ±1.96 standard errors
    values = np.random.default_rng(3).normal(0, 1, 400)
    low, high = cluster_bootstrap_ci(values, np.zeros(400))
    half_width = (high - low) / 2 / (values.std(ddof=1) / np.sqrt(400))
    assert 1.85 < half_width < 2.07  # 90 % would be 1.645, 99 % 2.576
    assert BOOTSTRAP_RESAMPLES >= 5000


def test_holm_matches_the_textbook_example():
    # p = (0.01, 0.04, 0.03, 0.005): sorted 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> monotone 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([None, 0.5]) == [None, 0.5]


def test_cluster_bootstrap_is_wider_than_a_task_bootstrap_when_clusters_agree_internally():
    diffs = np.array([0.5] * 5 + [-0.4] * 5 + [0.1] * 5)
    clusters = np.repeat(["r1", "r2", "r3"], 5)
    low, high = cluster_bootstrap_ci(diffs, clusters)
    task_low, task_high = cluster_bootstrap_ci(diffs, np.arange(15))
    assert low < diffs.mean() < high
    assert (high - low) > (task_high - task_low)
    assert cluster_bootstrap_ci(diffs, clusters) == (low, high)


def test_pareto_front_on_a_hand_made_set():
    frame = pd.DataFrame(
        {"recall": [0.5, 0.6, 0.6, 0.4, 0.7, 0.7], "tokens": [100, 100, 200, 50, 300, 400]},
        index=["a", "b", "c", "d", "e", "f"],
    )
    front = pareto_front(frame, "recall", "tokens")
    assert list(front[front].index) == ["b", "d", "e"]


def test_the_smallest_p_is_what_the_permutation_test_gives_at_its_most_extreme():
    """The parent table says how small a p its repositories allow (3 demo repositories: 0.25)."""
    from metrics.statistics import cluster_permutation_test, smallest_p

    assert smallest_p(3) == 0.25 and smallest_p(1) == 1.0
    for k in (2, 3, 5):
        extreme = cluster_permutation_test(np.ones(2 * k), np.repeat(np.arange(k), 2))
        assert extreme.p_value == pytest.approx(smallest_p(k))
    assert smallest_p(40) == pytest.approx(1 / 20001)
