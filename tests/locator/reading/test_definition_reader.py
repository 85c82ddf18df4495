"""locator=definition_reader: a read per definition judged on its signature, evidence bounded by the
definition, and files that end for the reason that happened, each driven exactly."""

from __future__ import annotations

from locator.reading.definition_reader import READ_INSTRUCTIONS
from locator.repository import RepositoryView
from tests.conftest import write_tree
from tests.configs import locator
from tests.locator.reading.runtime_helpers import DISCOVER, FLAT, reading, reads, run, terminations
from tests.locator.scripted import ScriptedBackend

SOURCE = ("import os\n\n\n"                                        # 1-3: no definition
          "def load_defaults():\n    return {}\n\n\n"             # 4-5
          "def parse_config(path, section):\n    text = open(path).read()\n    return text\n\n\n"  # 8-10
          "class Writer:\n    def write(self, data):\n        return data\n")  # 13-15, write 14-15


def _repo(tmp_path) -> RepositoryView:
    return RepositoryView(write_tree(tmp_path / "s", {"pkg/config.py": SOURCE, "pkg/constants.py": "X = 1\n"}))


def _reader(**settings):
    return locator("definition_reader", discovery=FLAT, reader=settings)


def test_the_definition_judged_relevant_is_read_whole_and_is_the_evidence(tmp_path):
    rules = [("function parse_config", 0.9), ("text = open(path)", 0.95)]  # signature, then the read excerpt
    result, backend, trace = run(_repo(tmp_path), rules, _reader())
    assert reads(trace) == [("pkg/config.py", 8, 10)]  # the definition, nothing around it
    [file] = result.files
    assert [(e.start_line, e.end_line) for e in file.evidence] == [(8, 10)]
    criteria = [q.criteria for r in backend.requests for q in r.questions.values() if q.instructions == READ_INSTRUCTIONS]
    assert criteria == ["pkg/config.py lines 4-5: function load_defaults", "pkg/config.py lines 8-10: function parse_config",
                        "pkg/config.py lines 13-15: class Writer", "pkg/config.py lines 14-15: function Writer.write"]
    assert result.cost.source_lines_read == 4 + 3  # the outline's four signature lines, then the definition


def test_files_end_for_the_reason_that_happened(tmp_path):
    rules = [("lines 4-5", 0.9), ("lines 8-10", 0.8), ("lines 13-15", 0.7)]
    result, _, trace = run(_repo(tmp_path), rules, _reader(max_reads=1))
    assert reads(trace) == [("pkg/config.py", 4, 5)]  # the best only
    assert terminations(result) == {"pkg/config.py": "budget_exhausted", "pkg/constants.py": "action_space_exhausted"}
    result, _, trace = run(_repo(tmp_path), [("lines 8-10", 0.8)], _reader(max_reads=4))
    assert reads(trace) == [("pkg/config.py", 8, 10)]
    assert terminations(result)["pkg/config.py"] == "no_action_above_threshold"
    details = reading(result).details
    assert (details["definitions_offered"], details["definitions_read"]) == (4, 1)
    assert {"definitions_offered", "definitions_read", "terminated_budget_exhausted"} <= set(reading(result).counted)


def test_a_long_definition_is_read_up_to_its_bound_and_overlaps_are_not_read_twice(tmp_path):
    rules = [("class Writer", 0.9), ("Writer.write", 0.8)]
    _, _, trace = run(_repo(tmp_path), rules, _reader(max_definition_lines=2))
    assert reads(trace) == [("pkg/config.py", 13, 14), ("pkg/config.py", 15, 15)]  # Writer's first 2, then write's rest


def test_offered_definitions_are_bounded(tmp_path):
    backend = ScriptedBackend(DISCOVER)
    run(_repo(tmp_path), [], _reader(max_offered=2), backend=backend)
    asked = [q.criteria for r in backend.requests for q in r.questions.values() if q.instructions == READ_INSTRUCTIONS]
    assert len(asked) == 2
