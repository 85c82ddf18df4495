from __future__ import annotations

from locator.entities import module_paths
from locator.repository import RepositoryView
from locator.runtime import localize
from locator.task import SubjectIdentity, Task
from locator.trace import Trace
from tests.configs import locator as compose_locator
from tests.conftest import write_tree


def _task(text: str) -> Task:
    return Task(id="t", text=text, subject=SubjectIdentity(repository="r", revision="v"))


COMMON = "class Table:\n    pass\n\n\nclass Row:\n    pass\n"


def _repo(tmp_path):
    files = {f"pkg/m{i}.py": COMMON + f"def helper_{i}():\n    return {i}\n" for i in range(6)}
    files["pkg/io/rst.py"] = "import os\n\n\nclass RST:\n    header_rows = None\n\n    def write(self, lines):\n        return lines\n"
    files["pkg/formats.py"] = "def _get_format_class(name):\n    return name\n"
    return RepositoryView(write_tree(tmp_path, files))


def test_modules_paths_and_frames_name_files():
    text = 'see astropy.io.ascii.rst.RST and File "/venv/site-packages/pkg/core.py", line 3, and utils/misc.py'
    paths = module_paths(text)
    assert "astropy/io/ascii/rst.py" in paths and "astropy/io/ascii/rst/__init__.py" in paths
    assert "/venv/site-packages/pkg/core.py" in paths and "utils/misc.py" in paths


def test_a_rare_mentioned_name_outranks_a_common_one_and_its_definition_is_the_evidence(tmp_path):
    repo = _repo(tmp_path)
    result = localize(compose_locator("entities"), _task("`Table` and `Row` output breaks in `_get_format_class`"), repo, None, Trace())
    # _get_format_class is defined once, Table and Row in 6 files each: one rare name says more than two common
    assert result.ranked_paths()[0] == "pkg/formats.py"
    assert set(result.ranked_paths()[1:]) <= {f"pkg/m{i}.py" for i in range(6)}
    first = result.files[0].evidence[0]
    assert (first.start_line, first.end_line) == (1, 2) and "(_get_format_class)" in first.reason


def test_a_named_module_or_a_frame_beyond_the_repository_root_finds_its_file(tmp_path):
    repo = _repo(tmp_path)
    for text in ("writing with pkg.io.rst.RST fails", 'File "/usr/lib/site-packages/pkg/io/rst.py", line 7, in write'):
        result = localize(compose_locator("entities"), _task(text), repo, None, Trace())
        assert result.ranked_paths()[0] == "pkg/io/rst.py", text


def test_a_name_defined_in_too_many_files_says_nothing(tmp_path):
    repo = _repo(tmp_path)
    result = localize(compose_locator("entities", max_definers=3), _task("`Table` is wrong"), repo, None, Trace())
    assert result.ranked_paths() == []


def test_cost_charges_the_definitions_index_apart_from_the_evidence_it_shows(tmp_path):
    repo = _repo(tmp_path)
    result = localize(compose_locator("entities"), _task("`_get_format_class` breaks"), repo, None, Trace())
    assert result.cost.index_lines == sum(f.line_count for f in repo.files())
    assert result.cost.source_lines_read == 2  # the one definition shown
    assert result.handoff.ranked == ["pkg/formats.py"]


def test_a_path_that_names_too_many_files_says_nothing(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {f"pkg/p{i}/__init__.py": "x = 1\n" for i in range(4)}))
    result = localize(compose_locator("entities", max_definers=3), _task("edit `__init__.py`"), repo, None, Trace())
    assert result.ranked_paths() == []
    result = localize(compose_locator("entities", max_definers=3), _task("edit pkg/p2/__init__.py"), repo, None, Trace())
    assert result.ranked_paths() == ["pkg/p2/__init__.py"]
