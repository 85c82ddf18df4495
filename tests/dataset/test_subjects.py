from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
import zipfile

import pytest

from dataset.manifest import GitSubject, LocalSubject, PypiSubject
from dataset import subjects
from dataset.subjects import SubjectError, SubjectIntegrityError, SubjectStore, _unpack
from tests.conftest import write_tree


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_local_subject_verified_in_place(tmp_path):
    root = write_tree(tmp_path / "repo", {"a.py": "x = 1\n"})
    store = SubjectStore(tmp_path / "cache", manifest_dir=tmp_path)
    assert store.materialize(LocalSubject(path="repo", verify_sha256={"a.py": _sha("x = 1\n")}), "t") == root


def test_hash_mismatch_fails_closed(tmp_path):
    write_tree(tmp_path / "repo", {"a.py": "x = 2\n"})
    store = SubjectStore(tmp_path / "cache", manifest_dir=tmp_path)
    with pytest.raises(SubjectIntegrityError, match="sha256 mismatch for 'a.py'"):
        store.materialize(LocalSubject(path="repo", verify_sha256={"a.py": _sha("x = 1\n")}), "t")
    with pytest.raises(SubjectIntegrityError, match="missing"):
        store.materialize(LocalSubject(path="repo", verify_sha256={"b.py": _sha("")}), "t")


def test_missing_local_directory(tmp_path):
    with pytest.raises(SubjectError, match="not a directory"):
        SubjectStore(tmp_path).materialize(LocalSubject(path=str(tmp_path / "nope")), "t")


