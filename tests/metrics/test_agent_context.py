"""The response an agent receives and seed 001's known-hash two-turn accounting."""

from __future__ import annotations

import json

from locator.lane.ast_lane import OWNER_EXCERPT
from locator.result import Cost, Evidence, LocalizationResult, Producer, ResultFile, Role
from locator.system_one.tokens import count_tokens
from metrics.agent_context import context_metrics, render, sent_hashes


def _evidence(path: str, a: int, b: int, text: str, reason: str = "window") -> Evidence:
    return Evidence(id=f"{path}#{a}-{b}", start_line=a, end_line=b, content=text, reason=reason)


RESULT = LocalizationResult(
    task="t", subject=None, producer=Producer(system="test"), cost=Cost(),
    files=[ResultFile(path="a.py", role=Role.PRIMARY, evidence=[_evidence("a.py", 1, 2, "def f():\n    pass\n", OWNER_EXCERPT)]),
           ResultFile(path="b.py", role=Role.SUPPORTING, evidence=[_evidence("b.py", 5, 6, "x = 1\ny = 2\n")]),
           ResultFile(path="c.py", role=Role.CONTEXT)])


def test_turn_two_sends_held_payloads_as_their_hashes_only():
    turn1 = render(RESULT)
    turn2 = render(RESULT, known=sent_hashes(turn1))
    assert all("source" in e for f in turn1["files"] for e in f["excerpts"])
    assert not any("source" in e for f in turn2["files"] for e in f["excerpts"])
    assert [e["blake3"] for f in turn2["files"] for e in f["excerpts"]] == [e["blake3"] for f in turn1["files"] for e in f["excerpts"]]


def test_the_seed_table_for_one_task():
    m = context_metrics(RESULT, gold_files={"a.py", "c.py", "d.py"})
    assert (m["selected_labeled_files"], m["generated_labeled_files"]) == (1, 2)
    assert m["selected_file_recall"] == 1 / 3
    assert m["source_tokens"] == count_tokens("def f():\n    pass\n") + count_tokens("x = 1\ny = 2\n")
    assert m["dead_end_source_tokens"] == count_tokens("x = 1\ny = 2\n")
    turn1 = json.dumps(render(RESULT), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert m["response_json_tokens"] == count_tokens(turn1)
    assert m["response_json_tokens"] < m["two_turn_json_tokens"] < 2 * m["response_json_tokens"]
    assert m["exact_hash_resends"] == 0 and m["owner_excerpt_tokens"] == count_tokens("def f():\n    pass\n")


def test_a_result_without_source_has_no_context_metrics():
    imported = RESULT.model_copy(update={"files": [ResultFile(path="a.py", evidence=[
        Evidence(id="a", start_line=1, end_line=2)])]})
    assert set(context_metrics(imported, {"a.py"}).values()) == {None}


def test_the_owner_excerpt_is_named_for_the_per_task_table():
    from metrics.agent_context import owner_excerpt
    assert owner_excerpt(RESULT) == "a.py#1-2"
    assert owner_excerpt(RESULT.model_copy(update={"files": RESULT.files[1:]})) is None


def test_a_payload_sent_in_full_twice_is_a_resend():
    # the owner excerpt's exact source also arrives as a plain excerpt of the same file: sent in full twice
    twice = RESULT.model_copy(update={"files": [
        RESULT.files[0].model_copy(update={"evidence": [*RESULT.files[0].evidence,
                                                        _evidence("a.py", 1, 2, "def f():\n    pass\n")]}),
        *RESULT.files[1:]]})
    assert context_metrics(twice, {"a.py"})["exact_hash_resends"] == 1
    from metrics.agent_context import resends

    turn1 = render(RESULT)
    assert resends(turn1, render(RESULT, known=sent_hashes(turn1))) == 0
    assert resends(turn1, render(RESULT)) == 2  # a turn 2 that ignores what the client holds resends both
