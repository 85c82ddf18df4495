"""Noul vs Choice at equivalent decision points (`locator.reader.decision_form`): the same options
asked both ways; the most probable option is taken either way, and the two-way control flips at
even odds."""

from __future__ import annotations

import pytest

from locator.repository import RepositoryView
from tests.configs import locator as compose_locator
from tests.conftest import write_tree
from tests.locator.reading.runtime_helpers import DISCOVER, FLAT, lines, reads, run, runtime, terminations
from tests.locator.scripted import ScriptedBackend


@pytest.fixture
def repo(tmp_path):
    return RepositoryView(write_tree(tmp_path, {"pkg/a.py": lines(300), "pkg/b.py": lines(100, "b")}))


def _two_phase(form: str):
    return compose_locator("two_phase", discovery=FLAT, reader={"decision_form": form})


def _question_types(backend, stage: str) -> set[str]:
    return {q.type for r in backend.requests if r.state.get("stage") == stage for q in r.questions.values()}


def test_two_phase_asks_a_noul_per_option_and_takes_the_most_probable(repo):
    rules = DISCOVER + [("lines 141-280", 0.7), ("lines 1-", 0.4), ("lines 281", 0.2)]  # stop: 0
    choice, choice_backend, choice_trace = run(repo, [], _two_phase("choice"), backend=ScriptedBackend(rules))
    noul, noul_backend, noul_trace = run(repo, [], _two_phase("noul"), backend=ScriptedBackend(rules))
    assert _question_types(choice_backend, "reading") >= {"choice"} and "choice" not in _question_types(noul_backend, "reading")
    # a's options: stop, 1-140, 141-280, 281-300 -> one Noul each; 141-280 is the most probable both ways
    first = next(r for r in noul_backend.requests if r.state.get("stage") == "reading")
    assert sum("pkg/a.py" in q.criteria for q in first.questions.values()) == 4
    assert reads(noul_trace)[0] == reads(choice_trace)[0] == ("pkg/a.py", 141, 280)
    assert reads(noul_trace) == reads(choice_trace)


def test_two_phase_noul_below_the_action_threshold_ends_the_file(repo):
    rules = DISCOVER + [("lines ", 0.1)]  # every read; not the stop option
    result, _, trace = run(repo, [], _two_phase("noul"), backend=ScriptedBackend(rules))
    assert not reads(trace) and set(terminations(result).values()) == {"no_action_above_threshold"}


def _control_types(backend) -> set[str]:
    return {q.type for r in backend.requests if r.state.get("stage") == "file_runtime" and "reconciliation" not in r.state
            for q in r.questions.values()}


@pytest.mark.parametrize(("stop_noul", "stops"), [(0.5, True), (0.49, False)])
def test_file_runtime_noul_control_stops_at_even_odds(tmp_path, stop_noul, stops):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": lines(100)}))
    locator = runtime("file_runtime", decision_form="noul", safety_epochs=3)
    rules = DISCOVER + [("read so far:", stop_noul), ("lines", 0.1)]  # every read below the read threshold
    result, backend, trace = run(repo, [], locator, backend=ScriptedBackend(rules))
    assert _control_types(backend) == {"noul"}
    reconciliations = [r for r in backend.requests if "reconciliation" in r.state]
    if stops:  # stop with no read above the threshold: a model stop, nothing read, nothing to reconcile
        assert terminations(result) == {"pkg/a.py": "model_stop"} and not reads(trace) and not reconciliations
    else:  # continue while no read is above the threshold: the contradiction is reconciled
        assert reconciliations[0].state["reconciliation"] == "continue_without_read_above"
