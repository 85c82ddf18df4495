"""Per-file and per-job reading telemetry, from real file-runtime results."""

from __future__ import annotations

import pytest

from experiments.job.telemetry import file_telemetry, job_telemetry
from locator.repository import RepositoryView
from tests.conftest import write_tree
from tests.locator.reading.runtime_helpers import lines, run, runtime


@pytest.fixture
def results(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": lines(100), "pkg/b.py": lines(30, "y")}))
    # a: StopFile once something was read (model_stop); b: read to the end (action_space_exhausted)
    rules = [("read so far:\n--- pkg/a.py", 0.9), ("continue_file", 0.5), ("seed_head", 0.9),
             ("expand_after: pkg/b.py", 0.9), ("lines", 0.1)]
    result, _, _ = run(repo, rules, runtime("file_runtime"))
    return [("t1", 0, result), ("t1", 1, result)]


def test_file_telemetry_has_a_row_per_file_and_repeat(results):
    frame = file_telemetry(results)
    assert len(frame) == 4 and set(frame.columns) >= {"path", "reads", "rounds", "coverage_pct", "termination"}
    assert dict(zip(frame.path, frame.termination)) == {"pkg/a.py": "model_stop", "pkg/b.py": "action_space_exhausted"}


def test_job_telemetry_counts_terminations_and_the_model_stop_rate(results):
    metrics = job_telemetry(results)
    assert metrics["reading.terminated_model_stop"] == 2 and metrics["reading.terminated_action_space_exhausted"] == 2
    assert metrics["reading.model_stop_rate"] == 0.5
    assert "reading.reconciliations_stop_with_read_above" in metrics


def test_zoom_and_filter_counts_are_job_metrics(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": lines(200)}))
    zoom, _, _ = run(repo, [("probe", 0.9)], runtime("semantic_zoom", regions=4, probe_lines=16))
    metrics = job_telemetry([("t", 0, zoom)])
    assert metrics["reading.probes"] == zoom.cost.stages[1].details["probes"] > 0
    assert metrics["reading.converged"] + metrics["reading.round_budget_exits"] == 1
    filtered, _, _ = run(repo, [("continue_file", 0.5), ("seed_", 0.9), ("x", 0.9)],
                         runtime("evidence_filter", safety_epochs=1))
    assert "evidence_filter.evidence_candidates" in job_telemetry([("t", 0, filtered)])
