"""Every cross-module record survives JSON; the committed JSON Schema matches the model."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from experiments.job.paths import PROJECT_ROOT
from locator.result import (
    Confidence, ConfidenceLabel, Cost, Evidence, LocalizationResult, PhysicalCost, Producer, ResultFile,
    StageCost, Tokens, confidence_label, json_schema,
)
from locator.task import SubjectIdentity, Task
from locator.trace import EventKind, Trace, read_trace


def _result() -> LocalizationResult:
    return LocalizationResult(
        task="t1",
        subject=SubjectIdentity(repository="org/repo", revision="abc"),
        producer=Producer(system="loclab/test", model=None, confidence_semantics="noul"),
        files=[
            ResultFile(
                path="a.py",
                confidence=Confidence.of(0.85, "noul", "test"),
                evidence=[Evidence(id="e1", start_line=3, end_line=5, content="x\n")],
            )
        ],
        cost=Cost(elapsed_ms=1.5, model_calls=2, tokens=Tokens(input=10, output=3), source_lines_read=7,
                  stages=[StageCost(name="reading", model_calls=2, details={"rounds": 1})],
                  physical=PhysicalCost(model_calls=1, cache_hits=1, cache_misses=1)),
    )


def test_result_round_trip(tmp_path):
    result = _result()
    path = tmp_path / "localization-result.json"
    result.write(path)
    assert LocalizationResult.read(path) == result
    assert result.kind == "code-localization-result" and result.schema_version == 5


def test_a_version_1_result_is_refused_not_reinterpreted(tmp_path):
    old = _result().model_dump(mode="json") | {"schema_version": 1}
    old.pop("provenance", None)
    path = tmp_path / "old.json"
    path.write_text(__import__("json").dumps(old))
    with pytest.raises(ValueError, match="schema_version"):
        LocalizationResult.read(path)


def test_missing_values_stay_null():
    dumped = _result().model_dump(mode="json")
    assert dumped["cost"]["tokens"]["thinking"] is None
    assert dumped["cost"]["tokens"]["cache_read_input"] is None


def test_task_round_trip():
    task = Task(id="x", text="fix it", subject=SubjectIdentity(repository="r", revision="v"), metadata={"split": "dev"})
    assert Task.model_validate_json(task.model_dump_json()) == task


def test_records_reject_unknown_fields_and_bad_spans():
    with pytest.raises(ValidationError):
        Task(id="x", text="t", subject=SubjectIdentity(repository="r", revision="v"), gold=["a.py"])
    with pytest.raises(ValidationError):
        Evidence(id="e", start_line=5, end_line=4)
    with pytest.raises(ValidationError):
        Confidence(score=1.5)


@pytest.mark.parametrize("score,label", [(0.8, "high"), (0.79, "medium"), (0.6, "medium"), (0.59, "low")])
def test_confidence_labels(score, label):
    assert confidence_label(score) == ConfidenceLabel(label)


def test_committed_json_schema_is_current():
    committed = (PROJECT_ROOT / "schemas" / "localization-result.schema.json").read_text(encoding="utf-8")
    assert committed == json_schema(), "regenerate schemas/localization-result.schema.json"


def test_trace_round_trip(tmp_path):
    trace = Trace()
    trace.emit(EventKind.READ, path="a.py", start_line=1, end_line=2, lines=2)
    trace.emit(EventKind.DECISION, stage="x", kept=["a.py"])
    trace.write(tmp_path / "trace.jsonl")
    events = read_trace(tmp_path / "trace.jsonl")
    assert [e.kind for e in events] == [EventKind.READ, EventKind.DECISION]
    assert events == trace.events


def test_evidence_keeps_its_source_in_the_saved_result(tmp_path):
    from locator.result import Cost, Evidence, LocalizationResult, Producer, ResultFile

    result = LocalizationResult(task="t", subject=None, producer=Producer(system="test"), cost=Cost(),
                                files=[ResultFile(path="a.py", evidence=[Evidence(id="a", start_line=1, end_line=2,
                                                                                  content="def f():\n    pass\n")])])
    result.write(tmp_path / "r.json")
    assert LocalizationResult.read(tmp_path / "r.json").files[0].evidence[0].content == "def f():\n    pass\n"
