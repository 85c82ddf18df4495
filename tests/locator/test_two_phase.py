"""Policy rules of the two-phase family on small hand-made repositories, driven by ScriptedBackend
(a test double of the System One model that answers chosen probabilities)."""

from __future__ import annotations

import pytest

from locator.discovery import FlatDiscovery, PrunedDiscovery
from locator.reader import ProgressiveReader
from locator.repository import RepositoryView
from locator.runtime import localize
from locator.system_one.client import SystemOne
from locator.task import SubjectIdentity, Task
from locator.trace import EventKind, Trace
from locator.two_phase import TwoPhaseLocator
from tests.conftest import write_tree
from tests.locator.scripted import ScriptedBackend

TASK = Task(id="t", text="the task", subject=SubjectIdentity(repository="r", revision="v"))


def _lines(n: int, marks: dict[int, str] | None = None, prefix: str = "x") -> str:
    marks = marks or {}
    return "".join(f"{marks[i]} = 1\n" if i in marks else f"{prefix}{i} = {i}\n" for i in range(1, n + 1))


def _run(repo, rules, discovery=None, **reader):
    backend = ScriptedBackend(rules)
    defaults = dict(window_lines=20, evidence_lines=5, expand_lines=10, action_threshold=0.3,
                    observation_threshold=0.7, hotspot_threshold=0.9, soft_rounds=2, hard_rounds=4)
    locator = TwoPhaseLocator(discovery or FlatDiscovery(file_threshold=0.5, recall_guard_fraction=0.0),
                              ProgressiveReader(**(defaults | reader)))
    trace = Trace()
    result = localize(locator, TASK, repo, SystemOne(backend, "scripted"), trace)
    return result, backend, trace


def _reads(trace, path):
    return [(e.data["start_line"], e.data["end_line"]) for e in trace.events
            if e.kind == EventKind.READ and e.data["path"] == path and e.data["lines"] > 0]


def _stage(result, name):
    return next(s for s in result.cost.stages if s.name == name)


@pytest.fixture
def repo(tmp_path):
    return RepositoryView(write_tree(tmp_path, {
        "pkg/a.py": _lines(100, {23: "HOT_ONE", 87: "HOT_TWO"}),
        "pkg/b.py": _lines(100, {45: "LATE_HOT"}),
        "pkg/c.py": _lines(40),
        "docs/notes.py": _lines(10),
    }))


# --- Phase 1 ------------------------------------------------------------------------------------

def test_phase_one_never_reads_a_body(repo):
    for discovery in (FlatDiscovery(file_threshold=0.5), PrunedDiscovery(directory_threshold=0.5, file_threshold=0.5)):
        result, backend, _ = _run(repo, [("pkg", 0.9)], discovery=discovery)
        assert _stage(result, "file_discovery").source_lines_read == 0
        discovery_requests = [r for r in backend.requests if r.state["stage"] == "file_discovery"]
        assert all(q.content is None and q.type == "noul" for r in discovery_requests for q in r.questions.values())


def test_flat_threshold_cap_and_recall_guard(repo):
    rules = [("path: pkg/a.py", 0.9), ("path: pkg/b.py", 0.8), ("path: pkg/c.py", 0.3), ("path: docs", 0.2)]
    result, _, _ = _run(repo, rules, discovery=FlatDiscovery(file_threshold=0.85, recall_guard_fraction=0.5, max_files=3))
    details = _stage(result, "file_discovery").details
    # above threshold: a; recall guard (top 50 % of 4 files): a, b
    assert (details["files_above_threshold"], details["files_by_recall_guard"], details["files_handed_off"]) == (1, 2, 2)
    capped, _, _ = _run(repo, rules, discovery=FlatDiscovery(file_threshold=0.1, max_files=1))
    assert _stage(capped, "file_discovery").details["files_handed_off"] == 1


def test_pruned_exposes_only_direct_files_of_retained_directories(repo):
    rules = [("directory: pkg/", 0.9), ("directory: docs/", 0.1), ("path: pkg/a.py", 0.9), ("path:", 0.7)]
    result, backend, _ = _run(repo, rules, discovery=PrunedDiscovery(directory_threshold=0.5, file_threshold=0.6))
    details = _stage(result, "file_discovery").details
    assert (details["directories_exposed"], details["directories_retained"], details["files_exposed"]) == (2, 1, 3)
    asked = {q.criteria.split("\n")[0] for r in backend.requests for q in r.questions.values()
             if isinstance(q.criteria, str) and q.criteria.startswith("path:")}
    assert asked == {"path: pkg/a.py", "path: pkg/b.py", "path: pkg/c.py"}


# --- Phase 2 ------------------------------------------------------------------------------------

def test_batch_requests_hold_one_choice_question_per_active_file(repo):
    _, backend, _ = _run(repo, [("path: pkg", 0.9), ("lines 1-20", 0.9)], batch_size=2)
    choice_requests = [r for r in backend.requests if any(q.type == "choice" for q in r.questions.values())]
    first_round = choice_requests[:2]
    assert [len(r.questions) for r in first_round] == [2, 1]  # 3 active files, batches of 2
    for request in choice_requests:
        assert all(q.type == "choice" for q in request.questions.values())
        files = [q.content for q in request.questions.values()]
        assert len(files) == len(set(files))


