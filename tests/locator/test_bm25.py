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


def test_cost_charges_the_index_apart_from_the_lines_it_shows(tmp_path):
    repo = _repo(tmp_path)
    result = localize(compose_locator("bm25"), TASK, repo, None, Trace())
    every_candidate = sum(f.line_count for f in repo.files() if f.path.endswith(".py"))
    assert result.cost.index_lines == every_candidate  # the index read every candidate file
    assert result.cost.source_lines_read == repo.stat("pkg/wheel.py").line_count  # evidence: the returned file, read again
    assert result.cost.model_calls == 0 and result.producer.model is None
    assert [s.name for s in result.cost.stages] == ["retrieval", "evidence"]
    assert [s.index_lines for s in result.cost.stages] == [every_candidate, 0]


def test_definition_granularity_makes_the_best_chunk_the_evidence_and_reads_only_it(tmp_path):
    repo = _repo(tmp_path)
    result = localize(compose_locator("bm25", granularity="definition", windows_per_file=1), TASK, repo, None, Trace())
    assert result.ranked_paths() == ["pkg/wheel.py"]
    [evidence] = result.files[0].evidence
    assert (evidence.start_line, evidence.end_line) == (91, 92)  # def parse_wheel_filename, whole
    assert result.cost.source_lines_read == 2


def test_the_result_records_the_whole_ranking_and_what_was_returned(tmp_path):
    repo = _repo(tmp_path)
    task = Task(id="t", text="parse_wheel_filename helper_3 value", subject=SubjectIdentity(repository="r", revision="v"))
    result = localize(compose_locator("bm25", top_files=1), task, repo, None, Trace())
    assert result.handoff.stage == "retrieval"
    assert result.handoff.ranked == ["pkg/wheel.py", "pkg/other.py"] and result.handoff.handed_off == ["pkg/wheel.py"]


def test_plain_tokens_do_not_stem_so_an_inflection_misses(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": "def parsing():\n    pass\n", "pkg/b.py": "x = 1\n"}))
    task = Task(id="t", text="parses", subject=SubjectIdentity(repository="r", revision="v"))
    assert localize(compose_locator("bm25"), task, repo, None, Trace()).ranked_paths() == ["pkg/a.py"]
    assert localize(compose_locator("bm25", tokenizer="plain"), task, repo, None, Trace()).files == []


def test_explicit_mentions_weigh_more_than_prose(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {
        "pkg/table.py": "def render_table(rows):\n    return rows\n" + "# rows rows rows rows table\n" * 3,
        "pkg/units.py": "def convert_units(value):\n    return value\n",
    }))
    task = Task(id="t", text="The table rows break when rows hold units: see `convert_units`.",
                subject=SubjectIdentity(repository="r", revision="v"))
    assert localize(compose_locator("bm25"), task, repo, None, Trace()).ranked_paths()[0] == "pkg/table.py"
    weighted = localize(compose_locator("bm25", mention_weight=3), task, repo, None, Trace())
    assert weighted.ranked_paths()[0] == "pkg/units.py"


def test_no_overlap_no_files(tmp_path):
    repo = _repo(tmp_path)
    task = Task(id="t", text="zebra quokka", subject=SubjectIdentity(repository="r", revision="v"))
    assert localize(compose_locator("bm25"), task, repo, None, Trace()).files == []
