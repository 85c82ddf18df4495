"""locator=file_runtime: seed 000's per-file runtimes, the StopFile control choice and both
reconciliation branches, driven exactly; and their concurrency."""

from __future__ import annotations

import random
import threading
import time

import pytest

from locator.repository import RepositoryView
from tests.conftest import write_tree
from tests.locator.reading.runtime_helpers import DISCOVER, lines, reading, reads, reads_by_request, run, runtime, terminations
from tests.locator.scripted import ScriptedBackend

STOP_AFTER_A_READ = ("read so far:\n---", 0.9)  # the stop option shows the view: stop once something was read
CONTINUE = ("continue_file", 0.5)
EVERY_READ = [("seed_", 0.9), ("expand_", 0.9), ("jump", 0.9)]  # needles of read descriptions only


@pytest.fixture
def repo(tmp_path):
    return RepositoryView(write_tree(tmp_path, {"pkg/a.py": lines(100)}))


def _file_runtime(**reader):
    return runtime("file_runtime", **reader)


def _control_requests(backend) -> list:
    return [r for r in backend.requests if r.state.get("stage") == "file_runtime" and "reconciliation" not in r.state]


def _reconciliations(backend) -> list:
    return [r for r in backend.requests if "reconciliation" in r.state]


def test_stop_file_with_no_read_above_the_threshold_is_a_model_stop(repo):
    rules = [STOP_AFTER_A_READ, CONTINUE, ("seed_head", 0.9), ("lines", 0.1)]
    result, backend, trace = run(repo, rules, _file_runtime())
    assert terminations(result) == {"pkg/a.py": "model_stop"}
    assert reads(trace) == [("pkg/a.py", 1, 20)] and not _reconciliations(backend)
    assert reading(result).details["model_stop_rate"] == 1.0 and reading(result).details["selection_stop"] == 1


def test_continue_runs_every_non_overlapping_read_above_the_threshold(repo):
    rules = [CONTINUE, ("seed_", 0.9), ("lines", 0.1)]
    _, _, trace = run(repo, rules, _file_runtime(safety_epochs=1))
    assert sorted(reads_by_request(trace, "q")[0]) == [("pkg/a.py", 1, 20), ("pkg/a.py", 41, 60), ("pkg/a.py", 81, 100)]