def test_multi_hotspot_expands_around_a_second_hotspot(repo):
    rules = [("path: pkg/a.py", 0.9), ("hotspot", 0.5), ("HOT_ONE", 0.95), ("HOT_TWO", 0.95),
             ("lines 21-40", 0.9), ("lines 81-100", 0.85), ("lines", 0.1)]
    result, _, trace = _run(repo, rules, max_hotspots=2, hard_rounds=6, soft_rounds=6)
    reads = _reads(trace, "pkg/a.py")
    # the two most promising windows first, each finds a hotspot (lines 21-25, 86-90); then the
    # expansions before each hotspot (their after-sides are already read)
    assert reads[:4] == [(21, 40), (81, 100), (11, 20), (76, 80)]
    spans = {(e.start_line, e.end_line) for f in result.files for e in f.evidence}
    assert any(s <= 23 <= e for s, e in spans) and any(s <= 87 <= e for s, e in spans)


def test_a_file_with_new_evidence_earns_a_round_past_the_soft_limit_a_sibling_does_not(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {
        "pkg/late.py": _lines(200, {70: "LATE_HOT"}),
        "pkg/sib.py": _lines(200),
    }))
    # Both files read their windows in order (1-20, 21-40, ...): late.py finds its hotspot in round 4
    # (lines 61-80), at the soft limit, and earns round 5; its sibling found nothing and stops at 4.
    rules = [("path: pkg", 0.9), ("LATE_HOT", 0.95), ("lines", 0.9)]
    result, _, trace = _run(repo, rules, soft_rounds=4, hard_rounds=8, max_actions=1)
    decision = next(e.data for e in trace.events if e.kind == EventKind.DECISION and e.data.get("stage") == "reading")
    assert decision["rounds"] == {"pkg/late.py": 5, "pkg/sib.py": 4}
    assert decision["termination"] == {"pkg/late.py": "no_new_evidence", "pkg/sib.py": "no_new_evidence"}


def test_no_file_exceeds_the_hard_budget(repo):
    result, _, trace = _run(repo, [("path: pkg", 0.9), ("lines", 0.9), ("", 0.8)], soft_rounds=2, hard_rounds=3)
    rounds = next(e.data["rounds"] for e in trace.events if e.kind == EventKind.DECISION and e.data.get("stage") == "reading")
    assert max(rounds.values()) == 3
    assert _stage(result, "reading").details["terminated_budget_exhausted"] >= 1


def test_low_confidence_choice_stops_the_file(repo):
    result, _, _ = _run(repo, [("path: pkg/a.py", 0.9)], action_threshold=0.5)
    # the scripted double picks the first option (stop) when nothing matches
    assert _stage(result, "reading").details["terminated_no_action_above_threshold"] == 1
    assert _stage(result, "reading").source_lines_read == 0 or result.files == []


def test_global_scheduler_reads_the_most_confident_files_first_and_keeps_others_eligible(repo):
    rules = [("path: pkg", 0.9), ("HOT_ONE", 0.95), ("lines 21-40", 0.9), ("lines 41-60", 0.6), ("wait", 0.5),
             ("lines", 0.1)]
    result, backend, trace = _run(repo, rules, scheduler="global", epoch_width=1, hard_rounds=2, soft_rounds=2)
    choice_requests = [r for r in backend.requests if any(q.type == "choice" for q in r.questions.values())]
    assert len(choice_requests[0].questions) == 3  # every eligible file in one request
    first_reads = [e.data["path"] for e in trace.events if e.kind == EventKind.READ and e.data["lines"] > 1]
    assert len(set(first_reads)) > 1  # files not selected in an epoch were read in a later one
    assert _stage(result, "reading").details["epochs"] > 1


def test_evidence_is_the_chunk_above_the_observation_threshold(repo):
    result, _, _ = _run(repo, [("path: pkg/a.py", 0.9), ("HOT_ONE", 0.95), ("lines 21-40", 0.9)], hard_rounds=1, soft_rounds=1)
    assert result.ranked_paths() == ["pkg/a.py"]
    assert [(e.start_line, e.end_line) for e in result.files[0].evidence] == [(21, 25)]


def test_cost_adds_up_over_stages(repo):
    result, backend, _ = _run(repo, [("path: pkg/a.py", 0.9), ("HOT_ONE", 0.95), ("lines 21-40", 0.9)])
    assert result.cost.model_calls == len(backend.requests) == sum(s.model_calls for s in result.cost.stages)
    assert result.cost.source_lines_read == sum(s.source_lines_read for s in result.cost.stages)


@pytest.mark.parametrize("bad", [dict(action_threshold=1.5), dict(batch_size=0), dict(soft_rounds=5, hard_rounds=4)])
def test_invalid_reader_parameters_are_refused(bad):
    with pytest.raises(ValueError):
        ProgressiveReader(**bad)
