from __future__ import annotations

import hashlib
import json
import shutil
import subprocess

import pandas as pd
import pytest

from dataset.gold import check_gold
from dataset.manifest import ManifestError
from dataset.subjects import SubjectStore
from dataset.swebench import load_swebench
from locator.repository import RepositoryView
from locator.runtime import localize
from locator.trace import Trace
from tests.configs import locator as compose_locator

ROW = {
    "instance_id": "org__pkg-1",
    "repo": "org/pkg",
    "base_commit": "abc123",
    "patch": "--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -1,2 +1,2 @@\n-a = 1\n+a = 2\n b = 3\n",
    "problem_statement": "a should be 2",
    "hints_text": "look at m.py",
    "FAIL_TO_PASS": "[\"tests/test_m.py::test_a\"]",
    "split": "dev",
    "version": "1.0",
    "subject": {"kind": "pypi", "requirement": "pkg==1.0", "artifact": "wheel",
                "artifact_filename": "pkg-1.0-py3-none-any.whl", "artifact_sha256": "00", "path_map": {"": ""}},
    "gold_file_sha256": {"pkg/m.py": "ff"},
}


def _write(tmp_path, rows, suffix=".jsonl"):
    path = tmp_path / f"rows{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(rows))
    else:
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _load(path, mirrors=None, clone_url=None, cache_dir="."):
    return load_swebench(path, "t", "1", "d", mirrors, clone_url, cache_dir)


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_rows_become_tasks_with_gold_from_the_patch(tmp_path, suffix):
    manifest = _load(_write(tmp_path, [ROW], suffix))
    row = manifest.rows[0]
    assert row.task.id == "org__pkg-1" and row.task.text == "a should be 2"
    assert row.task.subject.revision == "abc123"
    assert "look at m.py" not in row.task.model_dump_json()
    assert "test_a" not in row.task.model_dump_json()
    assert row.gold.files == ["pkg/m.py"] and (row.gold.spans[0].start_line, row.gold.spans[0].end_line) == (1, 1)
    assert row.subject.verify_sha256 == {"pkg/m.py": "ff"}


def test_missing_field_names_file_line_and_field(tmp_path):
    broken = {k: v for k, v in ROW.items() if k != "patch"}
    path = _write(tmp_path, [ROW | {"instance_id": "ok-1"}, broken])
    with pytest.raises(ManifestError, match=r"rows\.jsonl:2: field patch: Field required"):
        _load(path)


def test_gold_file_without_hash_is_refused(tmp_path):
    path = _write(tmp_path, [ROW | {"gold_file_sha256": {}}])
    with pytest.raises(ManifestError, match="without gold_file_sha256"):
        _load(path)


def test_missing_file(tmp_path):
    with pytest.raises(ManifestError, match="not found"):
        _load(tmp_path / "absent.jsonl")


def test_the_shared_subset(swebench_file):
    manifest = _load(swebench_file)
    assert len(manifest.rows) == 50
    assert manifest.content_hash == _load(swebench_file).content_hash
    row = next(r for r in manifest.rows if r.task.id == "astropy__astropy-14182")
    # Checked by hand against the gold patch: "-    start_line = 3" is old line 30 of rst.py.
    assert (row.gold.spans[0].start_line, row.gold.spans[0].end_line) == (30, 30)
    assert {r.task.metadata["split"] for r in manifest.rows} == {"test", "dev"}
    assert (len(manifest.select(split="dev")), len(manifest.select(split="test"))) == (13, 37)


# --- git subjects: plain SWE-bench rows, resolved against a mirror folder -------------------------

def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def mirror(tmp_path):
    """A real repository, the way a user's clone of org/pkg sits in LOCLAB_GIT_MIRRORS."""
    repo = tmp_path / "mirrors" / "org__pkg"
    repo.mkdir(parents=True)
    _git(repo, "init", "--quiet")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "m.py").write_text(BASE_M)
    (repo / "pkg" / "other.py").write_text("def unrelated():\n    return 0\n")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    (repo / "pkg" / "m.py").write_text("alpha = 99\nbeta = 3\n")  # the branch moves on: base_commit must still be used
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-am", "later")
    return repo, base


BASE_M = "alpha = 1\nbeta = 3\n"
GIT_PATCH = "--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -1,2 +1,2 @@\n-alpha = 1\n+alpha = 2\n beta = 3\n"