def _git_repo(path):
    write_tree(path, {"pkg/m.py": "v = 1\n"})
    run = lambda *a: subprocess.run(["git", "-C", str(path), *a], check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    run("-c", "user.email=t@t", "-c", "user.name=t", "add", ".")
    run("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "one")
    first = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    (path / "pkg" / "m.py").write_text("v = 2\n")
    run("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "two")
    return first


def test_git_subject_exports_the_revision_not_the_work_tree(tmp_path):
    first = _git_repo(tmp_path / "upstream")
    store = SubjectStore(tmp_path / "cache")
    spec = GitSubject(repository=str(tmp_path / "upstream"), revision=first, verify_sha256={"pkg/m.py": _sha("v = 1\n")})
    root = store.materialize(spec, "t")
    assert (root / "pkg" / "m.py").read_text() == "v = 1\n"
    assert store.materialize(spec, "t") == root  # cached by content


def _cached_git_subject(tmp_path, monkeypatch):
    monkeypatch.setattr(subjects, "_RACY_NS", 0)  # the tree was just built: stamp it at once
    first = _git_repo(tmp_path / "upstream")
    spec = GitSubject(repository=str(tmp_path / "upstream"), revision=first)
    root = SubjectStore(tmp_path / "cache").materialize(spec, "t")
    SubjectStore._verified.clear()  # a new process
    return spec, root


def test_an_unwritten_cached_tree_is_vouched_for_by_its_stat_stamp(tmp_path, monkeypatch):
    spec, root = _cached_git_subject(tmp_path, monkeypatch)
    assert SubjectStore(tmp_path / "cache").materialize(spec, "t") == root  # hashed once, stamp written
    SubjectStore._verified.clear()
    monkeypatch.setattr(subjects, "tree_digest", lambda _: pytest.fail("an unchanged tree was hashed again"))
    assert SubjectStore(tmp_path / "cache").materialize(spec, "t") == root


def test_a_same_size_write_with_its_mtime_put_back_is_still_caught(tmp_path, monkeypatch):
    spec, root = _cached_git_subject(tmp_path, monkeypatch)
    SubjectStore(tmp_path / "cache").materialize(spec, "t")  # the stamp
    SubjectStore._verified.clear()
    time.sleep(0.05)  # a later tick of the file clock than the build's write
    target = root / "pkg" / "m.py"
    before = target.stat()
    target.chmod(0o644)  # a cached file is a read-only blob
    target.write_text("v = 9\n")  # same size
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))  # mtime back: only the ctime moved
    with pytest.raises(SubjectIntegrityError, match="changed pkg/m.py"):
        SubjectStore(tmp_path / "cache").materialize(spec, "t")


def test_a_tree_written_just_before_its_check_gets_no_stamp(tmp_path, monkeypatch):
    spec, root = _cached_git_subject(tmp_path, monkeypatch)
    monkeypatch.setattr(subjects, "_RACY_NS", 10**12)  # everything is "just written"
    SubjectStore(tmp_path / "cache").materialize(spec, "t")
    assert not list((tmp_path / "cache").rglob("tree-stat.json"))


def _history(path, revisions: int, files: int) -> list[str]:
    """A repository whose every revision changes two of its `files` modules; its revisions, oldest first."""
    run = lambda *a: subprocess.run(["git", "-C", str(path), "-c", "user.email=t@t", "-c", "user.name=t", *a],  # noqa: E731
                                    check=True, capture_output=True, text=True).stdout.strip()
    path.mkdir(parents=True)
    run("init", "-q")
    module = lambda i, r: "".join(f"def f{i}_{j}(x):\n    return x + {j}  # r{r}\n" for j in range(200))  # noqa: E731
    heads = []
    for r in range(revisions):
        changed = range(files) if r == 0 else (r % files, (r * 7) % files)
        write_tree(path, {f"pkg/m{i}.py": module(i, r) for i in changed} | {"pkg/__init__.py": ""})
        run("add", ".")
        run("commit", "-qm", f"r{r}")
        heads.append(run("rev-parse", "HEAD"))
    return heads


def _disk_bytes(roots) -> int:
    """Bytes on disk of every file under `roots`, a file held by several links counted once."""
    seen = {}
    for root in roots:
        for path in root.rglob("*"):
            st = path.lstat()
            if path.is_file() and not path.is_symlink():
                seen[(st.st_dev, st.st_ino)] = st.st_blocks * 512
    return sum(seen.values())


def test_revisions_of_one_repository_keep_each_distinct_file_once(tmp_path):
    heads = _history(tmp_path / "upstream", revisions=8, files=24)
    store = SubjectStore(tmp_path / "cache")
    trees = [store.materialize(GitSubject(repository=str(tmp_path / "upstream"), revision=h), "t") for h in heads]
    one = _disk_bytes([trees[0]])
    assert _disk_bytes(trees) <= 2 * one, "eight revisions that differ in two files each take more than twice one"
    for r, (head, tree) in enumerate(zip(heads, trees)):  # each tree is its own revision, checked on its own
        shown = subprocess.run(["git", "-C", str(tmp_path / "upstream"), "show", f"{head}:pkg/m{r % 24}.py"],
                               capture_output=True, text=True, check=True).stdout
        assert (tree / "pkg" / f"m{r % 24}.py").read_text() == shown
    SubjectStore._verified.clear()
    assert [store.materialize(GitSubject(repository=str(tmp_path / "upstream"), revision=h), "t") for h in heads] == trees


def test_a_write_to_a_shared_file_fails_every_tree_that_holds_it(tmp_path):
    heads = _history(tmp_path / "upstream", revisions=3, files=12)
    store = SubjectStore(tmp_path / "cache")
    specs = [GitSubject(repository=str(tmp_path / "upstream"), revision=h) for h in heads]
    trees = [store.materialize(spec, "t") for spec in specs]
    shared = trees[0] / "pkg" / "m5.py"  # changed by neither later revision
    assert shared.stat().st_ino == (trees[2] / "pkg" / "m5.py").stat().st_ino
    shared.chmod(0o644)
    shared.write_text(shared.read_text().replace("return x + 1 ", "return x - 1 "))
    SubjectStore._verified.clear()
    for spec in specs:
        with pytest.raises(SubjectIntegrityError, match="changed pkg/m5.py"):
            store.materialize(spec, "t")
    shutil.rmtree(trees[1].parent)  # rebuilt, the damaged blob is replaced, never linked
    rebuilt = store.materialize(specs[1], "t")
    assert "return x + 1 " in (rebuilt / "pkg" / "m5.py").read_text()


def test_git_unknown_revision_is_a_clear_error(tmp_path):
    _git_repo(tmp_path / "upstream")
    spec = GitSubject(repository=str(tmp_path / "upstream"), revision="deadbeef")
    with pytest.raises(SubjectError, match="git archive failed"):
        SubjectStore(tmp_path / "cache").materialize(spec, "t")


def test_archive_members_cannot_escape(tmp_path):
    evil = tmp_path / "evil-1.0-py3-none-any.whl"
    with zipfile.ZipFile(evil, "w") as archive:
        archive.writestr("../../escape.py", "boom")
    with pytest.raises(SubjectIntegrityError, match="escapes"):
        _unpack(evil, tmp_path / "out")
    assert not (tmp_path / "escape.py").exists()


ITSDANGEROUS = dict(
    requirement="itsdangerous==2.2.0",
    artifact="wheel",
    artifact_filename="itsdangerous-2.2.0-py3-none-any.whl",
    artifact_sha256="c6242fc49e35958c8b15141343aa660db5fc54d4f13a1db01a3f5891b98700ef",
    path_map={"src/": ""},
)
TIMED_SHA = "e91bc332a36e9863317f4f8796969974df4f51042646fad01a994a871ba2bd4b"


@pytest.mark.network
def test_pypi_wheel_is_downloaded_unpacked_mapped_and_verified(subject_cache):
    store = SubjectStore(subject_cache)
    root = store.materialize(PypiSubject(**ITSDANGEROUS, verify_sha256={"src/itsdangerous/timed.py": TIMED_SHA}), "t")
    assert (root / "src" / "itsdangerous" / "timed.py").is_file()
    assert not (root / "itsdangerous").exists()


@pytest.mark.network
def test_pypi_gold_hash_mismatch_fails_closed(subject_cache):
    store = SubjectStore(subject_cache)
    spec = PypiSubject(**ITSDANGEROUS, verify_sha256={"src/itsdangerous/timed.py": "0" * 64})
    with pytest.raises(SubjectIntegrityError, match="sha256 mismatch"):
        store.materialize(spec, "t")


@pytest.mark.network
def test_pypi_artifact_hash_mismatch_fails_closed(tmp_path):
    spec = PypiSubject(**(ITSDANGEROUS | {"artifact_sha256": "0" * 64}))
    with pytest.raises(SubjectIntegrityError, match="artifact sha256 mismatch"):
        SubjectStore(tmp_path).materialize(spec, "t")
    assert not list((tmp_path / "subjects" / "pypi").glob("*/.loclab-subject.json"))
