from __future__ import annotations

from locator.repository import RepositoryView
from locator.runtime import localize
from locator.task import SubjectIdentity, Task
from locator.trace import Trace
from tests.configs import locator as compose_locator
from tests.conftest import write_tree

FILLER = "".join(f"def helper_{i}(value):\n    return value + {i}\n\n" for i in range(30))


def _repo(tmp_path):
    return RepositoryView(
        write_tree(
            tmp_path,
            {
                "pkg/wheel.py": FILLER + "def parse_wheel_filename(name):\n    raise InvalidWheelFilename(name)\n" + FILLER,
                "pkg/other.py": FILLER,
                "pkg/notes.txt": "parse_wheel_filename parse_wheel_filename",
            },
        )
    )


TASK = Task(id="t", text="parse_wheel_filename raises InvalidWheelFilename for valid names",
            subject=SubjectIdentity(repository="r", revision="v"))


def test_ranks_the_matching_file_first_and_points_at_the_matching_lines(tmp_path):
    repo = _repo(tmp_path)
    locator = compose_locator("bm25", top_files=5, window_lines=10, window_stride=5, windows_per_file=1)
    result = localize(locator, TASK, repo, None, Trace())
    assert result.ranked_paths() == ["pkg/wheel.py"]
    evidence = result.files[0].evidence[0]
    assert evidence.start_line <= 91 <= evidence.end_line
    assert result.files[0].confidence.score == 1.0


def test_cost_says_it_read_every_candidate_file(tmp_path):
    repo = _repo(tmp_path)
    result = localize(compose_locator("bm25"), TASK, repo, None, Trace())
    expected = sum(f.line_count for f in repo.files() if f.path.endswith(".py"))
    assert result.cost.source_lines_read == expected
    assert result.cost.model_calls == 0 and result.producer.model is None
    assert [s.name for s in result.cost.stages] == ["retrieval", "evidence"]


def test_no_overlap_no_files(tmp_path):
    repo = _repo(tmp_path)
    task = Task(id="t", text="zebra quokka", subject=SubjectIdentity(repository="r", revision="v"))
    assert localize(compose_locator("bm25"), task, repo, None, Trace()).files == []
