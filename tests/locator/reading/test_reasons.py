"""Task-specific evidence reasons (`locator.reader.evidence.reasons=task`): a span's reason says what
it shows for this task, from the decision that made it evidence; the seed's template stays the default."""

from __future__ import annotations

from locator.discovery import Candidate
from locator.reading.questions import OBSERVATION_INSTRUCTIONS
from locator.reading.reasons import shared_names
from locator.reading.state import FileState, Observation
from locator.repository import FileInfo
from locator.task import SubjectIdentity, Task
from locator.windows import LineRange
from tests.configs import locator as compose_locator

SPAN = "class Parser:\n    def parse(self, text):\n        return text.split()\n\ndef parse_config(path, section):\n    pass\n"


def _task(text: str) -> Task:
    return Task(id="t", text=text, subject=SubjectIdentity(repository="r", revision="v"))


def _state() -> FileState:
    state = FileState(Candidate(FileInfo(path="pkg/parser.py", size_bytes=1, line_count=200), 0.9), None)
    state.observations = [Observation(LineRange(11, 16), 0.83, SPAN, 2), Observation(LineRange(40, 45), 0.2, "x = 1\n", 3)]
    return state


def _reasons(reasons: str, task: Task) -> list[str]:
    evidence = compose_locator("two_phase", reader={"evidence": {"reasons": reasons}}).reader.evidence
    return [e.reason for e in evidence.evidence(task, _state())]


def test_the_seed_default_is_the_template_reason():
    assert compose_locator("two_phase").reader.evidence.reasons == "template"
    assert _reasons("template", _task("parse_config ignores `section`")) == [OBSERVATION_INSTRUCTIONS]


def test_a_task_reason_names_the_decision_the_definitions_and_the_tasks_names():
    [reason] = _reasons("task", _task("parse_config ignores the `section` argument of Parser.parse"))
    assert "rated 0.83 (threshold 0.65)" in reason and "lines 11-16" in reason and "round 2" in reason
    assert "defines Parser, parse, parse_config" in reason
    assert "shares with the task: `section`, `parse_config`, `Parser`, `parse`" in reason  # code spans first


def test_the_same_span_gets_a_different_reason_for_a_different_task():
    one = _reasons("task", _task("parse_config ignores `section`"))
    other = _reasons("task", _task("Parser.parse splits on every space"))
    assert one != other and "`section`" not in other[0] and "`Parser`" in other[0]


def test_a_prose_task_shares_stemmed_words_and_a_span_sharing_nothing_says_so():
    assert shared_names("the config is parsed wrongly", SPAN) == ["config", "pars"]
    [reason] = _reasons("task", _task("unicode handling of cookies"))
    assert reason.endswith("shares no name with the task")
