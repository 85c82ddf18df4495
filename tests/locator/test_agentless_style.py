"""locator=agentless_style: the peer's files -> elements -> lines, each level a generation parsed
against what the model was shown; a backend that cannot generate is a clear error."""

from __future__ import annotations

import pytest

from locator.agentless_style import _section, parse_elements, parse_paths
from locator.outline import Definition
from locator.runtime import localize
from locator.repository import RepositoryView
from locator.system_one.client import SystemOne
from locator.system_one.wire import GenerationUnsupportedError
from locator.trace import Trace
from tests.configs import backend, locator
from tests.conftest import write_tree
from tests.locator.configured import TASK, TREE, has_llm_extra

LISTED = ["src/click/core.py", "src/click/formatting.py", "src/click/_compat.py"]
DEFINITIONS = [Definition("HelpFormatter", "class", 10, 80, 10, 0),
               Definition("HelpFormatter.write_usage", "method", 30, 50, 30, 1),
               Definition("wrap_text", "function", 90, 120, 90, 0)]


def test_listed_paths_are_read_in_the_order_named_and_others_counted():
    text = "1. src/click/formatting.py\n2. `core.py`\n- src/click/nowhere.py\nsrc/click/formatting.py"
    assert parse_paths(text, LISTED) == (["src/click/formatting.py", "src/click/core.py"], 1)


@pytest.mark.parametrize("text", ["class: HelpFormatter\nmethod: HelpFormatter.write_usage",
                                  "```\nclass HelpFormatter:\n    def write_usage\n```",
                                  "- class: click.formatting.HelpFormatter\n- function: write_usage"])
def test_elements_are_the_definitions_named_in_the_peer_format_or_as_code(text):
    assert [d.qualname for d in parse_elements(text, DEFINITIONS)] == ["HelpFormatter", "HelpFormatter.write_usage"]


def test_a_word_that_only_starts_like_a_keyword_names_nothing():
    assert parse_elements("classify: wrap_text\ndefault: HelpFormatter", DEFINITIONS) == []


def test_a_multi_file_answer_is_split_by_the_files_it_names():
    text = "src/click/core.py\nline: 5\nsrc/click/formatting.py\nline: 33"
    assert "33" not in _section(text, "src/click/core.py", LISTED)
    assert "33" in _section(text, "src/click/formatting.py", LISTED)
    assert _section("line: 7", "src/click/core.py", LISTED) == "line: 7"  # one file: the whole answer


def test_a_backend_that_cannot_generate_is_a_clear_error(tmp_path):
    root = write_tree(tmp_path / "subject", TREE)
    with pytest.raises(GenerationUnsupportedError, match="cannot generate text: use system_one=local_llm"):
        localize(locator("agentless_style"), TASK, RepositoryView(root), SystemOne(backend("lexical"), "m"), Trace())


@pytest.mark.skipif(not has_llm_extra(), reason="the llm extra is not installed: LOCLAB_EXTRAS=test,llm bash scripts/setup.sh")
def test_with_the_local_model_every_level_is_asked_and_metered(tmp_path):
    root = write_tree(tmp_path / "subject", TREE)
    configured = locator("agentless_style", max_tokens={"files": 24, "elements": 24, "lines": 12})
    trace = Trace()
    result = localize(configured, TASK, RepositoryView(root), SystemOne(backend("local_llm"), "qwen"), trace)
    generations = [e for e in trace.events if e.kind == "answer" and "text" in e.data]
    assert 1 <= len(generations) <= 3 and result.cost.model_calls == len(generations)
    assert [s.name for s in result.cost.stages][:2] == ["files", "elements"]
    assert all(f.path in TREE for f in result.files)  # only listed paths, whatever the model wrote
