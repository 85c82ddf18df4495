from __future__ import annotations

from locator.repository import RepositoryView
from locator.runtime import localize
from locator.task import SubjectIdentity, Task
from locator.trace import Trace
from tests.configs import locator as compose_locator
from tests.conftest import write_tree

TASK = Task(id="t", text="render_table drops rows when units convert",
            subject=SubjectIdentity(repository="r", revision="v"))


def _repo(tmp_path):
    return RepositoryView(write_tree(tmp_path, {
        "pkg/table.py": "def render_table(rows):\n    return rows\n\n" + "".join(f"def f{i}():\n    pass\n" for i in range(40)),
        "pkg/units.py": "def convert(units):\n    return units\n",
        "pkg/none.py": "x = 1\n",
    }))


def test_hybrid_fuses_both_rankings_and_pays_for_both_indexes(tmp_path):
    repo = _repo(tmp_path)
    first, second = compose_locator("bm25"), compose_locator("bm25", granularity="definition")
    hybrid = compose_locator("hybrid")
    expected = {p for r in (first, second) for p in localize(r, TASK, repo, None, Trace()).handoff.ranked}
    result = localize(hybrid, TASK, _repo(tmp_path / "again"), None, Trace())
    assert set(result.handoff.ranked) == expected and result.ranked_paths()[0] == "pkg/table.py"
    candidate_lines = sum(f.line_count for f in repo.files())
    assert result.cost.index_lines == 2 * candidate_lines  # each retriever built its own index
    assert result.files[0].confidence.type == "rrf_relative" and result.files[0].confidence.score == 1.0


def test_hybrid_evidence_uses_the_chunks_a_ranking_carried(tmp_path):
    result = localize(compose_locator("hybrid"), TASK, _repo(tmp_path), None, Trace())
    top = result.files[0]
    assert (top.evidence[0].start_line, top.evidence[0].end_line) == (1, 2)  # def render_table, from the definition ranking
    assert top.evidence[0].confidence.type == "chunk_relative"  # labelled as the fused ranking's chunks, not bm25 windows
