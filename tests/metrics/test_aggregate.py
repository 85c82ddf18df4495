from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metrics import statistics
from metrics.aggregate import aggregate, per_task_values
from metrics.statistics import cluster_bootstrap_ci


def _rows(values, repos, repeats=1):
    """A per-task table: each task's value repeated `repeats` times (identical repeats)."""
    return pd.DataFrame([{"task_id": f"t{i}", "repository": repo, "split": None, "repeat": r, "status": "ok",
                          "file_recall": v} for i, (v, repo) in enumerate(zip(values, repos)) for r in range(repeats)])


def test_ci_brackets_the_mean_and_is_reproducible():
    values = np.array([0, 1, 1, 0, 1, 1, 1, 0, 1, 1], dtype=float)
    low, high = cluster_bootstrap_ci(values, np.arange(10))
    assert low < values.mean() < high
    assert 0.3 < low and high <= 1.0
    assert (low, high) == cluster_bootstrap_ci(values, np.arange(10))


def test_degenerate_samples():
    assert cluster_bootstrap_ci(np.array([0.5]), np.array(["r"])) == (None, None)
    assert cluster_bootstrap_ci(np.array([0.7, 0.7, 0.7]), np.array(["a", "b", "c"])) == (0.7, 0.7)


def test_repeats_are_reduced_per_task_before_the_interval():
    values = [0, 1, 1, 0, 1, 0, 1, 1, 0, 1]
    repos = [f"r{i}" for i in range(10)]
    once, thrice = aggregate(_rows(values, repos)), aggregate(_rows(values, repos, repeats=3))
    # three identical repeats are one observation per task, not three: same n, same interval
    assert thrice.loc["file_recall", "n"] == once.loc["file_recall", "n"] == 10
    assert (thrice.loc["file_recall", "ci95_low"], thrice.loc["file_recall", "ci95_high"]) == \
        (once.loc["file_recall", "ci95_low"], once.loc["file_recall", "ci95_high"])


def test_repeat_values_are_averaged_per_task():
    frame = pd.DataFrame([{"task_id": "t", "repository": "r", "split": "dev", "repeat": r, "status": "ok",
                           "file_recall": v} for r, v in enumerate([0.0, 1.0, 1.0])])
    reduced = per_task_values(frame)
    assert reduced.loc["t", "file_recall"] == pytest.approx(2 / 3) and reduced.loc["t", "repeats"] == 3


def test_the_interval_resamples_repositories():
    # tasks agree within a repository: clustering must widen the interval over a task bootstrap
    values = [0.9] * 5 + [0.1] * 5 + [0.5] * 5
    clustered = aggregate(_rows(values, ["a"] * 5 + ["b"] * 5 + ["c"] * 5)).loc["file_recall"]
    per_task = aggregate(_rows(values, [f"r{i}" for i in range(15)])).loc["file_recall"]
    assert (clustered.clusters, clustered.ci_unit, per_task.ci_unit) == (3, "repository", "repository")
    assert clustered.ci95_high - clustered.ci95_low > per_task.ci95_high - per_task.ci95_low


def test_a_single_repository_falls_back_to_resampling_tasks():
    row = aggregate(_rows([0, 1, 1, 0, 1], ["only"] * 5)).loc["file_recall"]
    assert row.ci_unit == "task" and row.ci95_low < row["mean"] < row.ci95_high


def test_aggregate_skips_undefined_values_and_failed_tasks():
    frame = pd.DataFrame({"task_id": ["a", "b", "c", "d"], "repository": ["r1", "r2", "r3", "r4"], "split": None,
                          "repeat": 0, "status": ["ok", "ok", "ok", "failed"],
                          "file_recall": [1.0, 0.0, 0.5, 1.0], "innermost_entity_acc_all@5": [1.0, None, 0.0, 1.0]})
    table = aggregate(frame)
    assert table.loc["file_recall", "mean"] == pytest.approx(0.5)
    assert table.loc["innermost_entity_acc_all@5", "n"] == 2
    assert table.loc["innermost_entity_acc_all@5", "mean"] == pytest.approx(0.5)
    assert table.loc["file_recall", "kind"] == "quality"


def test_one_resample_count_for_the_project():
    import metrics.aggregate as agg

    assert not hasattr(agg, "BOOTSTRAP_RESAMPLES") or agg.BOOTSTRAP_RESAMPLES == statistics.BOOTSTRAP_RESAMPLES
    assert str(statistics.BOOTSTRAP_RESAMPLES) in agg.CI_METHOD


def test_each_language_is_aggregated_over_its_own_tasks_and_a_mixed_task_counts_in_each():
    from experiments.job.report import by_language

    frame = _rows([1.0, 0.0, 0.5, 0.25], ["a", "b", "c", "d"]).assign(
        languages=["rust", "typescript", "rust,typescript", None])
    frame.loc[len(frame)] = {"task_id": "failed", "repository": "e", "split": None, "repeat": 0, "status": "failed",
                             "file_recall": None, "languages": "go"}
    slices = by_language(frame)
    assert sorted(slices) == ["rust", "typescript"]  # a failed task's language has no slice; no languages: none
    assert slices["rust"].loc["file_recall", "n"] == 2 and slices["rust"].loc["file_recall", "mean"] == 0.75
    assert slices["typescript"].loc["file_recall", "n"] == 2 and slices["typescript"].loc["file_recall", "mean"] == 0.25


def test_the_headline_figure_holds_its_whole_title():
    """A job's title outgrew the figure and was cut at both ends in the PNG itself (issue 49, point 7)."""
    import pandas as pd
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from experiments.job.report import headline_figure

    title = ("two_phase on swebench_lite_pypi (3f2a9c1d04be) — System One: the local model Qwen2.5-Coder-0.5B-Instruct "
             "Q4_K_M (bfloat16, cpu) decided every answer of this job, sampled with seed 0 over 3 repeats")
    aggregate = pd.DataFrame({"mean": [0.5, 1200.0], "ci95_low": [0.3, 900.0], "ci95_high": [0.7, 1500.0]},
                             index=["file_acc_all@5", "input_tokens"])
    figure = headline_figure(title, aggregate)
    FigureCanvasAgg(figure)
    renderer = figure.canvas.get_renderer()
    box, page = figure._suptitle.get_window_extent(renderer), figure.bbox
    assert page.x0 <= box.x0 and box.x1 <= page.x1 and box.y1 <= page.y1
    assert figure._suptitle.get_text().replace("\n", " ") == title  # all of it, wrapped
