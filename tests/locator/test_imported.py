"""Importers on small hand-written sample files."""

from __future__ import annotations

import json

import pytest

from locator.imported import ImportedResultError
from locator.repository import RepositoryView
from locator.runtime import localize
from locator.task import SubjectIdentity, Task
from locator.trace import Trace
from tests.configs import locator as compose_locator
from tests.conftest import write_tree

SOURCE = "class Parser:\n    def parse(self):\n        return 1\n\n    def close(self):\n        pass\n\ndef helper():\n    return 2\n"


@pytest.fixture
def repo(tmp_path):
    return RepositoryView(write_tree(tmp_path / "subject", {"pkg/parser.py": SOURCE, "pkg/util.py": "X = 1\n"}))


def _task(task_id="org__pkg-1"):
    return Task(id=task_id, text="t", subject=SubjectIdentity(repository="org/pkg", revision="abc"))


def _import(tmp_path, repo, fmt, rows, task_id="org__pkg-1", suffix=".jsonl"):
    path = tmp_path / f"outputs{suffix}"
    path.write_text(json.dumps(rows) if suffix == ".json" else "\n".join(json.dumps(r) for r in rows))
    locator = compose_locator("imported", path=path, format=fmt, system="Peer", model="m-1")
    return localize(locator, _task(task_id), repo, None, Trace())


def test_locagent_lists_and_python_literal_strings(tmp_path, repo):
    rows = [{"instance_id": "org__pkg-1", "found_files": "['pkg/parser.py', 'pkg/util.py']",
             "found_modules": ["pkg/parser.py:Parser"],
             "found_entities": ["pkg/parser.py:Parser.close", "pkg/parser.py:helper", "pkg/parser.py:Missing.x"]}]
    result = _import(tmp_path, repo, "locagent", rows)
    assert result.ranked_paths() == ["pkg/parser.py", "pkg/util.py"]
    assert [(e.start_line, e.end_line) for e in result.files[0].evidence] == [(5, 6), (8, 9)]
    assert (result.producer.system, result.producer.model) == ("Peer", "m-1")
    assert result.cost.model_calls is None and result.cost.source_lines_read is None
    # LocAgent's own rankings are kept as ranked, for its module / function Acc@k
    assert result.ranked_modules == ["pkg/parser.py:Parser"]
    assert result.ranked_entities == ["pkg/parser.py:Parser.close", "pkg/parser.py:helper", "pkg/parser.py:Missing.x"]


def test_agentless_edit_locations(tmp_path, repo):
    rows = [{"instance_id": "org__pkg-1", "found_files": ["pkg/parser.py"],
             "found_edit_locs": [["class: Parser\nfunction: Parser.parse\nline: 9"]]}]
    result = _import(tmp_path, repo, "agentless", rows)
    assert [(e.start_line, e.end_line) for e in result.files[0].evidence] == [(1, 6), (2, 3), (9, 9)]


def test_generic_json(tmp_path, repo):
    rows = [{"task": "org__pkg-1", "files": [{"path": "pkg/util.py", "ranges": [[1, 1]]}, {"path": "pkg/parser.py"}]}]
    result = _import(tmp_path, repo, "generic", rows, suffix=".json")
    assert result.ranked_paths() == ["pkg/util.py", "pkg/parser.py"]
    assert result.files[1].evidence == []


def test_an_agent_s_relevant_files_block_as_swe_explore_reads_it(tmp_path, repo):
    """SWE-Explore's agent answer: `path:a-b`, `path:a`, a bare path for the whole file, decorations
    ignored, a backwards range dropped; the block's order is the ranking."""
    answer = ("I traced the parser.\n\nRELEVANT_FILES:\n- `pkg/parser.py:L2-L3`\n2. **pkg/parser.py:8**\n"
              "* pkg/util.py\npkg/parser.py:6-5\n\nThat is all.")
    result = _import(tmp_path, repo, "relevant_files", [{"instance_id": "org__pkg-1", "output": answer}])
    assert result.ranked_paths() == ["pkg/parser.py", "pkg/util.py"]
    assert [(e.start_line, e.end_line) for e in result.files[0].evidence] == [(2, 3), (8, 8)]
    assert result.files[1].evidence == []  # the whole file: no range (SWE-Explore scores it whole)
    with pytest.raises(ImportedResultError, match="field output: the agent's answer text"):
        _import(tmp_path, repo, "relevant_files", [{"instance_id": "org__pkg-1", "answer": answer}])


def test_a_canonical_result_imports_with_its_tiers(tmp_path, repo):
    """A canonical localization-result.json (a Claude Code run's, another loclab's) keeps its files'
    roles: the tiers a reference-relative comparison reads."""
    canonical = {"task": "org__pkg-1", "subject": None, "producer": {"system": "claude-code"}, "cost": {}, "files": [
        {"path": "pkg/parser.py", "role": "primary", "evidence": [{"id": "e1", "start_line": 2, "end_line": 3}]},
        {"path": "pkg/util.py", "role": "context"}]}
    result = _import(tmp_path, repo, "result", [canonical])
    assert [(f.path, f.role.value) for f in result.files] == [("pkg/parser.py", "primary"), ("pkg/util.py", "context")]
    assert [(e.start_line, e.end_line) for e in result.files[0].evidence] == [(2, 3)]
    with pytest.raises(ImportedResultError, match=r"outputs.jsonl:1: field files.0.evidence.0.start_line"):
        bad = {**canonical, "files": [{"path": "pkg/parser.py", "evidence": [{"id": "e", "start_line": 0, "end_line": 1}]}]}
        _import(tmp_path, repo, "result", [bad])


def test_relevant_files_round_trip_what_explore_export_writes():
    from experiments.analysis.explore_export import relevant_files as written
    from locator.relevant_files import relevant_files
    from metrics.swe_explore import Region

    regions = [Region("a.py", 10, 20), Region("b.py", 5, 5), Region("c.py", 1, -1)]
    assert relevant_files(written(regions)) == [("a.py", 10, 20), ("b.py", 5, 5), ("c.py", None, None)]


def test_paths_escaping_the_subject_are_rejected(tmp_path, repo):
    rows = [{"instance_id": "org__pkg-1", "found_files": ["../../etc/passwd"], "found_entities": []}]
    with pytest.raises(ImportedResultError, match="rejected path"):
        _import(tmp_path, repo, "locagent", rows)


def test_a_task_the_file_does_not_cover_fails(tmp_path, repo):
    with pytest.raises(ImportedResultError, match="no imported result for task org__pkg-2"):
        _import(tmp_path, repo, "locagent", [{"instance_id": "org__pkg-1", "found_files": []}], task_id="org__pkg-2")


def test_malformed_list_field_names_the_row(tmp_path, repo):
    with pytest.raises(ImportedResultError, match=r"outputs\.jsonl:1: field found_files"):
        _import(tmp_path, repo, "locagent", [{"instance_id": "org__pkg-1", "found_files": "not a list ("}])
