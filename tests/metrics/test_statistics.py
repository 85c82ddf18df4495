from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metrics.pareto import pareto_front
from metrics.statistics import cluster_bootstrap_ci, holm, mcnemar_exact, paired_test, wilcoxon_signed_rank


def test_a_paired_effect_the_unpaired_test_misses_is_detected():
    # Tasks differ a lot in difficulty; arm B is better by a small, consistent margin on every task.
    difficulty = np.linspace(0.05, 0.95, 20)
    a = difficulty
    b = np.clip(difficulty + 0.03 + 0.005 * np.sin(np.arange(20)), 0, 1)
    unpaired = stats.mannwhitneyu(a, b).pvalue
    paired = wilcoxon_signed_rank(a, b)
    assert unpaired > 0.5 and paired.p_value < 0.001
    assert paired.p_value == pytest.approx(stats.wilcoxon(a, b, zero_method="pratt").pvalue)


def test_mcnemar_exact_on_a_known_table():
    # 10 tasks only A hits, 2 only B hits, the rest agree: binomial(2; 12, 0.5) two-sided = 0.0386
    a = np.array([1] * 10 + [0] * 2 + [1] * 5 + [0] * 3, dtype=float)
    b = np.array([0] * 10 + [1] * 2 + [1] * 5 + [0] * 3, dtype=float)
    result = mcnemar_exact(a, b)
    assert result.p_value == pytest.approx(0.03857, abs=1e-4)
    assert paired_test(a, b).test == "mcnemar"
    assert paired_test(a + 0.5, b).test == "wilcoxon"


def test_identical_arms():
    x = np.array([0.2, 0.4, 0.6])
    assert wilcoxon_signed_rank(x, x).p_value == 1.0
    assert mcnemar_exact(np.ones(3), np.ones(3)).p_value == 1.0


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
