"""Multi-SWE-bench rows read natively: the task text is the resolved issues (never the pull request's
title and body), subjects from a git mirror at `base.sha`, the data set's declared languages on every
task, and the gold rule the data set chose (every edited file, or the declared languages' sources)."""

from __future__ import annotations

import json
import subprocess

import pytest

from dataset.gold import derive_entities
from dataset.manifest import ManifestError
from dataset.swebench import RowsLeftOutWarning, load_swebench


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


ARG_RS = "pub struct Arg;\n\nimpl Arg {\n    pub fn default_value_if(&self) -> u8 {\n        1\n    }\n}\n"
FIX = ("--- a/src/arg.rs\n+++ b/src/arg.rs\n@@ -4,3 +4,3 @@ impl Arg {\n     pub fn default_value_if(&self) -> u8 {\n"
       "-        1\n+        2\n     }\n"
       "--- a/web/arg.ts\n+++ b/web/arg.ts\n@@ -1 +1 @@\n-export const DEFAULT = 1\n+export const DEFAULT = 2\n"
       "--- a/CHANGELOG.md\n+++ b/CHANGELOG.md\n@@ -1 +1,2 @@\n # Changes\n+- default_value_if returns 2\n")


@pytest.fixture
def rows_file(tmp_path):
    return multi_swe_bench_rows(tmp_path)


def multi_swe_bench_rows(tmp_path):
    """A Multi-SWE-bench rows file and the mirror folder its repository's clone sits in (made once per folder)."""
    repo = tmp_path / "mirrors" / "clap-rs__clap"
    if (tmp_path / "rust.jsonl").is_file():
        return tmp_path / "rust.jsonl", repo.parent
    (repo / "src").mkdir(parents=True)
    _git(repo, "init", "--quiet")
    (repo / "src" / "arg.rs").write_text(ARG_RS)
    (repo / "CHANGELOG.md").write_text("# Changes\n")
    (repo / "web").mkdir()
    (repo / "web" / "arg.ts").write_text("export const DEFAULT = 1\n")  # the same repository's web client
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "base")
    row = {"org": "clap-rs", "repo": "clap", "number": 7, "instance_id": "clap-rs__clap-7",
           "base": {"label": "clap-rs:master", "ref": "master", "sha": _git(repo, "rev-parse", "HEAD")},
           "title": "Return 2 from default_value_if", "body": "This PR changes arg.rs to return 2.",
           "resolved_issues": [{"number": 5, "title": "default_value_if gives the wrong default",
                                "body": "With a condition set, the default stays 1."}],
           "fix_patch": FIX, "test_patch": "", "fixed_tests": {}}
    path = tmp_path / "rust.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path, repo.parent


def _load(path, mirrors, **options):
    return load_swebench(path, "mswe", "1", "d", str(mirrors), None, ".", row_format="multi_swe_bench", **options)


def test_the_task_is_the_resolved_issues_with_the_declared_languages_never_the_pull_request(rows_file):
    path, mirrors = rows_file
    [row] = _load(path, mirrors, languages=["rust"], gold_files="declared_source").rows
    assert row.task.text == "default_value_if gives the wrong default\n\nWith a condition set, the default stays 1."
    assert "PR" not in row.task.text and "return 2" not in row.task.text
    assert row.task.languages == ("rust",) and row.task.subject.repository == "clap-rs/clap"
    assert row.gold.files == ["src/arg.rs"] and [(s.start_line, s.end_line) for s in row.gold.spans] == [(5, 5)]
    assert derive_entities(row.gold.spans, lambda _: ARG_RS) == ["src/arg.rs:Arg.default_value_if"]  # at scoring
    assert "only the declared languages' source files" in row.gold.rule


def test_all_edited_gold_keeps_the_changelog(rows_file):
    path, mirrors = rows_file
    [row] = _load(path, mirrors, languages=["rust"]).rows
    assert row.gold.files == ["src/arg.rs", "web/arg.ts", "CHANGELOG.md"]


@pytest.mark.parametrize(("options", "message"), [
    ({"languages": ["klingon"]}, "dataset mswe: field languages: unknown language 'klingon'"),
    ({"gold_files": "declared_source"}, "field patch: gold_files: declared_source needs declared languages"),
    ({"row_format": "bugzilla"}, "'bugzilla' is not a valid RowFormat"),
])
def test_bad_options_are_named(rows_file, options, message):
    path, mirrors = rows_file
    with pytest.raises(ManifestError, match=message):
        load_swebench(path, "mswe", "1", "d", str(mirrors), None, ".", **({"row_format": "multi_swe_bench"} | options))


def test_a_row_without_resolved_issues_is_named_by_file_row_and_field(rows_file):
    path, mirrors = rows_file
    row = json.loads(path.read_text())
    path.write_text(json.dumps(row | {"resolved_issues": []}) + "\n")
    with pytest.raises(ManifestError, match=r"rust\.jsonl:1: field resolved_issues"):
        _load(path, mirrors, languages=["rust"])


def test_a_fix_that_only_adds_source_files_is_not_a_task_and_is_named(rows_file):
    path, mirrors = rows_file
    row = json.loads(path.read_text())
    added = "--- /dev/null\n+++ b/src/new.rs\n@@ -0,0 +1 @@\n+fn new() {}\n--- a/CHANGELOG.md\n+++ b/CHANGELOG.md\n@@ -1 +1,2 @@\n # Changes\n+- new\n"
    path.write_text(json.dumps(row) + "\n" + json.dumps(row | {"instance_id": "clap-rs__clap-8", "fix_patch": added}) + "\n")
    with pytest.warns(RowsLeftOutWarning, match=r"1 rows are not tasks under gold_files=declared_source: clap-rs__clap-8 \(row 2"):
        manifest = _load(path, mirrors, languages=["rust"], gold_files="declared_source")
    assert [r.task.id for r in manifest.rows] == ["clap-rs__clap-7"]
