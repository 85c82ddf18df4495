"""locator=range_runtime: every policy rule of seed 000's range-only runtime, driven exactly."""

from __future__ import annotations

from locator.repository import RepositoryView
from locator.system_one.wire import Request
from tests.conftest import write_tree
from tests.locator.reading.runtime_helpers import lines, reading, reads, reads_by_request, run, runtime

import pytest


@pytest.fixture
def repo(tmp_path):
    return RepositoryView(write_tree(tmp_path, {"pkg/a.py": lines(100), "pkg/b.py": lines(100, "y")}))


def _stop_questions(backend) -> list[str]:
    return [q.content for r in backend.requests for q in r.questions.values() if q.criteria == "stop_task"]


def test_stop_task_above_the_threshold_and_highest_stops(repo):
    rules = [("--- pkg/a.py lines 1-20", 0.95), ("seed_head: pkg/a.py", 0.9), ("lines", 0.1)]
    result, _, trace = run(repo, rules, runtime("range_runtime"))
    assert reading(result).details["termination"] == "model_stop"
    assert reads(trace) == [("pkg/a.py", 1, 20)] and reading(result).details["epochs"] == 2


def test_stop_task_above_the_threshold_but_below_a_read_does_not_stop(repo):
    rules = [("nothing read yet", 0.8), ("--- pkg", 0.8), ("lines", 0.9)]
    result, _, _ = run(repo, rules, runtime("range_runtime"))
    details = reading(result).details
    assert details["termination"] == "action_space_exhausted" and details["max_stop_task_noul"] == 0.8
    assert reading(result).source_lines_read == 200


def test_stop_task_highest_but_below_the_threshold_does_not_stop_and_the_best_read_runs(repo):
    rules = [("nothing read yet", 0.6), ("--- pkg", 0.6), ("seed_tail: pkg/b.py", 0.5), ("lines", 0.3)]
    result, _, trace = run(repo, rules, runtime("range_runtime", safety_epochs=3))
    assert reading(result).details["termination"] == "safety_budget"
    groups = reads_by_request(trace)
    assert all(len(g) == 1 for g in groups[:3])  # one read per epoch: the best, though below 0.65
    assert groups[0] == [("pkg/b.py", 81, 100)]


def test_every_read_at_or_above_the_threshold_runs_in_one_epoch(repo):
    rules = [("seed_", 0.7), ("lines", 0.1)]
    result, _, trace = run(repo, rules, runtime("range_runtime", safety_epochs=1))
    assert sorted(reads_by_request(trace)[0]) == [(p, a, b) for p in ("pkg/a.py", "pkg/b.py")
                                                  for a, b in ((1, 20), (41, 60), (81, 100))]
    assert reading(result).details["termination"] == "safety_budget"


def test_overlapping_selected_reads_are_deconflicted(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": lines(30)}))
    # head 1-20, middle 6-25 and tail 11-30 all clear the threshold and overlap: only the best runs
    rules = [("seed_head", 0.95), ("seed_middle", 0.9), ("seed_tail", 0.8), ("lines", 0.1)]
    _, _, trace = run(repo, rules, runtime("range_runtime", safety_epochs=1))
    assert reads_by_request(trace)[0] == [("pkg/a.py", 1, 20)]


def test_the_safety_budget_ends_the_run(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": lines(1000)}))
    result, backend, _ = run(repo, [("lines", 0.3)], runtime("range_runtime", safety_epochs=2))
    details = reading(result).details
    assert details["termination"] == "safety_budget" and details["epochs"] == 2 and details["reads"] == 2
    assert result.files == [] or all(f.evidence for f in result.files)


def test_system_one_sees_a_bounded_recency_projection(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": lines(100)}))
    rules = [("seed_head", 0.9), ("expand_after", 0.9), ("lines", 0.1)]
    _, backend, _ = run(repo, rules, runtime("range_runtime", safety_epochs=3, view={"max_chars": 150}))
    third = _stop_questions(backend)[2]  # after lines 1-20 and 21-40 were read
    assert "x21 = 21" in third and "x1 = 1\n" not in third  # the newest read, the older one left out
    assert "(1 older observations not shown)" in third
    body = third.split("\n", 2)[2]  # past the omitted-count and the observation header
    assert len(body) <= 150


def test_evidence_is_scored_after_navigation_and_cannot_steer_it(repo):
    rules = [("seed_", 0.7), ("x45 = 45", 0.99), ("lines", 0.1)]
    runs = [run(repo, rules, runtime("range_runtime", evidence={"observation_threshold": t})) for t in (0.05, 0.95)]
    assert reads(runs[0][2]) == reads(runs[1][2])
    for _, backend, _ in runs:
        kinds = [r.state["stage"] for r in backend.requests if isinstance(r, Request) and r.state.get("stage") != "discovery"]
        assert "evidence" in kinds and kinds.index("evidence") == len(kinds) - kinds[::-1].count("evidence")
    strict = runs[1][0]
    assert [(f.path, [(e.start_line, e.end_line) for e in f.evidence]) for f in strict.files] == [("pkg/a.py", [(41, 60)])]
