"""Review of the hand-annotated demo gold against the real released files."""

from __future__ import annotations

import pytest

from dataset.gold import derive_entities
from dataset.manifest import load_manifest
from dataset.subjects import SubjectStore, source_reader
from experiments.paths import PROJECT_ROOT
from locator.repository import RepositoryView

pytestmark = pytest.mark.network


@pytest.mark.parametrize("row", load_manifest(PROJECT_ROOT / "datasets" / "demo" / "manifest.jsonl").rows, ids=lambda r: r.task.id)
def test_hand_annotated_gold_matches_the_release(row, subject_cache):
    repo = RepositoryView(SubjectStore(subject_cache).materialize(row.subject, row.task.id))
    for span in row.gold.spans:
        lines = repo.read(span.path, span.start_line, span.end_line).lines
        assert len(lines) == span.end_line - span.start_line + 1
        assert any(line.strip() for line in lines), f"{span} covers only blank lines"
    assert row.gold.entities == derive_entities(row.gold.spans, source_reader(repo.root))
