from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metrics.aggregate import aggregate, bootstrap_ci


def test_bootstrap_ci_brackets_the_mean_and_is_reproducible():
    values = np.array([0, 1, 1, 0, 1, 1, 1, 0, 1, 1], dtype=float)
    low, high = bootstrap_ci(values)
    assert low < values.mean() < high
    assert 0.3 < low and high <= 1.0
    assert (low, high) == bootstrap_ci(values)


def test_degenerate_samples():
    assert bootstrap_ci(np.array([0.5])) == (None, None)
    assert bootstrap_ci(np.array([0.7, 0.7, 0.7])) == (0.7, 0.7)


def test_aggregate_skips_undefined_values():
    frame = pd.DataFrame({"file_recall": [1.0, 0.0, 0.5], "entity_acc_all@5": [1.0, None, 0.0]})
    table = aggregate(frame)
    assert table.loc["file_recall", "mean"] == pytest.approx(0.5)
    assert table.loc["entity_acc_all@5", "n"] == 2
    assert table.loc["entity_acc_all@5", "mean"] == pytest.approx(0.5)
    assert table.loc["file_recall", "kind"] == "quality"
