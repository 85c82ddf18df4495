"""Locators run on each language's registry-served demo set (Rust: clap 4.0.32 and Go: cobra 1.6.1 from
the Debian archive; TypeScript: rxjs 7.8.1, JavaScript: express 4.18.2 and Java: cordova-android 12.0.1 from the npm registry) in
one sweep logged to MLflow, their candidates the declared language's files; and registry subjects are
checked like every other (artifact sha256). Every configured locator that runs with the lexical
backend and no input file of its own sweeps every language's set."""

from __future__ import annotations

import json
import shutil

import pytest

from dataset.manifest import load_manifest
from dataset.subjects import SubjectIntegrityError, SubjectStore
from experiments.job.paths import PROJECT_ROOT
from tests.experiments.cli import Workspace


RUST_DEMO = PROJECT_ROOT / "datasets" / "demo_rust" / "manifest.jsonl"
# every locator YAML that runs with the lexical backend and no input file of its own (README, "Languages")
LOCATORS = ("bm25", "entities", "hybrid", "two_phase", "two_phase_retrieval", "file_runtime", "range_runtime",
            "ast_lane", "definition_reader", "semantic_zoom", "evidence_filter")


@pytest.mark.network
@pytest.mark.parametrize(("dataset", "language", "files"), [
    ("demo_rust", "rust", 100), ("demo_go", "go", 15), ("demo_typescript", "typescript", 200),
    ("demo_javascript", "javascript", 8), ("demo_java", "java", 40)])
def test_every_locator_runs_on_each_languages_demo_set_in_one_logged_sweep(tmp_path, subject_cache, dataset, language,
                                                                           files):
    locators = LOCATORS
    if dataset in ("demo_rust", "demo_go") and shutil.which("apt-get") is None:
        pytest.skip("a Debian subject needs apt-get")
    ws = Workspace(tmp_path / "ws", subject_cache)
    ws.create_store()
    proc = ws.run("experiments.run", f"dataset={dataset}", f"locator={','.join(locators)}", "limit=1", multirun=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = ws.jobs(f"loclab-{dataset}")
    assert sorted(j.data.tags["loclab.locator"] for j in jobs) == sorted(locators)
    assert all(j.info.status == "FINISHED" and "1 quality/file_acc_all_at_05" in j.data.metrics for j in jobs)
    for job in jobs:  # the language's own slice: here all of the job's tasks
        assert job.data.metrics[f"9 language/{language}/tasks"] == 1
        assert job.data.metrics[f"9 language/{language}/file_acc_all_at_05"] == job.data.metrics["1 quality/file_acc_all_at_05"]
    results = sorted((ws.root / "results").rglob("localization-result.json"))
    assert len(results) == len(locators)
    for path in results:
        sources = json.loads(path.read_text())["sources"]
        assert sources["languages"] == [language] and sources["declared"] and sources["candidate_files"] > files


@pytest.mark.network
@pytest.mark.skipif(shutil.which("apt-get") is None, reason="a Debian subject needs apt-get")
def test_a_debian_subject_with_the_wrong_sha256_fails_closed(tmp_path):
    [row, *_] = load_manifest(RUST_DEMO).rows
    tampered = row.subject.model_copy(update={"artifact_sha256": "0" * 64})
    with pytest.raises(SubjectIntegrityError, match="artifact sha256 mismatch"):
        SubjectStore(tmp_path / "cache").materialize(tampered, row.task.id)


def test_a_mirrors_folder_is_guarded_itself_and_a_rows_file_with_its_folder(tmp_path):
    """The worker may not read the data (rows, mirrors), but a mirrors folder's parent may hold the
    checkout and its grammar wheels, which the worker reads."""
    from experiments.job.config import compose_config
    from experiments.job.production import guarded_paths

    mirrors, rows = tmp_path / "work" / "mirrors", tmp_path / "data" / "rust.jsonl"
    mirrors.mkdir(parents=True)
    rows.parent.mkdir()
    rows.write_text("")
    cfg = compose_config("dataset=multi_swe_bench_rust", f"dataset.loader.path={rows}",
                         f"dataset.loader.git_mirrors={mirrors}")
    guarded = guarded_paths(cfg)
    assert str(mirrors) in guarded and str(rows.parent) in guarded and str(mirrors.parent) not in guarded


@pytest.mark.network
def test_an_npm_subject_with_the_wrong_sha256_fails_closed(tmp_path):
    [row, *_] = load_manifest(PROJECT_ROOT / "datasets" / "demo_typescript" / "manifest.jsonl").rows
    tampered = row.subject.model_copy(update={"artifact_sha256": "0" * 64})
    with pytest.raises(SubjectIntegrityError, match="artifact sha256 mismatch"):
        SubjectStore(tmp_path / "cache").materialize(tampered, row.task.id)
