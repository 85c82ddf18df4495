"""Tighter evidence boundaries (`locator/evidence=narrowed`): an evidence span cut at its own
definitions, each part judged by System One; confirmed parts replace the span, none confirmed keeps
it whole; nothing more is read."""

from __future__ import annotations

from locator.reading.narrowing import structural_parts
from locator.repository import RepositoryView
from locator.windows import LineRange
from tests.configs import locator as compose_locator
from tests.conftest import write_tree
from tests.locator.reading.runtime_helpers import FLAT, run
from tests.locator.scripted import ScriptedBackend

SOURCE = ("import os\n\n\n"                                         # 1-3
          "def first():\n" + "    x = 1\n" * 20 + "    return x\n\n\n"  # 4-27
          "@decorator\n@other\ndef second():\n" + "    HOT = 1\n" * 20 + "    return HOT\n\n\n"  # 28-53
          "class Third:\n    def method(self):\n" + "        y = 2\n" * 20 + "        return y\n")  # 54-76


def _lines() -> list[str]:
    return SOURCE.splitlines(keepends=True)


def test_a_span_is_cut_before_each_outer_definition_and_its_decorators():
    parts = structural_parts(LineRange(1, 76), _lines(), max_parts=8)
    assert parts == [LineRange(1, 3), LineRange(4, 27), LineRange(28, 53), LineRange(54, 76)]  # the method stays in Third


def test_more_parts_than_allowed_merge_the_smallest_neighbours():
    assert structural_parts(LineRange(1, 76), _lines(), max_parts=3) == [LineRange(1, 27), LineRange(28, 53), LineRange(54, 76)]
    method = [line[4:] for line in _lines()[54:]]  # one definition and its body: nothing to cut
    assert structural_parts(LineRange(10, 31), method, max_parts=8) == [LineRange(10, 31)]


def _narrowed(**evidence):
    return compose_locator("two_phase", "locator/evidence=narrowed", discovery=FLAT,
                           reader={"sources": {"windows": {"window_lines": 140}}, "evidence": evidence})


def _spans(result) -> dict[str, list[tuple[int, int]]]:
    return {f.path: [(e.start_line, e.end_line) for e in f.evidence] for f in result.files}


RULES = [("path: pkg", 0.9), ("lines", 0.5)]


def test_the_part_system_one_confirms_replaces_the_whole_read(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": SOURCE}))
    whole, _, _ = run(repo, [], compose_locator("two_phase", discovery=FLAT),
                      backend=ScriptedBackend([("HOT = 1", 0.9), *RULES]))
    assert _spans(whole) == {"pkg/a.py": [(1, 76)]}
    result, backend, _ = run(repo, [], _narrowed(), backend=ScriptedBackend([("HOT = 1", 0.9), *RULES]))
    assert _spans(result) == {"pkg/a.py": [(28, 53)]}
    every, _, _ = run(repo, [], _narrowed(), backend=ScriptedBackend([("= 1", 0.9), ("os", 0.9), ("y", 0.9), *RULES]))
    assert next(s for s in every.cost.stages if s.name == "evidence_narrowing").details["spans_narrowed"] == 0
    stage = next(s for s in result.cost.stages if s.name == "evidence_narrowing")
    assert stage.details["spans_narrowed"] == 1 and stage.model_calls == 1 and stage.source_lines_read == 0
    assert (stage.details["narrowed_lines_before"], stage.details["narrowed_lines_after"]) == (76, 26)
    assert result.cost.source_lines_read == whole.cost.source_lines_read  # the parts were read already


def test_no_part_confirmed_keeps_the_span_whole(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": SOURCE}))
    # only the whole read holds both `return x` and `HOT`: no part does
    rules = [("return x\n\n\n@decorator", 0.9), *RULES]
    result, _, _ = run(repo, [], _narrowed(), backend=ScriptedBackend(rules))
    assert _spans(result) == {"pkg/a.py": [(1, 76)]}
    assert next(s for s in result.cost.stages if s.name == "evidence_narrowing").details["spans_narrowed"] == 0


def test_a_span_within_min_lines_is_not_asked_about(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": SOURCE}))
    result, _, _ = run(repo, [], _narrowed(narrowing={"min_lines": 100}), backend=ScriptedBackend([("HOT = 1", 0.9), *RULES]))
    stage = next(s for s in result.cost.stages if s.name == "evidence_narrowing")
    assert _spans(result) == {"pkg/a.py": [(1, 76)]} and stage.model_calls == 0 and stage.details["spans_considered"] == 0
