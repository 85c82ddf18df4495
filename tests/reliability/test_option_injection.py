"""Probes: dataset fields that reach git's command line. A revision like `--output=X` must never be
read as an option (git would write a file), and a repository name must not escape the mirror folder."""

from __future__ import annotations

import subprocess

import pytest

from dataset.manifest import GitSubject, ManifestError
from dataset.subjects import SubjectError, SubjectStore
from tests.dataset.test_swebench import BASE_M, _git_row, _load, _write, mirror  # noqa: F401 - fixture


@pytest.mark.parametrize("revision", ["--output=PWNED", "-o", "a..b", "main.lock", "x y", "rev;rm"])
def test_a_row_whose_base_commit_is_not_a_revision_is_refused_naming_the_field(tmp_path, mirror, revision,
                                                                                 monkeypatch):
    repo, _ = mirror
    monkeypatch.chdir(tmp_path)
    path = _write(tmp_path, [_git_row(revision)])
    with pytest.raises(ManifestError, match=r"rows\.jsonl:1: field base_commit: .*not a commit id or ref name"):
        _load(path, mirrors=repo.parent)
    assert not (tmp_path / "PWNED").exists() and not (repo / "PWNED").exists()


@pytest.mark.parametrize("name", ["x//abs/path", "../org/pkg", "org/..", "org", "-o/pkg", "org/pkg/extra"])
def test_a_repository_name_that_could_leave_the_mirror_folder_is_refused(tmp_path, mirror, name):
    repo, base = mirror
    path = _write(tmp_path, [_git_row(base) | {"repo": name}])
    with pytest.raises(ManifestError, match=r"rows\.jsonl:1: field repo: .*owner/name"):
        _load(path, mirrors=repo.parent)


def test_a_branch_name_is_still_a_revision(tmp_path, mirror):
    repo, base = mirror
    subprocess.run(["git", "-C", str(repo), "branch", "release/1.0", base], check=True)
    [row] = _load(_write(tmp_path, [_git_row("release/1.0")]), mirrors=repo.parent).rows
    root = SubjectStore(tmp_path / "cache").materialize(row.subject, what=row.task.id)
    assert (root / "pkg" / "m.py").read_text() == BASE_M


def test_git_is_told_where_options_end_even_for_a_revision_that_slipped_past_validation(tmp_path, mirror,
                                                                                         monkeypatch):
    """Defence in depth: `git archive` gets `--end-of-options`, so an option-like revision is a revision."""
    repo, _ = mirror
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "PWNED.tar"
    spec = GitSubject.model_construct(kind="git", repository=str(repo), revision=f"--output={target}",
                                      verify_sha256={})
    with pytest.raises(SubjectError, match="git archive failed"):
        SubjectStore(tmp_path / "cache").materialize(spec, what="probe")
    assert not target.exists()


def test_a_loclab_manifest_git_subject_with_an_option_like_revision_is_refused():
    with pytest.raises(ValueError, match="not a commit id or ref name"):
        GitSubject.model_validate({"kind": "git", "repository": "/r", "revision": "--output=PWNED"})
