from __future__ import annotations

import os

import pytest

from locator.repository import (
    PathOutsideSubjectError,
    RepositoryView,
    SkipReason,
    UnknownFileError,
    normalize_relpath,
)
from tests.conftest import write_tree


@pytest.fixture
def repo(tmp_path):
    root = write_tree(
        tmp_path / "subject",
        {
            "pkg/a.py": "line1\nline2\nline3\n",
            "pkg/b.py": "no trailing newline",
            "pkg/data.bin": b"\x00\x01\x02binary",
            "pkg/latin1.py": "caf\xe9\n".encode("latin-1"),
            "big.py": "x = 1\n" * 200,
        },
    )
    outside = write_tree(tmp_path / "outside", {"secret.py": "TOKEN = 1\n"})
    os.symlink(outside / "secret.py", root / "pkg" / "link_out.py")
    os.symlink(outside, root / "linked_dir")
    os.symlink(root / "pkg" / "a.py", root / "pkg" / "link_in.py")
    return RepositoryView(root, max_file_bytes=1000)


def test_enumerates_text_files_and_counts_what_it_skips(repo):
    assert sorted(f.path for f in repo.files()) == ["pkg/a.py", "pkg/b.py", "pkg/link_in.py"]
    assert repo.skipped[SkipReason.BINARY] == 1
    assert repo.skipped[SkipReason.NOT_UTF8] == 1
    assert repo.skipped[SkipReason.OVERSIZED] == 1
    assert repo.skipped[SkipReason.SYMLINK_OUTSIDE_ROOT] == 2


def test_line_counts(repo):
    assert repo.stat("pkg/a.py").line_count == 3
    assert repo.stat("pkg/b.py").line_count == 1


def test_read_is_one_based_inclusive_clamped_and_counted(repo):
    assert repo.read("pkg/a.py", 2, 3).lines == ("line2\n", "line3\n")
    assert repo.read("pkg/a.py", 3, 99).lines == ("line3\n",)
    assert repo.read("pkg/a.py", 5, 9).lines == ()
    counters = repo.counters()
    assert (counters.reads, counters.lines, counters.bytes) == (3, 3, 18)


def test_an_outline_counts_only_the_signature_lines_handed_out(tmp_path):
    root = write_tree(tmp_path / "s", {"m.py": "import os\n\nclass A:\n    x = 1\n\n    def f(self):\n        return 1\n"})
    view = RepositoryView(root)
    outline = view.outline("m.py")
    assert [d.qualname for d in outline.definitions] == ["A", "A.f"]
    assert outline.signatures == {3: "class A:\n", 6: "    def f(self):\n"}
    assert (view.counters().reads, view.counters().lines) == (1, 2)


def test_the_view_has_no_unmetered_door(repo):
    # every public method that hands out file content is metered: read and outline
    assert not [name for name in dir(repo) if "unmetered" in name or name == "read_lines"]


@pytest.mark.parametrize("bad", ["../outside/secret.py", "/etc/passwd", "pkg/../../x.py"])
def test_paths_outside_the_root_are_refused(repo, bad):
    with pytest.raises(PathOutsideSubjectError):
        repo.read(bad)


def test_skipped_and_unknown_files_cannot_be_read(repo):
    with pytest.raises(UnknownFileError):
        repo.read("pkg/data.bin")
    with pytest.raises(UnknownFileError):
        repo.read("pkg/link_out.py")


def test_normalize_relpath():
    assert normalize_relpath("./a//b/../c.py") == "a/c.py"
    assert normalize_relpath("a\\b.py") == "a/b.py"


def test_start_line_must_be_positive(repo):
    with pytest.raises(ValueError):
        repo.read("pkg/a.py", 0, 1)


def test_index_work_is_charged_as_index_lines_not_as_lines_read(tmp_path):
    from locator.repository import SearchKind

    view = RepositoryView(write_tree(tmp_path / "s", {"pkg/a.py": "def alpha():\n    return 1\n", "pkg/b.py": "x = 1\n"}))
    assert view.index_read("pkg/a.py").lines == ("def alpha():\n", "    return 1\n")
    assert (view.counters().lines, view.counters().index_lines) == (0, 2)
    view.search("alpha", SearchKind.DEFINITION, max_hits=4, max_response_tokens=100)
    assert (view.counters().lines, view.counters().index_lines) == (1, 5)  # the hit's line; the index over both files
    view.search("alpha", SearchKind.DEFINITION, max_hits=4, max_response_tokens=100)
    assert view.counters().index_lines == 5  # built once per view
    view.search("x", SearchKind.TEXT, max_hits=4, max_response_tokens=100)
    assert view.counters().index_lines == 8  # a text search scans every indexed line


def test_views_of_a_frozen_tree_share_one_listing_and_meter_apart(tmp_path):
    """One listing per frozen tree; no lines shared: each view reads what it hands out itself, so no
    cache of subject lines outlives a view (a locator found another task's lines in the shared one)."""
    root = write_tree(tmp_path / "frozen", {"pkg/a.py": "one\ntwo\n", "pkg/b.bin": b"\x00"})
    first = RepositoryView(root, frozen=True)
    assert first.read("pkg/a.py").lines == ("one\n", "two\n")
    (root / "pkg" / "late.py").write_text("x\n")  # a frozen tree does not change: the listing is not walked again
    (root / "pkg" / "a.py").write_text("ONE\nTWO\n")  # so were its lines shared, a new view would show the old ones
    second = RepositoryView(root, frozen=True)
    assert [f.path for f in second.files()] == ["pkg/a.py"] and second.skipped[SkipReason.BINARY] == 1
    assert second.counters().lines == 0  # this view has handed out nothing
    assert second.read("pkg/a.py").lines == ("ONE\n", "TWO\n") and second.counters().lines == 2
    assert first.counters().lines == 2
    assert "pkg/late.py" in {f.path for f in RepositoryView(root).files()}  # a view of a live tree walks it


def test_a_frozen_trees_listing_is_kept_between_processes_and_remade_when_unreadable(tmp_path, monkeypatch):
    from locator import repository

    root = write_tree(tmp_path / "frozen", {"pkg/a.py": "one\ntwo\n", "pkg/b.bin": b"\x00"})
    RepositoryView(root, frozen=True, listing_dir=tmp_path / "derived")
    [saved] = (tmp_path / "derived").glob("listing-*.json")
    repository._LISTINGS.clear()  # a new process
    monkeypatch.setattr(RepositoryView, "_enumerate", lambda self: pytest.fail("a saved listing was walked again"))
    view = RepositoryView(root, frozen=True, listing_dir=tmp_path / "derived")
    assert [(f.path, f.line_count) for f in view.files()] == [("pkg/a.py", 2)] and view.skipped[SkipReason.BINARY] == 1
    assert view.read("pkg/a.py").lines == ("one\n", "two\n") and view.counters().lines == 2
    monkeypatch.undo()
    saved.write_text("{not json")
    repository._LISTINGS.clear()
    assert [f.path for f in RepositoryView(root, frozen=True, listing_dir=tmp_path / "derived").files()] == ["pkg/a.py"]
    assert '"schema_version": 2' in saved.read_text()  # made again


def test_only_cached_subjects_are_frozen():
    from dataset.manifest import LocalSubject, PypiSubject
    from dataset.subjects import SubjectStore

    assert not SubjectStore.frozen(LocalSubject.model_construct(path="."))
    assert SubjectStore.frozen(PypiSubject.model_construct())