def _git_row(base):
    return ({k: v for k, v in ROW.items() if k not in ("subject", "gold_file_sha256")}
            | {"base_commit": base, "patch": GIT_PATCH, "problem_statement": "alpha should be 2"})


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".parquet"])
def test_a_plain_swebench_row_is_a_git_subject_with_gold_hashes_from_the_checkout(tmp_path, mirror, suffix):
    repo, base = mirror
    if suffix == ".parquet":
        path = tmp_path / "rows.parquet"
        pd.DataFrame([_git_row(base)]).to_parquet(path)
    else:
        path = _write(tmp_path, [_git_row(base)], suffix)
    manifest = _load(path, mirrors=repo.parent)
    [row] = manifest.rows
    assert row.subject.kind == "git" and row.subject.revision == base and row.subject.repository == str(repo.resolve())
    assert row.subject.verify_sha256 == {"pkg/m.py": hashlib.sha256(BASE_M.encode()).hexdigest()}  # at base, not HEAD


def test_a_git_subject_materializes_at_base_commit_and_is_localized(tmp_path, mirror):
    repo, base = mirror
    manifest = _load(_write(tmp_path, [_git_row(base)]), mirrors=repo.parent)
    [row] = manifest.rows
    root = SubjectStore(tmp_path / "cache").materialize(row.subject, what=row.task.id)
    assert (root / "pkg" / "m.py").read_text() == BASE_M
    view = RepositoryView(root)
    check_gold(row.gold, lambda p: view.stat(p).line_count, what=row.task.id)
    result = localize(compose_locator("bm25"), row.task, view, None, Trace())
    assert result.ranked_paths()[0] == "pkg/m.py"


def test_owner_slash_name_mirrors_are_found_too(tmp_path, mirror):
    repo, base = mirror
    nested = tmp_path / "nested" / "org"
    nested.mkdir(parents=True)
    repo.rename(nested / "pkg")
    [row] = _load(_write(tmp_path, [_git_row(base)]), mirrors=tmp_path / "nested").rows
    assert row.subject.repository == str((nested / "pkg").resolve())


def test_a_clone_url_is_cloned_once_into_the_cache(tmp_path, mirror):
    repo, base = mirror
    remote = tmp_path / "remote" / "org" / "pkg.git"  # a served clone URL: file:// stands in for https://
    subprocess.run(["git", "clone", "--bare", "--quiet", str(repo), str(remote)], check=True)
    path = _write(tmp_path, [_git_row(base)])
    url = f"file://{tmp_path}/remote/{{repo}}.git"
    [row] = _load(path, clone_url=url, cache_dir=tmp_path / "cache").rows
    assert row.subject.repository == str(tmp_path / "cache" / "git" / "org__pkg.git")
    assert row.subject.verify_sha256["pkg/m.py"] == hashlib.sha256(BASE_M.encode()).hexdigest()
    shutil.rmtree(remote)  # cloned once: a second load needs the remote no more
    assert _load(path, clone_url=url, cache_dir=tmp_path / "cache").rows[0].subject == row.subject


def test_no_clone_is_an_error_naming_row_field_and_where_it_looked(tmp_path, mirror):
    _, base = mirror
    path = _write(tmp_path, [_git_row(base)])
    with pytest.raises(ManifestError, match=r"rows\.jsonl:1: field repo: no clone of org/pkg .*LOCLAB_GIT_MIRRORS"):
        _load(path, mirrors=tmp_path / "empty")


def test_a_gold_file_missing_at_base_commit_names_the_commit(tmp_path, mirror):
    repo, base = mirror
    row = _git_row(base) | {"patch": GIT_PATCH.replace("pkg/m.py", "pkg/absent.py")}
    with pytest.raises(ManifestError, match=rf"rows\.jsonl:1: field base_commit: gold file pkg/absent.py is not in {base}"):
        _load(_write(tmp_path, [row]), mirrors=repo.parent)


def test_no_rows_file_is_an_error_saying_how_to_give_one(monkeypatch):
    from experiments.job.config import build

    monkeypatch.delenv("LOCLAB_SWEBENCH_ROWS", raising=False)
    with pytest.raises(Exception) as caught:  # Hydra's instantiate wraps the loader's error
        build("dataset.loader", "dataset=swebench")
    assert "no rows file: set LOCLAB_SWEBENCH_ROWS or dataset.loader.path" in str(caught.value.__cause__ or caught.value)
