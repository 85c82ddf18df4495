"""Review of the hand-annotated demo gold against the real released files."""

from __future__ import annotations

import pytest

from dataset.gold import derive_entities
from dataset.manifest import load_manifest
from dataset.subjects import SubjectStore, source_reader
from experiments.job.paths import PROJECT_ROOT
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


LANGUAGE_ROWS = [row for name in ("demo_rust", "demo_go", "demo_typescript", "demo_javascript", "demo_java")
             for row in load_manifest(PROJECT_ROOT / "datasets" / name / "manifest.jsonl").rows]
OWNERS = {"demo-clap-001": "Parser.add_default_value", "demo-clap-002": "eq_ignore_case",
               "demo-clap-003": "did_you_mean", "demo-clap-trace-001": "assert_defaults",
               "demo-clap-trace-002": "assert_app", "demo-cobra-001": "SuggestionsFor",
               "demo-cobra-002": "RangeArgs", "demo-cobra-003": "validateExclusiveFlagGroups",
               "demo-rxjs-001": "take", "demo-rxjs-002": "range", "demo-express-001": "sendStatus",
               "demo-express-002": "hostname", "demo-cordova-001": "AllowList.addAllowListEntry",
               "demo-cordova-002": "LOG.setLogLevel", "demo-cordova-003": "CordovaPreferences.getInteger",
               "demo-cordova-trace-001": "CordovaPreferences.getInteger"}


@pytest.mark.parametrize("row", LANGUAGE_ROWS, ids=lambda r: r.task.id)
def test_each_languages_demo_gold_lies_in_the_definitions_it_names(row, subject_cache):
    """The clap, cobra, rxjs, express and cordova-android gold, read from the packages: non-blank lines
    inside the function the task is about (the tags queries' definitions name it; a trace's gold is its
    innermost frame's in the subject's own code)."""
    if row.subject.kind == "debian" and __import__("shutil").which("apt-get") is None:
        pytest.skip("a Debian subject needs apt-get")
    repo = RepositoryView(SubjectStore(subject_cache).materialize(row.subject, row.task.id))
    for span in row.gold.spans:
        lines = repo.read(span.path, span.start_line, span.end_line).lines
        assert len(lines) == span.end_line - span.start_line + 1 and any(line.strip() for line in lines)
    [entity] = derive_entities(row.gold.spans, source_reader(repo.root))
    assert entity.endswith(":" + OWNERS[row.task.id])
    if row.task.metadata.get("input") == "failure_trace":  # the trace names the frame the gold lies in
        assert OWNERS[row.task.id].replace(".", "::") in row.task.text.replace(".", "::")
