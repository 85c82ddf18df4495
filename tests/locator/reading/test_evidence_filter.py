"""locator=evidence_filter (seed 000's Algorithm A): the new-evidence framing reaches System One with
what was read, and the minimal-set filter drops a span the kept ones already cover."""

from __future__ import annotations

from locator.base import LocatorContext
from locator.discovery import Candidate
from locator.reading.state import FileState, Observation
from locator.repository import FileInfo, RepositoryView
from locator.system_one.client import SystemOne
from locator.system_one.wire import NoulAnswer, Response, Usage
from locator.trace import Trace
from locator.windows import LineRange
from tests.conftest import write_tree
from tests.locator.reading.runtime_helpers import TASK, lines, reading, run, runtime
from tests.locator.scripted import ScriptedBackend

CONTINUE = ("continue_file", 0.5)


def test_the_new_evidence_framing_and_what_was_read_reach_the_request(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": lines(100)}))
    rules = [CONTINUE, ("seed_head", 0.9), ("expand_after", 0.9), ("lines", 0.1)]
    _, backend, _ = run(repo, rules, runtime("evidence_filter", safety_epochs=2))
    epochs = [r for r in backend.requests if r.state.get("stage") == "file_runtime" and "reconciliation" not in r.state]
    reads = [q for q in epochs[1].questions.values() if q.type == "noul"]
    assert reads and all("NEW MATERIAL EVIDENCE" in q.instructions and "Redundant" in q.instructions for q in reads)
    assert "x1 = 1\n" in epochs[1].state["covered"]  # epoch 2 sees what epoch 1 read
    control = next(q for q in epochs[1].questions.values() if q.type == "choice")
    assert "evidence gap" in control.options()["continue_file"]
    baseline = run(repo, rules, runtime("file_runtime", safety_epochs=2))[1]
    assert all("covered" not in r.state for r in baseline.requests)


class _CoverageJudge(ScriptedBackend):
    """A test double of the model (not a model): a candidate adds evidence unless its first line is
    already in `covered`."""

    def answer(self, request):
        if request.state.get("stage") != "evidence_filter":
            return super().answer(request)
        [(key, question)] = request.questions.items()
        first = question.content.splitlines()[0]
        noul = 0.1 if first in request.state["covered"] else 0.9
        return Response(model="judge", answers={key: NoulAnswer(noul=noul)}, usage=Usage(input_tokens=5, output_tokens=1))


def test_the_minimal_set_filter_drops_a_span_the_kept_ones_cover(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": lines(10)}))
    evidence_filter = runtime("evidence_filter").reader
    state = FileState(Candidate(FileInfo(path="pkg/a.py", size_bytes=1, line_count=300), 0.9), None)
    best, repeat, new, weak = (Observation(LineRange(1, 20), 0.95, "def parse():\n    ...\n", 1),
                               Observation(LineRange(100, 120), 0.9, "def parse():\n    again\n", 1),
                               Observation(LineRange(200, 220), 0.8, "def render():\n", 1),
                               Observation(LineRange(250, 260), 0.2, "noise\n", 1))
    state.observations = [weak, new, repeat, best]
    ctx = LocatorContext(repo, Trace(), SystemOne(_CoverageJudge([]), "judge"))
    evidence_filter.evidence_filter.apply(TASK, ctx, [state], evidence_filter.evidence)
    assert {o.span.start_line for o in state.observations} == {1, 200, 250}  # the repeat dropped, the rest kept
    [stage] = ctx.stages
    assert stage.name == "evidence_filter" and stage.model_calls == 2
    assert (stage.details["evidence_candidates"], stage.details["evidence_candidates_kept"]) == (3, 2)
    assert (stage.details["evidence_lines"], stage.details["evidence_lines_kept"]) == (62, 41)


def test_the_covered_text_is_capped(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": lines(10)}))
    reader = runtime("evidence_filter", evidence_filter={"max_covered_chars": 5}).reader
    state = FileState(Candidate(FileInfo(path="pkg/a.py", size_bytes=1, line_count=300), 0.9), None)
    state.observations = [Observation(LineRange(1, 20), 0.95, "def parse():\n", 1),
                          Observation(LineRange(100, 120), 0.9, "def parse():\n    again\n", 1)]
    backend = _CoverageJudge([])
    ctx = LocatorContext(repo, Trace(), SystemOne(backend, "judge"))
    reader.evidence_filter.apply(TASK, ctx, [state], reader.evidence)
    # the judge saw only "def p" as covered, so the repeat looked new and was kept
    assert {o.span.start_line for o in state.observations} == {1, 100}


def test_the_filter_switched_off_keeps_every_span(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": lines(100)}))
    rules = [CONTINUE, ("seed_", 0.9), ("x", 0.9), ("lines", 0.1)]
    on = run(repo, rules, runtime("evidence_filter", safety_epochs=1))[0]
    off = run(repo, rules, runtime("evidence_filter", safety_epochs=1, evidence_filter={"enabled": False}))[0]
    assert [s.name for s in off.cost.stages] == ["file_discovery", "reading"]
    assert "evidence_filter" in [s.name for s in on.cost.stages]
    assert reading(on).source_lines_read == reading(off).source_lines_read  # the filter never reads
