"""Probes: repositories built to break a locator. Hostile entries are skipped and counted under a
skip reason; the locators run on what is left."""

from __future__ import annotations

import os

import pytest

from dataset.manifest import PypiSubject
from dataset.subjects import SubjectIntegrityError, SubjectStore
from locator.repository import RepositoryView
from locator.runtime import localize
from locator.system_one.client import SystemOne
from locator.task import SubjectIdentity, Task
from locator.trace import Trace
from tests.configs import backend, locator
from tests.conftest import write_tree
from tests.reliability.probes import CORE, TEXT

TASK = Task(id="t", text=TEXT, subject=SubjectIdentity(repository="r", revision="1"))


@pytest.fixture
def hostile(tmp_path):
    root = write_tree(tmp_path / "subject", {"pkg/core.py": CORE, "pkg/big.py": "x = 1\n" * 300_000,
                                             "pkg/blob.py": b"\x00\x01binary"})
    os.symlink(root / "pkg" / "loop_b", root / "pkg" / "loop_a")
    os.symlink(root / "pkg" / "loop_a", root / "pkg" / "loop_b")
    os.symlink("/etc/hostname", root / "pkg" / "outside.py")
    os.symlink(root, root / "pkg" / "back_to_root")
    (root / "pkg" / os.fsdecode(b"caf\xe9_config.py")).write_text("def parse_config():\n    return 1\n")
    return root


def test_a_hostile_tree_is_enumerated_with_every_skip_counted(hostile):
    view = RepositoryView(hostile)
    assert [f.path for f in view.files()] == ["pkg/core.py"]
    skipped = {reason.value: n for reason, n in view.skipped.items() if n}
    assert skipped == {"symlink_loop": 2, "symlink_outside_root": 1, "name_not_utf8": 1, "oversized": 1, "binary": 1}


@pytest.mark.parametrize("name", ["bm25", "two_phase"])
def test_locators_run_on_a_hostile_tree(hostile, name):
    trace = Trace()
    result = localize(locator(name), TASK, RepositoryView(hostile), SystemOne(backend("lexical"), "m"), trace)
    assert set(result.ranked_paths()) <= {"pkg/core.py"}  # nothing skipped is ever returned
    read = {e.data["path"] for e in trace.events if e.kind == "read"}
    assert read <= {"pkg/core.py"}


@pytest.mark.network
def test_a_tampered_non_gold_file_in_the_cache_fails_closed(tmp_path):
    spec = PypiSubject(requirement="itsdangerous==2.2.0", artifact="wheel",
                       artifact_filename="itsdangerous-2.2.0-py3-none-any.whl",
                       artifact_sha256="c6242fc49e35958c8b15141343aa660db5fc54d4f13a1db01a3f5891b98700ef",
                       path_map={"src/": ""})
    cache = tmp_path / "cache"
    root = SubjectStore(cache).materialize(spec, "t")
    SubjectStore._verified.clear()  # a new process
    assert SubjectStore(cache).materialize(spec, "t") == root  # untouched: reused
    (root / "src" / "itsdangerous" / "encoding.py").write_text("def want_bytes(s):\n    return s  # tampered\n")
    SubjectStore._verified.clear()
    with pytest.raises(SubjectIntegrityError, match="changed src/itsdangerous/encoding.py"):
        SubjectStore(cache).materialize(spec, "t")


@pytest.mark.network
def test_an_artifact_whose_name_differs_from_the_manifest_fails_closed(tmp_path):
    spec = PypiSubject(requirement="itsdangerous==2.2.0", artifact="wheel",
                       artifact_filename="itsdangerous-2.1.2-py3-none-any.whl", path_map={"src/": ""})
    with pytest.raises(SubjectIntegrityError, match="gave itsdangerous-2.2.0-py3-none-any.whl, the manifest names"):
        SubjectStore(tmp_path).materialize(spec, "t")
    assert not list((tmp_path / "subjects").rglob(".loclab-subject.json"))  # nothing cached