def test_no_read_left_ends_the_file_without_asking(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": lines(30)}))
    result, backend, trace = run(repo, [CONTINUE, *EVERY_READ], _file_runtime())
    # epoch 1: head 1-20 (middle and tail overlap it); epoch 2: 21-30; then nothing is left to offer
    assert reads(trace) == [("pkg/a.py", 1, 20), ("pkg/a.py", 21, 30)]
    assert terminations(result) == {"pkg/a.py": "action_space_exhausted"} and len(_control_requests(backend)) == 2


def test_the_safety_budget_ends_a_file(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": lines(1000)}))
    result, backend, _ = run(repo, [CONTINUE, *EVERY_READ], _file_runtime(safety_epochs=2))
    assert terminations(result) == {"pkg/a.py": "budget_exhausted"} and len(_control_requests(backend)) == 2
    assert reading(result).files[0].rounds == 2


def test_continue_with_every_read_below_the_threshold_runs_nothing_without_reconciliation(repo):
    rules = [CONTINUE, ("finalize_file", 0.9), ("lines", 0.3)]
    result, backend, trace = run(repo, rules, _file_runtime())
    assert reads(trace) == [] and terminations(result) == {"pkg/a.py": "model_stop"}
    [reconciliation] = _reconciliations(backend)
    assert reconciliation.state["reconciliation"] == "continue_without_read_above"
    assert reading(result).details["selection_reconciled_stop"] == 1


def test_a_reconciliation_can_authorize_the_best_read_below_the_threshold(repo):
    rules = [CONTINUE, ("read_best", 0.9), ("seed_tail", 0.4), ("lines", 0.3)]
    result, backend, trace = run(repo, rules, _file_runtime(safety_epochs=1))
    assert reads(trace) == [("pkg/a.py", 81, 100)]  # only the displayed best read, though below 0.65
    [reconciliation] = _reconciliations(backend)
    assert "seed_tail" in reconciliation.questions["reconcile0"].options()["read_best"]
    assert reading(result).details["reconciliations_continue_without_read_above"] == 1


@pytest.mark.parametrize("decision, expected", [("finalize_file", []), ("read_best", [("pkg/a.py", 1, 20)])])
def test_stop_file_while_a_read_clears_the_threshold_is_reconciled(repo, decision, expected):
    rules = [("stop_file", 0.9), (decision, 0.95), ("seed_head", 0.9), ("seed_middle", 0.8), ("lines", 0.1)]
    result, backend, trace = run(repo, rules, _file_runtime(safety_epochs=1))
    assert reads(trace) == expected  # never the other read above the threshold
    [reconciliation] = _reconciliations(backend)
    assert reconciliation.state["reconciliation"] == "stop_with_read_above"
    assert terminations(result)["pkg/a.py"] == ("model_stop" if decision == "finalize_file" else "budget_exhausted")


def test_the_view_carries_bounded_yield_telemetry(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": lines(1000)}))
    rules = [CONTINUE, ("read_best", 0.9), ("lines", 0.3)]
    _, backend, _ = run(repo, rules, _file_runtime(safety_epochs=4, telemetry_epochs=2))
    states = [r.state["yield"] for r in _control_requests(backend)]
    assert [s["low_utility_streak"] for s in states] == [0, 1, 2, 3]
    assert [len(s["recent"]) for s in states] == [0, 1, 2, 2]
    assert states[-1]["recent"][-1] == {"epoch": 3, "control": "continue_file", "max_read_utility": 0.3,
                                        "selection": "reconciled_read"}


def test_a_file_runtime_sees_only_its_own_file(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": lines(100), "pkg/b.py": lines(100, "y")}))
    _, backend, _ = run(repo, [STOP_AFTER_A_READ, CONTINUE, ("seed_head", 0.9), ("lines", 0.1)], _file_runtime())
    for request in backend.requests:
        if request.state.get("stage") == "file_runtime":
            mine = request.state["file"]["path"]
            other = "pkg/b.py" if mine == "pkg/a.py" else "pkg/a.py"
            assert other not in request.model_dump_json()


class _SlowScripted(ScriptedBackend):
    """The scripted double, answering after a random delay and counting the file runtimes' requests
    in flight (evidence scoring is concurrent anyway; the runtimes' own loops must overlap too)."""

    def __init__(self, rules, seed: int):
        super().__init__(rules)
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.in_flight = self.max_in_flight = 0

    def answer(self, request):
        counted = request.state.get("stage") == "file_runtime"
        with self.lock:
            self.in_flight += counted
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            delay = self.random.uniform(0, 0.02)
        time.sleep(delay)
        try:
            return super().answer(request)
        finally:
            with self.lock:
                self.in_flight -= counted


def test_concurrent_runtimes_give_the_same_result_in_any_completion_order(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {f"pkg/m{i}.py": lines(60 + 40 * i, f"v{i}_") for i in range(6)}))
    rules = DISCOVER + [STOP_AFTER_A_READ, ("v3_", 0.95), CONTINUE, ("seed_head", 0.9), ("x", 0.2), ("lines", 0.3)]
    results = []
    for concurrency, seed in ((1, 0), (4, 1), (4, 2)):
        backend = _SlowScripted(rules, seed)
        result, _, _ = run(repo, [], _file_runtime(), backend=backend, max_concurrency=concurrency)
        results.append(result)
        assert backend.max_in_flight <= concurrency and (concurrency == 1 or backend.max_in_flight > 1)
    for other in results[1:]:
        assert other.files == results[0].files
        assert reading(other).files == reading(results[0]).files
        assert reading(other).details == reading(results[0]).details
