"""Multi-SWE-bench rows read natively: the task text is the resolved issues (never the pull request's
title and body), subjects from a git mirror at `base.sha`, the data set's declared languages on every
task, and the gold rule the data set chose (every edited file, or the declared languages' sources)."""

from __future__ import annotations

import json
import subprocess

import pytest

from pathlib import Path

from dataset.gold import derive_entities
from dataset.manifest import ManifestError
from dataset.subjects import SubjectIntegrityError, SubjectStore
from dataset.swebench import RowsLeftOutWarning, load_swebench
from experiments.job.config import build, compose_config
from experiments.job.paths import PROJECT_ROOT
from tests.conftest import SHARED_DIR


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


# A row written here (our issue text, a one-line fix) for an instance the JavaScript/TypeScript subset
# pins to express 4.16.3 on npm: its lib/request.js at the pull request's base is that release's, byte
# for byte (scripts/build_registry_subset.py checked it against the mirror).
REQUEST_FIX = ("--- a/lib/request.js\n+++ b/lib/request.js\n@@ -74,3 +74,3 @@\n   var lc = name.toLowerCase();\n \n"
               "-  switch (lc) {\n+  switch (lc.trim()) {\n")
PINS = PROJECT_ROOT / "datasets" / "multi_swe_bench_registry" / "javascript-typescript.pins.jsonl"


def _pinned_rows(tmp_path, pins: list[dict]):
    row = {"org": "expressjs", "repo": "express", "number": 3495, "instance_id": "expressjs__express-3495",
           "base": {"sha": "8da51108e7bb501344c537d3f1f846a7477ae329"}, "title": "t", "body": "b",
           "resolved_issues": [{"title": "req.get('Referer ') misses the header", "body": "A padded name finds nothing."}],
           "fix_patch": REQUEST_FIX}
    other = row | {"instance_id": "expressjs__express-1", "number": 1}  # not pinned: not in the subset
    tmp_path.mkdir(exist_ok=True)
    rows, pinned = tmp_path / "rows.jsonl", tmp_path / "pins.jsonl"
    rows.write_text(json.dumps(row) + "\n" + json.dumps(other) + "\n")
    pinned.write_text("".join(json.dumps(p) + "\n" for p in pins))
    return load_swebench(rows, "mswe", "1", "d", None, None, tmp_path / "cache", row_format="multi_swe_bench",
                         languages=["javascript", "typescript"], gold_files="declared_source", subjects=pinned)


def registry_rows(tmp_path, pins_file) -> Path:
    """Rows written here for every instance a pins file pins (our issue text, a one-line edit of each
    gold file): what a registry subset's options need to compose where the shared rows are absent."""
    rows = tmp_path / "registry-rows.jsonl"
    lines = []
    for pin in map(json.loads, Path(pins_file).read_text().splitlines()):
        org, _, rest = pin["instance_id"].partition("__")
        repo, _, number = rest.rpartition("-")
        patch = "".join(f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n" for path in pin["gold_file_sha256"])
        lines.append(json.dumps({"org": org, "repo": repo, "number": int(number), "instance_id": pin["instance_id"],
                                 "base": {"sha": "0" * 40}, "resolved_issues": [{"title": "t", "body": "b"}],
                                 "fix_patch": patch}))
    rows.write_text("\n".join(lines) + "\n")
    return rows


def _express_pin() -> dict:
    return next(p for p in map(json.loads, PINS.read_text().splitlines()) if p["instance_id"] == "expressjs__express-3495")


@pytest.mark.network
def test_a_registry_pin_serves_its_rows_subject_from_npm_and_checks_the_gold_file(tmp_path):
    """No mirror: the pinned row's subject is the npm release; the unpinned row is not in the subset."""
    [row] = _pinned_rows(tmp_path, [_express_pin()]).rows
    assert row.subject.kind == "npm" and (row.subject.name, row.subject.version) == ("express", "4.16.3")
    assert row.subject.verify_sha256 == {"lib/request.js": _express_pin()["gold_file_sha256"]["lib/request.js"]}
    root = SubjectStore(tmp_path / "subjects").materialize(row.subject, row.task.id)
    assert (root / "lib" / "request.js").read_text().splitlines()[75] == "  switch (lc) {"
    tampered = _express_pin() | {"gold_file_sha256": {"lib/request.js": "0" * 64}}
    [bad] = _pinned_rows(tmp_path / "tampered", [tampered]).rows
    with pytest.raises(SubjectIntegrityError, match="lib/request.js"):
        SubjectStore(tmp_path / "subjects2").materialize(bad.subject, bad.task.id)


@pytest.mark.parametrize(("pins", "message"), [
    (lambda p: [p, p | {"instance_id": "axios__axios-1"}], r"pins\.jsonl:2: field instance_id: axios__axios-1 is not a row"),
    (lambda p: [p, p], r"pins\.jsonl:2: field instance_id: expressjs__express-3495 is pinned twice \(line 1\)"),
    (lambda p: [p | {"subject": p["subject"] | {"kind": "git"}}], r"pins\.jsonl:1: field subject: "),
    (lambda p: [p | {"gold_file_sha256": {"lib/other.js": "0" * 64}}],
     r"rows\.jsonl:1: field patch: its registry pin has no gold_file_sha256 for gold files \['lib/request\.js'\]"),
])
def test_a_bad_pins_file_is_named_by_file_line_and_field(tmp_path, pins, message):
    with pytest.raises(ManifestError, match=message):
        _pinned_rows(tmp_path, pins(_express_pin()))


@pytest.mark.network
@pytest.mark.skipif(not (SHARED_DIR / "datasets" / "multi-swe-bench" / "rust.jsonl").is_file(),
                    reason=f"Multi-SWE-bench rows not found under {SHARED_DIR} (set LOCLAB_SHARED_DIR)")
@pytest.mark.parametrize(("dataset", "rows"), [("multi_swe_bench_js_ts_registry", 9), ("multi_swe_bench_rust_registry", 3)])
def test_the_registry_subsets_load_from_the_shared_rows_and_their_registries_hold_the_gold(dataset, rows, subject_cache):
    """Every pinned subject downloads and unpacks with every gold file's sha256 the base commit's."""
    if dataset.startswith("multi_swe_bench_rust") and __import__("shutil").which("apt-get") is None:
        pytest.skip("a Debian subject needs apt-get")
    manifest = build("dataset.loader", f"dataset={dataset}",
                     f"dataset.loader.path={SHARED_DIR / 'datasets' / 'multi-swe-bench' / Path(compose_config(f'dataset={dataset}').dataset.loader.path).name}")
    assert len(manifest.rows) == rows
    store = SubjectStore(subject_cache)
    for row in manifest.rows:
        root = store.materialize(row.subject, row.task.id)
        assert all((root / path).is_file() for path in row.gold.files)
