from __future__ import annotations

import pytest

from locator.repository import RepositoryView
from locator.runtime import localize
from locator.system_one.client import SystemOne
from locator.task import SubjectIdentity, Task
from locator.trace import EventKind, Trace
from locator.two_phase import TwoPhaseLocator
from tests.conftest import write_tree
from tests.locator.scripted import ScriptedBackend

TASK = Task(id="t", text="the task", subject=SubjectIdentity(repository="r", revision="v"))


def _body(marker_line: int, n: int = 100, marker: str = "HOTSPOT") -> str:
    return "".join(f"{marker} = 1\n" if i == marker_line else f"x{i} = {i}\n" for i in range(1, n + 1))


@pytest.fixture
def repo(tmp_path):
    return RepositoryView(
        write_tree(
            tmp_path,
            {
                "pkg/target.py": _body(15) + "def tail_func():\n    TAILSPOT = 2\n",
                "pkg/other.py": _body(3, marker="NOTHING"),
                "pkg/cold.py": _body(3),
            },
        )
    )


def _run(repo, rules, **params):
    backend = ScriptedBackend(rules)
    defaults = dict(window_lines=40, evidence_lines=10, file_threshold=0.5, observation_threshold=0.7, action_threshold=0.3)
    defaults.update(params)
    trace = Trace()
    result = localize(TwoPhaseLocator(**defaults), TASK, repo, SystemOne(backend, "scripted"), trace)
    return result, backend, trace


def test_phase_one_reads_no_file_body(repo):
    result, backend, _ = _run(repo, [("path: pkg/target.py", 0.9), ("path: pkg/other.py", 0.6)])
    discovery = next(s for s in result.cost.stages if s.name == "file_discovery")
    assert discovery.source_lines_read == 0
    assert discovery.details["files_exposed"] == 3 and discovery.details["files_handed_off"] == 2
    first = backend.requests[0]
    assert all(q.content is None for q in first.questions.values())
    assert len(first.questions) == 3


def test_files_below_threshold_are_never_read_and_the_cap_holds(repo):
    _, _, trace = _run(repo, [("path: pkg/target.py", 0.9), ("path: pkg/other.py", 0.8), ("path: pkg/cold.py", 0.1)],
                       max_files=1)
    read_paths = {e.data["path"] for e in trace.events if e.kind == EventKind.READ}
    assert read_paths == {"pkg/target.py"}


def test_evidence_is_the_chunk_above_the_observation_threshold(repo):
    result, _, _ = _run(repo, [("path: pkg/target.py", 0.9), ("HOTSPOT", 0.95)])
    assert result.ranked_paths() == ["pkg/target.py"]
    spans = [(e.start_line, e.end_line) for e in result.files[0].evidence]
    assert spans == [(11, 20)]
    assert result.files[0].evidence[0].confidence.score == 0.95


def test_outline_points_the_reader_at_a_later_window(repo):
    rules = [("path: pkg/target.py", 0.9), ("def tail_func", 0.8), ("TAILSPOT", 0.9), ("HOTSPOT", 0.95)]
    result, _, trace = _run(repo, rules, max_rounds=2)
    reads = [(e.data["start_line"], e.data["end_line"]) for e in trace.events if e.kind == EventKind.READ and e.data["lines"] > 1]
    assert reads == [(1, 40), (81, 102)]
    assert {(e.start_line, e.end_line) for e in result.files[0].evidence} == {(11, 20), (101, 102)}


def test_reading_stops_when_no_action_clears_the_threshold(repo):
    result, _, trace = _run(repo, [("path: pkg/target.py", 0.9), ("HOTSPOT", 0.95)], max_rounds=4)
    reading = next(s for s in result.cost.stages if s.name == "reading")
    assert reading.details["terminated_no_action_above_threshold"] == 1
    assert reading.details["windows_read"] == 1


def test_budget_bounds_the_rounds(repo):
    result, _, _ = _run(repo, [("path: pkg/target.py", 0.9), ("lines ", 0.5)], max_rounds=2, action_threshold=0.1)
    reading = next(s for s in result.cost.stages if s.name == "reading")
    assert reading.details["rounds"] == 2 and reading.details["windows_read"] == 2
    assert reading.details["terminated_budget_exhausted"] == 1


def test_discovery_questions_are_batched(repo):
    _, backend, _ = _run(repo, [], discovery_batch_size=2)
    assert [len(r.questions) for r in backend.requests] == [2, 1]


def test_cost_adds_up_over_stages(repo):
    result, backend, _ = _run(repo, [("path: pkg/target.py", 0.9), ("HOTSPOT", 0.95)])
    assert result.cost.model_calls == len(backend.requests) == sum(s.model_calls for s in result.cost.stages)
    assert result.cost.source_lines_read == sum(s.source_lines_read for s in result.cost.stages)
    assert result.cost.tokens.input == 10 * len(backend.requests)
    assert result.producer.model == "scripted"


@pytest.mark.parametrize("bad", [{"file_threshold": 1.5}, {"max_files": 0}])
def test_invalid_parameters_are_refused(bad):
    with pytest.raises(ValueError):
        TwoPhaseLocator(**bad)
